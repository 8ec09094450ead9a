#!/bin/bash -l

# ---- resources ----
#SBATCH --job-name="bert finetune (v2)"   # quoted, with spaces
#SBATCH --output='logs/%x %j.out'
##SBATCH --gres=gpu:a100:1                 # disabled on purpose
#SBATCH --gres=gpu:a100_20g:1,lscratch:20
#SBATCH --time=1-12:00:00
#SBATCH --mem=32G --cpus-per-task=8 --mail-type=ALL --mail-user=me@example.edu

cd "$SLURM_SUBMIT_DIR"
python finetune.py --config "configs/bert base.yaml"
