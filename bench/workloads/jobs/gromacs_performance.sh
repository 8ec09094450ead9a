#!/bin/bash
#SBATCH --job-name=gromacs_performance
#SBATCH --chdir={{.Dir}}
#SBATCH --output=%x.%j.out
#SBATCH --nodes=1
#SBATCH --ntasks=1
#SBATCH --cpus-per-task=4
#SBATCH --mem=16G
#SBATCH --time=01:00:00
#SBATCH {{.GPURequest}}

# migadvisor reference workload gromacs_performance (the Wulver suite).
# GROMACS mdrun on the benchMEM input (82k atoms), all on the GPU, 4 OpenMP threads.
# Needs a CUDA build of GROMACS (gmx or gmx_mpi on PATH, or GMX); curl and unzip
# to fetch benchMEM (not with --synthetic, which builds a water box instead).
{{- .Setup}}
bash gromacs_bench.sh --threads 4{{.Args}}
