"""Two jobs whose GPU memory peak is not their need, for the captures of
testdata/nvml/h100-memory-holders (scripts/device/memory-holders.sh).

  cache    PyTorch: tensors of a slowly growing size, two alive at a time.
           Each new size fits no block the caching allocator kept, so it
           reserves more until the device is full, then frees its cache
           and goes on: the need is two tensors, the peak what the device
           had.
  prealloc The framework takes 75% of the memory it sees when it starts,
           as JAX does by default, then works in about 2 GiB. With JAX
           installed it is JAX itself; else TensorFlow; else PyTorch
           reserving that share through its cache (said on the
           MIGADVISOR_VERSION line).

--report-allocated prints the framework's own peak of allocated memory
(MIGADVISOR_METRIC peak_allocated_mib), as the user guide asks jobs to (docs/user/recommend.md#what-a-gpu-memory-figure-proves).
"""
import argparse
import sys
import time

GiB = 1 << 30


def cache(args):
    import torch

    print("MIGADVISOR_VERSION torch", torch.__version__, flush=True)
    live = []
    size = 64 << 20
    t0 = time.time()
    for i in range(args.steps):
        live.append(torch.empty(size, dtype=torch.uint8, device="cuda"))
        live[-1].fill_(i % 251)
        if len(live) > 2:
            live.pop(0)
        size += 2 << 20
    torch.cuda.synchronize()
    print(f"steps {args.steps} in {time.time() - t0:.1f} s; reserved now {torch.cuda.memory_reserved() / GiB:.2f} GiB", flush=True)
    print(f"MIGADVISOR_WORK {args.steps} steps", flush=True)
    if args.report_allocated:
        print(f"MIGADVISOR_METRIC peak_allocated_mib {torch.cuda.max_memory_allocated() / 2**20:.1f}", flush=True)
    print(f"MIGADVISOR_METRIC peak_reserved_mib {torch.cuda.max_memory_reserved() / 2**20:.1f}", flush=True)


def work_torch(torch, n):
    a = torch.randn(n, n, device="cuda")
    b = torch.randn(n, n, device="cuda")
    for _ in range(50):
        a = (a @ b).tanh_()
    torch.cuda.synchronize()


def prealloc(args):
    try:
        import jax
        import jax.numpy as jnp

        if jax.default_backend() != "gpu":
            raise ImportError("no GPU backend")
        print("MIGADVISOR_VERSION jax", jax.__version__, flush=True)
        x = jnp.ones((8192, 8192), dtype=jnp.float32)
        for _ in range(50):
            x = jnp.tanh(x @ x)
        x.block_until_ready()
        stats = jax.devices()[0].memory_stats()  # None under the platform allocator (--no-prealloc)
        if args.report_allocated and stats:
            print(f"MIGADVISOR_METRIC peak_allocated_mib {stats['peak_bytes_in_use'] / 2**20:.1f}", flush=True)
        return
    except ImportError:
        pass
    try:
        import tensorflow as tf

        if not tf.config.list_physical_devices("GPU"):
            raise ImportError("no GPU")
        print("MIGADVISOR_VERSION tensorflow", tf.__version__, flush=True)
        x = tf.ones((8192, 8192))
        for _ in range(50):
            x = tf.tanh(tf.matmul(x, x))
        _ = x.numpy()
        if args.report_allocated:
            peak = tf.config.experimental.get_memory_info("GPU:0")["peak"]
            print(f"MIGADVISOR_METRIC peak_allocated_mib {peak / 2**20:.1f}", flush=True)
        return
    except ImportError:
        pass
    import torch

    print("MIGADVISOR_VERSION torch", torch.__version__, "(75% of the free memory reserved at the start, as JAX does)", flush=True)
    free, _ = torch.cuda.mem_get_info()
    share = 0.75
    while share > 0.05:
        try:
            block = torch.empty(int(free * share), dtype=torch.uint8, device="cuda")
            break
        except torch.OutOfMemoryError:
            share -= 0.05
    print(f"reserved {share:.0%} of {free / GiB:.1f} GiB free at the start", flush=True)
    del block
    torch.cuda.reset_peak_memory_stats()
    work_torch(torch, 8192)
    print("MIGADVISOR_WORK 50 steps", flush=True)
    if args.report_allocated:
        print(f"MIGADVISOR_METRIC peak_allocated_mib {torch.cuda.max_memory_allocated() / 2**20:.1f}", flush=True)


def main():
    p = argparse.ArgumentParser()
    p.add_argument("job", choices=["cache", "prealloc"])
    p.add_argument("--steps", type=int, default=600)
    p.add_argument("--report-allocated", action="store_true")
    args = p.parse_args()
    {"cache": cache, "prealloc": prealloc}[args.job](args)


if __name__ == "__main__":
    sys.exit(main())
