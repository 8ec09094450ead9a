#!/bin/bash
# GROMACS benchmark for migadvisor's reference workloads (Wulver's "GROMACS").
#
#   gromacs_bench.sh [--synthetic] [--tpr FILE] [--nsteps N] [--threads N] [--cpu]
#
# By default it runs the standard benchMEM input (MPI-NAT's GROMACS benchmark
# set: 82k atoms, a membrane protein in water): benchMEM.tpr in the current
# directory, else $BENCHMEM_URL downloaded and unpacked here once. --synthetic
# downloads nothing: it builds a box of SPC/E water (about 21k atoms) with
# gmx solvate and gmx grompp from the force fields GROMACS ships. Either way
# the run is all on the GPU (-nb/-pme/-bonded/-update gpu) with one thread-MPI
# rank and --threads OpenMP threads (default: the job's CPUs), timed over the
# second half (-resethway); --cpu keeps it all on the CPU, to check a setup
# on a machine without a GPU. It prints what migadvisor reads:
#
#   MIGADVISOR_WORK <ns simulated in the timed half> ns
#   MIGADVISOR_METRIC ns_per_day | wall_s | mpi_ranks | omp_threads
#   MIGADVISOR_VERSION gromacs <version>
#
# $GMX names the gmx binary (default: gmx, else gmx_mpi).
set -euo pipefail

synthetic=0 on=gpu tpr= nsteps=50000 threads=${SLURM_CPUS_PER_TASK:-${OMP_NUM_THREADS:-4}}
: "${BENCHMEM_URL:=https://www.mpinat.mpg.de/632210/benchMEM.zip}"
while [ $# -gt 0 ]; do
  case $1 in
    --synthetic) synthetic=1 ;;
    --cpu) on=cpu ;;
    --tpr) tpr=$2; shift ;;
    --nsteps) nsteps=$2; shift ;;
    --threads) threads=$2; shift ;;
    *) echo "gromacs_bench.sh: unknown argument $1" >&2; exit 2 ;;
  esac
  shift
done

gmx=${GMX:-}
if [ -z "$gmx" ]; then
  for g in gmx gmx_mpi; do command -v "$g" >/dev/null && { gmx=$g; break; }; done
fi
if [ -z "$gmx" ]; then
  echo "gromacs_bench.sh: no gmx on PATH; load the site's GROMACS module (see bench/workloads/README.md) or set GMX" >&2
  exit 1
fi
echo "MIGADVISOR_VERSION gromacs $("$gmx" --version 2>/dev/null | sed -n 's/^ *GROMACS version: *//p' | head -n1)"

if [ "$synthetic" = 1 ]; then
  work=$(mktemp -d "${TMPDIR:-/tmp}/gromacs-water.XXXXXX")
  trap 'rm -rf "$work"' EXIT
  cat >"$work/topol.top" <<'TOP'
#include "oplsaa.ff/forcefield.itp"
#include "oplsaa.ff/spce.itp"

[ system ]
SPC/E water

[ molecules ]
TOP
  cat >"$work/md.mdp" <<'MDP'
integrator      = md
dt              = 0.002
nsteps          = 50000
cutoff-scheme   = Verlet
coulombtype     = PME
rcoulomb        = 1.0
rvdw            = 1.0
tcoupl          = v-rescale
tc-grps         = System
tau-t           = 0.1
ref-t           = 300
gen-vel         = yes
gen-temp        = 300
constraints     = h-bonds
nstlog          = 5000
nstenergy       = 5000
MDP
  (cd "$work" && "$gmx" -quiet solvate -cs spc216.gro -box 6 6 6 -o water.gro -p topol.top >solvate.log 2>&1 &&
    "$gmx" -quiet grompp -f md.mdp -c water.gro -p topol.top -o water.tpr -maxwarn 1 >grompp.log 2>&1) ||
    { cat "$work"/*.log >&2; echo "gromacs_bench.sh: could not build the water box" >&2; exit 1; }
  tpr=$work/water.tpr
elif [ -z "$tpr" ]; then
  tpr=benchMEM.tpr
  if [ ! -f "$tpr" ]; then
    echo "gromacs_bench.sh: downloading benchMEM from $BENCHMEM_URL" >&2
    curl -fsSL -o benchMEM.zip "$BENCHMEM_URL" && unzip -o -q benchMEM.zip benchMEM.tpr ||
      { echo "gromacs_bench.sh: no benchMEM.tpr; put it here, pass --tpr FILE, or use --synthetic" >&2; exit 1; }
  fi
fi

log=$(mktemp "${TMPDIR:-/tmp}/gromacs-md.XXXXXX")
export OMP_NUM_THREADS=$threads
"$gmx" mdrun -s "$tpr" -deffnm "$log" -noconfout -ntmpi 1 -ntomp "$threads" \
  -nb "$on" -pme "$on" -bonded "$on" -update "$on" -nsteps "$nsteps" -resethway
# "Performance:  <ns/day>  <hour/ns>" and "Time:  <core s>  <wall s>  <%>"
perf=$(awk '/^Performance:/ {print $2}' "$log.log")
wall=$(awk '/^ *Time:/ {print $3}' "$log.log")
rm -f "$log" "$log".*
if [ -z "$perf" ] || [ -z "$wall" ]; then
  echo "gromacs_bench.sh: mdrun's log has no performance figures" >&2
  exit 1
fi
echo "MIGADVISOR_WORK $(awk -v p="$perf" -v w="$wall" 'BEGIN {printf "%.6f", p * w / 86400}') ns"
echo "MIGADVISOR_METRIC ns_per_day $perf"
echo "MIGADVISOR_METRIC wall_s $wall"
echo "MIGADVISOR_METRIC mpi_ranks 1"
echo "MIGADVISOR_METRIC omp_threads $threads"
