#!/bin/bash
#SBATCH --gres=gpu:a100_10g:1
#SBATCH --mem=0
#SBATCH --nodes=2
#SBATCH -t 60
srun ./a.out
