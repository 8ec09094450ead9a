#!/bin/bash
#SBATCH -J fx-complete
#SBATCH --gres=gpu:a100_10g:1
#SBATCH --mem=300M -t 5
perl -e '$x = "a" x (100*1024*1024); sleep 6'
echo "MIGADVISOR_WORK 1200 samples"
echo "MIGADVISOR_METRIC accuracy 97.5"
