#!/bin/bash
#SBATCH -p gpu -t 2:00:00
#SBATCH --gres=gpu:a100:1
#SBATCH --mem=4G
run
