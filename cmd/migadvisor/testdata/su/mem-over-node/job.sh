#!/bin/bash
#SBATCH -p gpu -t 1:00:00
#SBATCH --gres=gpu:a100_10g:1
#SBATCH --mem=600G
run
