#!/bin/bash -l
#SBATCH --job-name=two-slices
#SBATCH --partition=gpu
#SBATCH --qos=standard
#SBATCH --account=abc123
#SBATCH --ntasks=2
#SBATCH --gres=gpu:a100_10g:2     # two 10G slices: a CUDA process sees only one of them
#SBATCH --time=04:00:00

srun --ntasks=2 python inference_shard.py --shard "$SLURM_PROCID"
