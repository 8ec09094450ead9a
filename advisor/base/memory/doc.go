// Package memory judges a job's GPU memory: what held it (a caching or
// preallocating framework's peak is a ceiling, not a need: Holder,
// HolderOf, ScriptSoftware, HolderOfRecord), the need its runs' figures
// add up to (EstimateNeed) and the risk that it runs out of memory on a
// profile (OOMRisk). It stands on slurm and advisor/base/history's record
// alone; advisor gathers the runs and decides.
package memory
