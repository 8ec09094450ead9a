#!/bin/bash
#SBATCH -p gpu -t 1:00:00
#SBATCH --gres=gpu:a100:1
torchrun --nproc_per_node=4 train.py
