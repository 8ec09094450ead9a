package bench

import (
	"context"
	"errors"
	"fmt"
	"path/filepath"
)

// measurer is the steps that a probe and a suite share: write a sweep and
// record it, submit it and record the jobs, wait for them and collect
// them, each step said through ProbeDeps.Progress.
type measurer struct {
	deps ProbeDeps
}

func newMeasurer(deps ProbeDeps) measurer {
	if deps.Clock == nil {
		deps.Clock = SystemClock{}
	}
	return measurer{deps: deps}
}

func (m measurer) say(e ProbeEvent) {
	if m.deps.Progress != nil {
		m.deps.Progress(e)
	}
}

// writeSweep writes the variants of opt and records the sweep.
func (m measurer) writeSweep(ctx context.Context, opt SweepOptions) (*Sweep, error) {
	if opt.Now == nil {
		opt.Now = m.deps.Clock.Now
	}
	sw, err := WriteSweep(opt)
	if err != nil {
		return nil, err
	}
	if err := RecordSweep(ctx, m.deps.History, opt.OutDir, sw); err != nil {
		// The variants are written; the history is a convenience, never a reason to fail.
		m.say(ProbeEvent{Kind: ProbeWarning, Dir: opt.OutDir, Err: fmt.Errorf("the sweep is not in the history: %w", err)})
	}
	return sw, nil
}

// submitSweep submits the variants of the sweep in dir and records the
// jobs, tagged with workload; a failure part-way still records those
// submitted (sweep.json has them whatever the history says).
func (m measurer) submitSweep(ctx context.Context, dir string, sw *Sweep, workload, workDir string) error {
	subErr := SubmitSweep(ctx, m.deps.Slurm, dir, sw, m.deps.Clock.Now)
	if err := RecordSubmissions(ctx, m.deps.History, dir, sw, workload, workDir); err != nil {
		m.say(ProbeEvent{Kind: ProbeWarning, Dir: dir, Err: fmt.Errorf("the jobs are in %s but not in the history: %w",
			filepath.Join(dir, SweepFileName), err)})
	}
	return subErr
}

// waitAndCollect waits until none of ids is queued, then collects them.
func (m measurer) waitAndCollect(ctx context.Context, dir string, ids []string, opt WaitOptions) (Ended, error) {
	w := Waiter{Queue: m.deps.Slurm, Clock: m.deps.Clock, Progress: func(s QueueState) { m.say(ProbeEvent{Kind: ProbeQueue, Dir: dir, Queue: s}) }}
	if err := w.Wait(ctx, ids, opt); err != nil {
		return Ended{}, err
	}
	ended, err := m.deps.Collect(ctx, ids)
	if err != nil {
		return ended, err
	}
	m.say(ProbeEvent{Kind: ProbeCollected, Dir: dir})
	return ended, nil
}

// SweepRun is the sweep command's work: a sweep written and, with Submit,
// submitted.
type SweepRun struct {
	Sweep    SweepOptions
	Submit   bool
	Workload string // the tag its jobs get
	WorkDir  string // where the user submits from
}

// RunSweep writes the variants of r.Sweep and records the sweep; with
// Submit, it submits them and records the jobs. What does not stop it (a
// script that asks for no GPU, a history that cannot record) is said as a
// ProbeWarning. A submission that fails part-way returns the sweep with
// the jobs it has.
func RunSweep(ctx context.Context, r SweepRun, deps ProbeDeps) (*Sweep, error) {
	m := newMeasurer(deps)
	sw, err := m.writeSweep(ctx, r.Sweep)
	if err != nil {
		return nil, err
	}
	if w := NoGPUWarning(r.Sweep.Script); w != "" {
		m.say(ProbeEvent{Kind: ProbeWarning, Dir: r.Sweep.OutDir, Err: errors.New(w)})
	}
	if r.Submit {
		return sw, m.submitSweep(ctx, r.Sweep.OutDir, sw, r.Workload, r.WorkDir)
	}
	return sw, nil
}
