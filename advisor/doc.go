// Package advisor is the decision engine: given a batch script, a site and
// the evidence of its runs (the history's records, or a site's reference
// benchmarks), it judges each profile (OOM risk from the memory seen, a
// runtime from the runs or the scaling model, SU from the site's formula)
// and recommends one, with the reasons, the line to change and the typed
// next step. It also lints scripts and explains how a job ended.
//
// It reads records and prints nothing: advisor/base/history below it stores the
// records; advisor/app/collect, advisor/app/wrapper and advisor/app/report above it
// fill the history, advise at submission and write the site's tables.
package advisor
