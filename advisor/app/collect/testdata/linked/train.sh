#!/bin/bash
#SBATCH --job-name=fxtrain
#SBATCH --partition=gpu
#SBATCH --gres=gpu:a100_10g:1
#SBATCH --mem=64M
#SBATCH --time=1
#SBATCH --output=logs/%x-%j.out
#SBATCH --error=logs/%x-%j.err
echo "epoch 1/3: loss 0.6931"
echo "torch.OutOfMemoryError: CUDA out of memory. Tried to allocate 2.00 GiB. GPU 0 has a total capacity of 9.50 GiB of which 1.20 GiB is free. Including non-PyTorch memory, this process has 8.30 GiB memory in use. Of the allocated memory 7.90 GiB is allocated by PyTorch, and 120.00 MiB is reserved by PyTorch but unallocated." >&2
exit 1
