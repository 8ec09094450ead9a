#!/bin/bash
# Emulates Wulver's four MIG profiles on the device's whole GPU for some of
# the reference workloads (bench/workloads, --synthetic: the device has no
# network), each under 'migadvisor emulate': the record, each profile's
# output and monitor summary land in $OUT/<workload>/. Usage:
#   scripts/device/emulate-workloads.sh WORKLOAD...   (matmul fp16 stream llm mnist deepcnn resnet)
# Each workload runs on $CPUS CPUs (default 1, as Wulver's jobs asked for),
# from the second on (the first takes the machine's interrupts), as a Slurm
# job's cgroup would hold it.
set -u
out=${OUT:-/tmp/emulate-workloads}
files=$PWD/bench/workloads/files
bin=$PWD/bin/migadvisor
budget=${BUDGET:-150s}
cpus=${CPUS:-1}
for w in "$@"; do
  case $w in
    matmul) cmd=(python3 "$PWD/scripts/device/rates.py" 3) ;;
    fp16) cmd=(python3 "$PWD/scripts/device/rates.py" 6 fp16) ;;
    stream) cmd=(python3 "$PWD/scripts/device/rates.py" 4 copy,triad) ;;
    llm) cmd=(python3 "$files/qlora_finetune.py" --synthetic --cache /tmp/llm-cache --samples 160) ;;
    mnist) cmd=(python3 "$files/vision_train.py" --synthetic --model simplecnn --dataset mnist --epochs 1 --batch-size 64 --test-samples 2000) ;;
    deepcnn) cmd=(python3 "$files/vision_train.py" --synthetic --model deepcnn --dataset cifar10 --epochs 1 --test-samples 2000) ;;
    resnet) cmd=(python3 "$files/vision_train.py" --synthetic --model resnet --dataset cifar10 --epochs 1 --test-samples 2000) ;;
    *) echo "unknown workload $w" >&2; exit 2 ;;
  esac
  cmd=(taskset -c "1-$cpus" "${cmd[@]}")
  echo "== $w: ${cmd[*]}"
  start=$(date +%s)
  (cd /tmp && "$bin" --site wulver emulate --budget "$budget" --out "$out/$w" -- "${cmd[@]}")
  echo "== $w took $(( $(date +%s) - start )) s"
  grep -h "MIGADVISOR_METRIC \(training_time_s\|tokens_per_s\|samples_per_s\)\|^rate\|^sms" "$out/$w"/*.out
done
pgrep -x nvidia-cuda-mps || echo "no MPS process left"
