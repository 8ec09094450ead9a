#!/usr/bin/env python3
#SBATCH --time=00:20:00
#SBATCH --gpus=1
#SBATCH --mem=8000
import torch
print(torch.cuda.get_device_name(0))
