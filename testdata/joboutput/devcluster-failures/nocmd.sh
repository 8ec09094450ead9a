#!/bin/bash
#SBATCH --job-name=fx-nocmd
#SBATCH --gres=gpu:a100_10g:1
#SBATCH --mem=64M
#SBATCH --time=00:02:00
echo "starting"
trainer --epochs 2
