// Package collect turns what Slurm and the jobs say into history: accounting
// records from sacct (incrementally, from each selection's watermark) or a
// saved dump, the evidence in job output files and the monitor's summaries,
// and the scripts slurmdbd stored for jobs no submission names. Run is one
// collect, its steps in order; Track links jobs submitted some other way to
// their script. It also decides the cluster name jobs are filed under, the
// same way for every command (ChooseCluster, Collector.NameCluster).
package collect
