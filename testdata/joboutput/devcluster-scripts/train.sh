#!/bin/bash
#SBATCH --gres=gpu:a100:1
#SBATCH --cpus-per-task=1
#SBATCH --mem=200M
#SBATCH --time=00:05:00
# A training run: the same script under two job names.
echo "Loading checkpoint shards: 100%|##########| 2/2 [00:03<00:00,  1.62s/it]"
echo "{'loss': 1.8732, 'grad_norm': 0.4512, 'learning_rate': 0.0002, 'epoch': 0.33}"
sleep 2
