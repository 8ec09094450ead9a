#!/bin/bash
#SBATCH --partition=gpu
#SBATCH --gres=gpu:a100_10g:1
#SBATCH --ntasks=200
#SBATCH --time=4-00:00:00
srun ./a.out
