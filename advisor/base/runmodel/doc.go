// Package runmodel is the runtime model: how a job's wall time changes from
// one profile to another. Each job gets the explanation its measured times
// support (ExplainTimes: the resource that bounds it, SMs, memory bandwidth
// or both, with a fixed share or a floor), fitted on them; a job measured
// on one profile is scaled like the reference benchmark it looks like, its
// peers or the site's reference benchmarks (References.Prior), or by its GPU
// utilization (PriorScaling); emulated runs are explained by the GPU's busy
// time (ExplainWithBusy). Scaling.Predict gives a time on a profile with a
// range calibrated on the built-in reference benchmarks (calibration.json,
// embedded).
//
// It stands on catalog alone: advisor gathers the runs into Points and
// decides; advisor/app/accuracy scores the model; advisor/app/index stores the
// Peers its advice index publishes.
package runmodel
