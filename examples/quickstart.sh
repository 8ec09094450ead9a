#!/bin/bash
#SBATCH --job-name=quickstart
#SBATCH --output=%x-%j.out
#SBATCH --partition=gpu
#SBATCH --qos=standard
#SBATCH --account=abc123          # your PI's account (abc123 on the dev cluster)
#SBATCH --ntasks=1
#SBATCH --cpus-per-task=1
#SBATCH --mem=2G
# A whole A100, as many jobs ask for: more than this one needs.
#SBATCH --gres=gpu:a100:1
#SBATCH --time=00:10:00

# The quick start's job: it needs nothing but python3, so it runs on any
# Slurm node. With PyTorch and a GPU it multiplies matrices on the GPU and
# reports the memory it allocated; otherwise (a node without CUDA, or the
# dev cluster's fake GPUs) it does the same number of steps on the CPU.
# Either way it prints the work it did as a MIGADVISOR_WORK line, which
# 'migadvisor recommend' turns into SU per unit of work.
#
#   sbatch examples/quickstart.sh [STEPS]      (default 400 steps)

python3 - "${1:-400}" <<'EOF'
import sys
import time

steps = int(sys.argv[1])
start = time.time()

try:
    import torch
    gpu = torch.cuda.is_available()
except ImportError:
    gpu = False

if gpu:
    # 4096x4096 weights and a batch of 2048 rows: about 200 MiB allocated.
    device = torch.device("cuda")
    w = torch.randn(4096, 4096, device=device)
    x = torch.randn(2048, 4096, device=device)
    for _ in range(steps):
        x = torch.tanh(x @ w) * 0.5
    torch.cuda.synchronize()
    where = torch.cuda.get_device_name(device)
    print(f"MIGADVISOR_METRIC peak_allocated_mib {torch.cuda.max_memory_allocated() / 2**20:.0f}")
else:
    # A 64x64 matrix product in plain Python per step: about 20 ms each.
    n = 64
    a = [[((i * j) % 7) / 7.0 for j in range(n)] for i in range(n)]
    for _ in range(steps):
        a = [[sum(x * y for x, y in zip(row, col)) / n for col in zip(*a)] for row in a]
    where = "CPU (no CUDA device)"

print(f"{steps} steps on {where} in {time.time() - start:.1f} s")
print(f"MIGADVISOR_WORK {steps} steps")
EOF
