#!/bin/bash
#SBATCH -J short-opts -p gpu -q standard
#SBATCH -N1 -n4 -c2 -t 12:00:00
#SBATCH -G 1 -o out/%x-%j.log -e out/%x-%j.err
#SBATCH -A pi_lab
srun ./simulate --steps 1000
