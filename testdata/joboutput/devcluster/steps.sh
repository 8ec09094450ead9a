#!/bin/bash
#SBATCH -J fx-steps
#SBATCH --mem=600M -t 5 -n 2
srun -n 2 perl -e '$x = "a" x (60*1024*1024); sleep 4'
srun -n 1 perl -e '$x = "b" x (150*1024*1024); sleep 4'
