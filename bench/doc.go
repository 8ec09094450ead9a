// Package bench measures: it writes a sweep (one variant of a batch script
// per GPU profile, so the same work runs on each) and submits it, runs the
// probe loop (every profile at once, or a ladder from the smallest that
// stops at the first that completes) and the reference suite (RunSuite:
// each workload written, swept and submitted, then all waited for and
// collected), waits for jobs to leave Slurm's queue, collects what ended
// into the history and says how each ended, and decides what status lists
// (Status) and which jobs a wait follows (WaitTargets). Slurm, the history
// and the clock come in through small interfaces, so the loops are tested
// with fakes.
//
// Its subpackages are the measuring tools: gpu (NVML), monitor (the in-job
// GPU memory monitor) and workloads (the reference benchmarks).
package bench
