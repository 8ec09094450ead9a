#!/bin/bash
#SBATCH --partition=general
#SBATCH --ntasks=8
#SBATCH --mem=64G
#SBATCH --time=2:00:00
srun ./a.out
