#!/bin/bash
#SBATCH -J fx-hostoom
#SBATCH --gres=gpu:a100_40g:1
#SBATCH --mem=50M -t 5
perl -e '$|=1; my @a; for (1..40) { push @a, "x" x (8*1024*1024); select(undef,undef,undef,0.25) }'
echo after
