#!/bin/bash -l
#SBATCH --job-name="qlora qwen2.5-1.5b"
#SBATCH --output=%x_%j.out
#SBATCH --partition=gpu
#SBATCH --qos=standard
#SBATCH --account=abc123
#SBATCH --ntasks=1
#SBATCH --cpus-per-task=1
#SBATCH --gres=gpu:a100_40g:1,lscratch:50   # node-local scratch for the dataset cache
#SBATCH --time=1-00:00:00
#SBATCH --mem=4G
#SBATCH --mail-type=END,FAIL

# QLoRA fine-tuning of Qwen2.5-1.5B-Instruct on 1,000 alpaca-cleaned samples (PEFT + bitsandbytes).
module load Miniforge3
conda activate llm
python finetune_qlora.py \
    --model Qwen/Qwen2.5-1.5B-Instruct \
    --dataset yahma/alpaca-cleaned --samples 1000 --epochs 1
