#!/usr/bin/env bash
# Distributed-style script with per-task GPUs and a CPU binding.
#SBATCH --job-name=ddp
#SBATCH --nodes=1
#SBATCH --ntasks-per-node=2
#SBATCH --gpus-per-task=1
#SBATCH --cpus-per-gpu=4
#SBATCH --mem-per-gpu=20G
#SBATCH --time=0-06:00

export MASTER_ADDR=$(hostname)
srun python -m torch.distributed.run --nproc_per_node=2 train.py
