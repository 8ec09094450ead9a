#!/bin/bash -l
#SBATCH --job-name=gmx-benchmem
#SBATCH --output=%x.%j.out
#SBATCH --partition=gpu
#SBATCH --qos=standard
#SBATCH --account=abc123
#SBATCH --nodes=1
#SBATCH --ntasks-per-node=1
#SBATCH --cpus-per-task=4
#SBATCH --gpus-per-node=a100_20g:1
#SBATCH --time=01:00:00

module load foss/2023b GROMACS/2024.1-CUDA-12.4.0
export OMP_NUM_THREADS=4
gmx mdrun -s benchMEM.tpr -ntmpi 1 -ntomp 4 -nb gpu -pme gpu -bonded gpu -update gpu -nsteps 50000 -resethway
