#!/bin/bash
#SBATCH -J "fx array|odd"
#SBATCH --mem=64M -t 5 -c 1
#SBATCH --array=1-3%2
#SBATCH -o fx_%A_%a.out
sleep 6
echo "MIGADVISOR_WORK $SLURM_ARRAY_TASK_ID items"
