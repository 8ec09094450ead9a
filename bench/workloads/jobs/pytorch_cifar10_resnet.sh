#!/bin/bash
#SBATCH --job-name=pytorch_cifar10_resnet
#SBATCH --chdir={{.Dir}}
#SBATCH --output=%x.%j.out
#SBATCH --ntasks=1
#SBATCH --cpus-per-task=1
#SBATCH --mem=4G
#SBATCH --time=01:00:00
#SBATCH {{.GPURequest}}

# migadvisor reference workload pytorch_cifar10_resnet (the Wulver suite).
# CIFAR10 ResNet: residual blocks on CIFAR-10 (3x32x32 colour images), 10 epochs.
# Needs Python 3 with PyTorch; torchvision to download the data (not with --synthetic).
{{- .Setup}}
{{.Python}} vision_train.py --model resnet --dataset cifar10 --epochs 10 --data {{.Data}}{{.Args}}
