#!/bin/bash
#SBATCH --gres=gpu:a100:1
#SBATCH --time=5
python train.py
