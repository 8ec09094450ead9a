// Package bench measures: it writes a sweep (one variant of a batch script
// per GPU profile, so the same work runs on each) and submits it, runs the
// probe loop (every profile at once, or a ladder from the smallest that
// stops at the first that completes), waits for jobs to leave Slurm's
// queue, collects what ended into the history and says how each ended,
// and builds the rows that status shows. Slurm, the history and the clock
// come in through small interfaces, so the loop is tested with fakes.
//
// Its subpackages are the measuring tools: gpu (NVML), monitor (the in-job
// GPU memory monitor) and workloads (the reference benchmarks).
package bench
