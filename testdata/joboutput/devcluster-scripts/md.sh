#!/bin/bash
#SBATCH --gres=gpu:a100_40g:1
#SBATCH --mem=200M
#SBATCH --time=00:05:00
#SBATCH --array=1-2
echo "md step $SLURM_ARRAY_TASK_ID"
sleep 1
