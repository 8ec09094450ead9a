set -u
export CUDA_MPS_PIPE_DIRECTORY=/tmp/mps-pipe CUDA_MPS_LOG_DIRECTORY=/tmp/mps-log
mkdir -p $CUDA_MPS_PIPE_DIRECTORY $CUDA_MPS_LOG_DIRECTORY
nvidia-cuda-mps-control -d; sleep 1
for job in 13 26 39; do
  echo "== job at $job% alone"
  CUDA_MPS_ACTIVE_THREAD_PERCENTAGE=$job python3 scripts/device/rates.py 3 | grep rate
  for ball in 50 87; do
    CUDA_MPS_ACTIVE_THREAD_PERCENTAGE=$ball python3 scripts/device/ballast.py 2048 > /tmp/ballast.log 2>&1 &
    bp=$!
    for i in $(seq 1 30); do grep -q ready /tmp/ballast.log && break; sleep 1; done
    echo "== job at $job% with a ballast at $ball%"
    CUDA_MPS_ACTIVE_THREAD_PERCENTAGE=$job python3 scripts/device/rates.py 3 | grep rate
    kill $bp; wait $bp 2>/dev/null
  done
done
echo quit | nvidia-cuda-mps-control; sleep 1
