#!/usr/bin/env python3
"""Throughput of up to four kernels (argv[2], comma-separated; all by default) on the GPU this process sees: fp16 and tf32
matrix products (8192²), a 1 GiB device copy and a triad (a = b + 2c over
1 GiB arrays: an elementwise kernel, bound by bandwidth), a few seconds each; one
line each, "rate KIND VALUE UNIT". Run under 'migadvisor emulate' to see
how an emulated slice compares with the whole GPU (and with Wulver's
published matrix-multiplication table, measured on real A100 slices).
"""
import sys, time
import torch

SECONDS = float(sys.argv[1]) if len(sys.argv) > 1 else 3.0
KINDS = sys.argv[2].split(",") if len(sys.argv) > 2 else ["fp16", "tf32", "copy", "triad"]
dev = torch.device("cuda:0")
torch.backends.cuda.matmul.allow_tf32 = True
print("sms", torch.cuda.get_device_properties(0).multi_processor_count, flush=True)

def rate(step, work):
    for _ in range(3):
        step()
    torch.cuda.synchronize()
    n, start = 0, time.time()
    while time.time() - start < SECONDS:
        step()
        n += 1
        if n % 8 == 0:
            torch.cuda.synchronize()
    torch.cuda.synchronize()
    return n * work / (time.time() - start)

for name, dtype in (("fp16", torch.float16), ("tf32", torch.float32)):
    if name not in KINDS:
        continue
    a = torch.randn(8192, 8192, device=dev, dtype=dtype)
    b = torch.randn(8192, 8192, device=dev, dtype=dtype)
    print("rate", name, f"{rate(lambda: a @ b, 2 * 8192**3) / 1e12:.2f}", "TFLOPs", flush=True)
    del a, b
x = torch.empty(1 << 28, device=dev, dtype=torch.float32)
y = torch.empty_like(x)
z = torch.empty_like(x)
if "copy" in KINDS:
    print("rate copy", f"{rate(lambda: y.copy_(x), 2 * x.numel() * 4) / 1e9:.0f}", "GB/s", flush=True)
if "triad" in KINDS:
    print("rate triad", f"{rate(lambda: torch.add(x, y, alpha=2.0, out=z), 3 * x.numel() * 4) / 1e9:.0f}", "GB/s", flush=True)
