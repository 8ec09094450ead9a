#!/bin/bash
#SBATCH --partition=gpu
#SBATCH --gres=gpu:a100_10g:1
#SBATCH -t 60
srun ./a.out
