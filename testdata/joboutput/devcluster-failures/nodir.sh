#!/bin/bash
#SBATCH --job-name=fx-nodir
#SBATCH --gres=gpu:a100_10g:1
#SBATCH --mem=64M
#SBATCH --time=00:02:00
#SBATCH --output=/nonexistent/dir/%j.out
echo "hello"
