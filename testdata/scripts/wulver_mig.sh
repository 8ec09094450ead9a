#!/bin/bash -l
#SBATCH --job-name=gpu_job
#SBATCH --output=%x.%j.out
#SBATCH --error=%x.%j.err
#SBATCH --partition=gpu
#SBATCH --qos=standard
#SBATCH --account=$PI_ucid         # Replace with PI's UCID
#SBATCH --nodes=1
#SBATCH --ntasks-per-node=8
#SBATCH --gres=gpu:a100_10g:1      # Change to 20g or 40g as needed
#SBATCH --time=59:00
#SBATCH --mem-per-cpu=4000M

srun ./myexe <input/output options>
