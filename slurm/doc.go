// Package slurm is the ground floor: Slurm as migadvisor reads and runs it.
//
//   - Batch scripts: read as sbatch 22.05 does (directives, late lines,
//     getopt rules), their resources, byte-exact rewrites for another GPU
//     request, and the fingerprint of the work.
//   - sbatch command lines: parsed with sbatch's precedence over the
//     script, edited to apply advice, and the wrapper's pass-through to
//     the real sbatch.
//   - The Slurm commands, run with argument vectors (never a shell): the
//     Client's sbatch, squeue, scontrol and streaming sacct, and the
//     header-mapped sacct reader that merges steps into jobs.
//   - The job-output protocol: the MIGADVISOR_* lines and tools' reports
//     scanned from output files, the monitor's versioned summary file, and
//     the --output/--error patterns as slurmstepd names the files.
//
// It imports nothing of migadvisor's: every other package builds on it.
package slurm
