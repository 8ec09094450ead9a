#!/bin/bash
#SBATCH --partition=gpu
#SBATCH --ntasks=4
#SBATCH --time=1:00:00
module load foo

#SBATCH --gres=gpu:a100:1
srun ./a.out
