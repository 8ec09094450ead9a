#!/bin/bash
#SBATCH --partition=gpu --exclusive
#SBATCH --gres=gpu:a100:4
#SBATCH --time=3-00:00:00
srun ./big_model
