// Package lint checks a batch script before it is submitted, on catalog,
// slurm and advisor/base/memory's FormatMiB alone: sbatch's rules and the site's (Check, CheckWith: GPU
// types and MIG slices, partitions and QoS, time and node limits, the
// directories of --output and --error), the warnings a price must carry
// (ChargeWarnings), the problems a user must hear at submission
// (SubmissionProblems), and whether a script uses several GPUs, which no
// MIG slice can serve (MultiGPU). advisor puts its findings into a
// recommendation.
package lint
