#!/bin/bash
#SBATCH --gres=gpu:a100_20g:1
#SBATCH -p gpu

# A blank line above, a line of dashes below.
# ----------------------------------------
echo "Batch Script for 99"
