#!/bin/bash
#SBATCH -J fx-het --mem=64M -t 5
#SBATCH hetjob
#SBATCH --mem=64M -c 2
sleep 6
