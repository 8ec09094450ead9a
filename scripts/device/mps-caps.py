#!/usr/bin/env python3
"""What a process under MPS limits gets: SMs granted and memory it can allocate.

Run under a private MPS daemon with CUDA_MPS_ACTIVE_THREAD_PERCENTAGE and
CUDA_MPS_PINNED_DEVICE_MEM_LIMIT set; prints one CSV row: the SMs the
client sees, what torch reports as total and free memory, and how much it
could allocate in 64 MiB blocks before CUDA ran out of memory.
"""
import os, sys
import torch

props = torch.cuda.get_device_properties(0)
free, total = torch.cuda.mem_get_info(0)
blocks, mib = [], 64
try:
    while True:
        blocks.append(torch.empty(mib << 20, dtype=torch.uint8, device="cuda:0"))
except torch.OutOfMemoryError:
    pass
allocated = len(blocks) * mib
print(",".join([os.environ.get("CUDA_MPS_ACTIVE_THREAD_PERCENTAGE", "-"),
                os.environ.get("CUDA_MPS_PINNED_DEVICE_MEM_LIMIT", "-"),
                str(props.multi_processor_count), f"{total / 2**20:.0f}", f"{free / 2**20:.0f}", str(allocated)]), flush=True)
