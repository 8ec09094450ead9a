#!/bin/bash
#SBATCH --job-name=embed-docs
#SBATCH --ntasks=1
#SBATCH --cpus-per-task=2
#SBATCH --time=3:00:00

# Asks for no GPU at all: a sweep adds each profile's request.
python embed.py --input docs.jsonl --output embeddings.npy
#SBATCH --gres=gpu:1   # too late: sbatch ignores directives after the first command
