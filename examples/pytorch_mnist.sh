#!/bin/bash -l
#SBATCH --job-name=mnist
#SBATCH --output=%x.%j.out
#SBATCH --error=%x.%j.err
#SBATCH --partition=gpu
#SBATCH --qos=standard
#SBATCH --account=abc123          # your PI's UCID
#SBATCH --nodes=1
#SBATCH --ntasks=1
#SBATCH --gres=gpu:a100_10g:1
#SBATCH --time=00:30:00
#SBATCH --mem-per-cpu=4000M

# A small CNN on MNIST: a few epochs, well under 1 GB of GPU memory.
module load Miniforge3
conda activate torch-cuda
srun python train_mnist.py --epochs 5 --batch-size 128
