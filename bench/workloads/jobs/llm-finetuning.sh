#!/bin/bash
#SBATCH --job-name=llm-finetuning
#SBATCH --chdir={{.Dir}}
#SBATCH --output=%x.%j.out
#SBATCH --ntasks=1
#SBATCH --cpus-per-task=1
#SBATCH --mem=4G
#SBATCH --time=04:00:00
#SBATCH {{.GPURequest}}

# migadvisor reference workload llm-finetuning (the Wulver suite).
# QLoRA fine-tuning of Qwen2.5-1.5B-Instruct on 1,000 alpaca-cleaned samples, 1 epoch.
# Needs Python 3 with PyTorch, transformers, peft and bitsandbytes; datasets and
# network access to Hugging Face for the real model and data (not with --synthetic).
{{- .Setup}}
{{.Python}} qlora_finetune.py --samples 1000 --epochs 1 --cache {{.Data}}{{.Args}}
