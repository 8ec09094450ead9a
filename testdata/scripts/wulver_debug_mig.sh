#!/bin/bash -l
#SBATCH --job-name=debug_mig
#SBATCH --partition=debug_gpu
#SBATCH --qos=debug
#SBATCH --gres=gpu:a100_10g:1      # Change to 20g or 40g as needed
#SBATCH --time=59:00 # Debug_gpu partition has a 12 hour walltime limit

python torch_tensor.py
