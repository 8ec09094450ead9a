#!/bin/bash
#SBATCH --partition=gpu
#SBATCH --gres=gpu:a100_10g:1
#SBATCH --mem=0
#SBATCH --time=1:00:00
srun ./a.out
