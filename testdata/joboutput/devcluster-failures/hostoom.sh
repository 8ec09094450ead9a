#!/bin/bash
#SBATCH --job-name=fx-hostoom
#SBATCH --gres=gpu:a100_10g:1
#SBATCH --mem=200M
#SBATCH --time=00:02:00
perl -e 'my @a; for (1..60) { push @a, "x" x (8*1024*1024); select(undef, undef, undef, 0.2) }'
echo "still here"
