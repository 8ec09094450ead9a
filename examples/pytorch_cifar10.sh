#!/bin/bash
#SBATCH -J cifar10-resnet
#SBATCH -p gpu -q standard -A abc123
#SBATCH -N1 -n1 -c4
#SBATCH --gres=gpu:a100_20g:1
#SBATCH -t 2:00:00
#SBATCH --mem=16G
#SBATCH -o logs/%x-%j.out

set -euo pipefail
module load Miniforge3
conda activate torch-cuda
export OMP_NUM_THREADS=$SLURM_CPUS_PER_TASK
python train_cifar10.py --model resnet18 --epochs 30 --workers "$SLURM_CPUS_PER_TASK"
