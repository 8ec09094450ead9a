#!/bin/bash
#SBATCH --job-name=fxsweep
#SBATCH --partition=gpu
#SBATCH --gres=gpu:a100_20g:1
#SBATCH --mem=64M
#SBATCH --time=1
#SBATCH --array=0-1
#SBATCH -o logs/%x_%A_%a.out
#SBATCH -e logs/%x_%A_%a.err
echo "MIGADVISOR_METRIC acc 0.9$SLURM_ARRAY_TASK_ID"
echo "done task $SLURM_ARRAY_TASK_ID" >&2
