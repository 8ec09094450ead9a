#!/usr/bin/env python3
"""Measure what NVML's utilization says for jobs of known kinds.

Runs four PyTorch workloads for a few seconds each on GPU 0 while
nvidia-smi samples utilization.gpu and utilization.memory every 100 ms, and
prints one CSV row per workload: its mean utilizations and its throughput.
Used to ground the runtime model's one-profile prior (issue 20); run it on
an NVIDIA machine: python3 scripts/device/utilization.py > out.csv
"""
import subprocess, sys, time, statistics
import torch

SECONDS = float(sys.argv[1]) if len(sys.argv) > 1 else 6.0
dev = torch.device("cuda:0")


def gemm():
    a = torch.randn(8192, 8192, device=dev, dtype=torch.float16)
    b = torch.randn(8192, 8192, device=dev, dtype=torch.float16)
    def step():
        a @ b
    return step, 2 * 8192**3


def copy():
    x = torch.empty(1 << 30, device=dev, dtype=torch.float32)  # 4 GiB
    y = torch.empty_like(x)
    def step():
        y.copy_(x)
    return step, 2 * x.numel() * 4


def small_mlp():
    m = torch.nn.Sequential(torch.nn.Linear(256, 256), torch.nn.ReLU(), torch.nn.Linear(256, 10)).to(dev)
    opt = torch.optim.SGD(m.parameters(), lr=0.01)
    x = torch.randn(32, 256, device=dev)
    t = torch.randint(0, 10, (32,), device=dev)
    def step():
        opt.zero_grad()
        torch.nn.functional.cross_entropy(m(x), t).backward()
        opt.step()
    return step, 32


def gemm_with_cpu_work():
    a = torch.randn(4096, 4096, device=dev, dtype=torch.float16)
    def step():
        for _ in range(20):
            a @ a
        torch.cuda.synchronize()
        time.sleep(0.01)  # data loading on the CPU
    return step, 20 * 2 * 4096**3


def run(name, make):
    step, work = make()
    for _ in range(3):
        step()
    torch.cuda.synchronize()
    smi = subprocess.Popen(["nvidia-smi", "-i", "0", "--query-gpu=utilization.gpu,utilization.memory",
                            "--format=csv,noheader,nounits", "-lms", "100"], stdout=subprocess.PIPE, text=True)
    n, start = 0, time.time()
    while time.time() - start < SECONDS:
        step()
        n += 1
        if n % 16 == 0:
            torch.cuda.synchronize()
    torch.cuda.synchronize()
    elapsed = time.time() - start
    smi.terminate()
    out, _ = smi.communicate()
    rows = [tuple(float(v) for v in line.split(",")) for line in out.splitlines() if line.strip() and "," in line]
    rows = rows[3:-2] or rows  # drop the edges of the window
    g = statistics.mean(r[0] for r in rows)
    m = statistics.mean(r[1] for r in rows)
    print(f"{name},{g:.1f},{m:.1f},{len(rows)},{n * work / elapsed:.4g}", flush=True)


print(f"# {torch.cuda.get_device_name(0)}, torch {torch.__version__}")
print("workload,util_gpu_mean_pct,util_mem_mean_pct,samples,work_per_s")
for name, make in [("gemm_fp16_8192", gemm), ("copy_4gib", copy), ("small_mlp_batch32", small_mlp),
                   ("gemm_with_cpu_sleep", gemm_with_cpu_work)]:
    run(name, make)
