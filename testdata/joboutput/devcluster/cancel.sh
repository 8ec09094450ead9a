#!/bin/bash
#SBATCH -J fx-cancel
#SBATCH --gres=gpu:a100_20g:1
#SBATCH --mem=64M -t 5
sleep 600
