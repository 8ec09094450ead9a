#!/bin/bash
#SBATCH --job-name=pytorch_mnist_simplecnn
#SBATCH --chdir={{.Dir}}
#SBATCH --output=%x.%j.out
#SBATCH --ntasks=1
#SBATCH --cpus-per-task=1
#SBATCH --mem=4G
#SBATCH --time=00:30:00
#SBATCH {{.GPURequest}}

# migadvisor reference workload pytorch_mnist_simplecnn (the Wulver suite).
# MNIST Simple CNN: a small CNN on MNIST (1x28x28 grayscale digits), 5 epochs of batches of 64.
# Needs Python 3 with PyTorch; torchvision to download the data (not with --synthetic).
{{- .Setup}}
{{.Python}} vision_train.py --model simplecnn --dataset mnist --epochs 5 --batch-size 64 --data {{.Data}}{{.Args}}
