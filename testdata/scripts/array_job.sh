#!/bin/bash
#SBATCH --array=0-9%4
#SBATCH --job-name=sweep-lr
#SBATCH --output=%x_%A_%a.out
#SBATCH --partition=gpu
#SBATCH --gres=gpu:a100_10g:1
#SBATCH --time=45
LR=$(python -c "print(10 ** -(1 + $SLURM_ARRAY_TASK_ID / 3))")
python train.py --lr "$LR"
