#!/bin/bash
#SBATCH -J fx-timeout
#SBATCH --gres=gpu:a100:1
#SBATCH --mem=64M -t 1
sleep 600
