#!/bin/bash
#SBATCH -p general -t 1:00:00
#SBATCH --ntasks=200
run
