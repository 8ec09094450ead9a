#!/bin/bash
#SBATCH --job-name=fx-timeout
#SBATCH --gres=gpu:a100_10g:1
#SBATCH --mem=64M
#SBATCH --time=1
sleep 300
