package bench

import (
	"context"
	"fmt"
	"time"

	"github.com/migadvisor/migadvisor/advisor/app/collect"
	"github.com/migadvisor/migadvisor/advisor/base/history"
	"github.com/migadvisor/migadvisor/advisor/base/outcome"
	"github.com/migadvisor/migadvisor/catalog"
	"github.com/migadvisor/migadvisor/slurm"
)

// History is what following jobs reads of the history: the tracked
// submissions, and the records of their jobs.
type History interface {
	TrackedReader
	History(ctx context.Context, f history.HistoryFilter) ([]history.JobRecord, error)
}

// Accounting brings the final records of ended jobs into the history and
// scans their outputs: an advisor/app/collect Collector.
type Accounting interface {
	WaitFinal(ctx context.Context, ids []string, patience time.Duration) (open, unknown []string, err error)
	FileTogether(ctx context.Context) ([]history.Refiled, error)
	ScanOutputs(ctx context.Context, dirs []string, keys [][2]string) (collect.OutputResult, error)
}

var _ Accounting = (*collect.Collector)(nil)

// FinalPatience is how long accounting is read again for a job whose record
// is still slurmdbd's placeholder (a job of a few seconds).
const FinalPatience = 20 * time.Second

// Ended is how the jobs waited for ended, once collected.
type Ended struct {
	Tracked  []history.Tracked // the tracked submissions among them
	Outcomes Outcomes
	Open     []string // accounting has no final record of these yet
	Unknown  []string // Slurm has no job of these ids (mistyped, or long forgotten)
	// UnreadDirs are the output directories given that could not be read.
	UnreadDirs []collect.DirError
}

// CollectEnded imports the final records of the ended jobs ids and the
// evidence of their outputs (also in the directories outputs) into the
// history h that acct fills, and explains how each ended (site may be nil).
func CollectEnded(ctx context.Context, acct Accounting, h History, site *catalog.Site, ids, outputs []string) (Ended, error) {
	var e Ended
	var err error
	if e.Open, e.Unknown, err = acct.WaitFinal(ctx, ids, FinalPatience); err != nil {
		return e, fmt.Errorf("collect the ended jobs: %w", err)
	}
	if _, err := acct.FileTogether(ctx); err != nil {
		return e, fmt.Errorf("file the jobs under their cluster: %w", err)
	}
	out, err := acct.ScanOutputs(ctx, outputs, nil)
	if err != nil {
		return e, fmt.Errorf("scan the jobs' outputs: %w", err)
	}
	e.UnreadDirs = out.UnreadDirs
	if e.Tracked, err = h.Tracked(ctx, history.TrackedFilter{JobIDs: ids}); err != nil {
		return e, err
	}
	e.Outcomes, err = ExplainEnded(ctx, h, site, e.Tracked)
	return e, err
}

// Outcomes are how the ended jobs of some submissions went, by cluster and
// job key.
type Outcomes struct {
	byJob    map[[2]string]outcome.Outcome
	emulated map[[2]string]int // the emulated runs each job recorded
}

// explainBatch keeps the OR of keys well inside SQLite's expression depth.
const explainBatch = 200

// ExplainEnded explains how each ended job of the submissions went, from
// its record in the history (site, which may be nil, gives the profiles'
// usable memory).
func ExplainEnded(ctx context.Context, h History, site *catalog.Site, tracked []history.Tracked) (Outcomes, error) {
	o := Outcomes{byJob: map[[2]string]outcome.Outcome{}, emulated: map[[2]string]int{}}
	var keys [][2]string
	for _, t := range tracked {
		for _, j := range t.Jobs {
			if !j.Stub && slurm.TerminalState(j.State) {
				keys = append(keys, [2]string{t.Cluster, j.Key})
			}
		}
	}
	for len(keys) > 0 {
		n := min(len(keys), explainBatch)
		recs, err := h.History(ctx, history.HistoryFilter{Keys: keys[:n]})
		if err != nil {
			return o, fmt.Errorf("read the ended jobs' records: %w", err)
		}
		for i := range recs {
			key := [2]string{recs[i].Cluster, recs[i].Key}
			o.byJob[key] = outcome.Of(&recs[i], site)
			o.emulated[key] = len(recs[i].Emulated)
		}
		keys = keys[n:]
	}
	return o, nil
}

// Job is how one job of the submission t ended.
func (o Outcomes) Job(t history.Tracked, j history.TrackedJob) outcome.Outcome {
	return o.byJob[[2]string{t.Cluster, j.Key}]
}

// EmulatedRuns are the emulated runs the jobs of the submission t
// recorded (migadvisor emulate's, one per profile it stood for).
func (o Outcomes) EmulatedRuns(t history.Tracked) int {
	n := 0
	for _, j := range t.Jobs {
		n += o.emulated[[2]string{t.Cluster, j.Key}]
	}
	return n
}

// Of is how the submission t ended, once every job of it has: its job's
// outcome, or for an array (or a heterogeneous job) how many jobs did not
// complete and how the first of them ended.
func (o Outcomes) Of(t history.Tracked) outcome.Outcome {
	if !t.Ended() {
		return outcome.Outcome{}
	}
	if len(t.Jobs) == 1 {
		return o.Job(t, t.Jobs[0])
	}
	failed := 0
	var first outcome.Outcome
	for _, j := range t.Jobs {
		if jo := o.Job(t, j); jo.Kind != outcome.Completed {
			if failed == 0 {
				first = jo
				first.Text = j.ID + " " + jo.Text
			}
			failed++
		}
	}
	if failed == 0 {
		return outcome.Outcome{Kind: outcome.Completed, Text: fmt.Sprintf("completed: all %d of its jobs", len(t.Jobs))}
	}
	first.Text = fmt.Sprintf("did not complete in %d of its %d jobs: %s", failed, len(t.Jobs), first.Text)
	return first
}
