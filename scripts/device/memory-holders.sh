#!/bin/bash
# The captures of testdata/nvml/h100-memory-holders: two jobs whose GPU
# memory peak is not their need (scripts/device/memory_holders.py), each
# under 'migadvisor emulate' (the four Wulver profiles on the whole GPU) and
# once on the whole GPU under the monitor, with the framework's own
# allocated peak. Run on the device from the repository's root with
# bin/migadvisor built; the results land in $OUT/<job>/.
set -u
out=/tmp/memory-holders
bin=$PWD/bin/migadvisor
py=$PWD/scripts/device/memory_holders.py
python3 -c 'import jax; print("jax", jax.__version__, jax.default_backend())' 2>&1 | tail -1
python3 -c 'import tensorflow as tf; print("tensorflow", tf.__version__)' 2>&1 | tail -1
for job in ${JOBS:-cache prealloc}; do
  echo "== $job under emulate"
  (cd /tmp && "$bin" --site wulver emulate --budget 120s --out "$out/$job" -- python3 "$py" "$job")
  echo "== $job on the whole GPU, with its allocated peak"
  (cd /tmp && "$bin" monitor --interval 200ms --out "$out/$job/whole.json" -- python3 "$py" "$job" --report-allocated) >"$out/$job/whole.out" 2>&1
  grep -h "MIGADVISOR_GPU\|MIGADVISOR_METRIC\|MIGADVISOR_VERSION\|reserved\|out of memory" "$out/$job"/*.out
done
pgrep -x nvidia-cuda-mps || echo "no MPS process left"
tar czf "${OUT:-/tmp}/memory-holders.tgz" -C /tmp memory-holders
