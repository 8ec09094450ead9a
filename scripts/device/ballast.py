#!/usr/bin/env python3
"""A memory-streaming ballast: copies between two large device buffers
until killed, to take memory bandwidth (and L2) from another MPS client the
way a real MIG slice lacks them. Argument: MiB per buffer (default 2048)."""
import sys
import torch

mib = int(sys.argv[1]) if len(sys.argv) > 1 else 2048
x = torch.empty(mib << 18, device="cuda:0", dtype=torch.float32)
y = torch.empty_like(x)
print("ballast ready", flush=True)
while True:
    for _ in range(64):
        y.copy_(x)
    torch.cuda.synchronize()
