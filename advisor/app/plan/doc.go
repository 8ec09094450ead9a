// Package plan chooses the site's MIG layout from its own demand: which
// GPUs to cut, into which slices. It sizes every GPU job of a period as
// the report judges it (the slice the engine advises, with its predicted
// runtime there; where the fit is unknown, what the job asked for),
// replays the queue on candidate layouts as Slurm's backfill would start
// it (plan/replay), and proposes the layout with the least p95 wait at no
// more SU than today's, with the configs that apply it: mig-parted's,
// gres.conf's and slurm.conf's lines, and the steps to re-slice a node.
//
//	demand.go    the period's jobs, sized by the report's judgement
//	fleet.go     the site's nodes, their GPUs and how each is cut
//	evaluate.go  one layout replayed: waits, SU, busy and stranded slices
//	search.go    candidate layouts and the search among them
//	calculator.go Princeton's MIG calculator, for comparison
//	configs.go   what applies a layout: mig-parted, gres.conf, slurm.conf
//	text.go      the table an admin reads
package plan
