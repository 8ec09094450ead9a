#!/bin/bash
#SBATCH -J fx-gpuoom
#SBATCH --gres=gpu:a100_10g:1
#SBATCH --mem=64M -t 5
sleep 6
cat >&2 <<'MSG'
Traceback (most recent call last):
  File "train.py", line 42, in <module>
torch.OutOfMemoryError: CUDA out of memory. Tried to allocate 2.00 GiB. GPU 0 has a total capacity of 9.50 GiB of which 1.20 GiB is free. Including non-PyTorch memory, this process has 8.30 GiB memory in use. Of the allocated memory 7.90 GiB is allocated by PyTorch, and 120.00 MiB is reserved by PyTorch but unallocated. If reserved but unallocated memory is large try setting PYTORCH_CUDA_ALLOC_CONF=expandable_segments:True to avoid fragmentation.  See documentation for Memory Management  (https://pytorch.org/docs/stable/notes/cuda.html#environment-variables)
MSG
exit 1
