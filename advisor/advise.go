package advisor

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"strings"
	"time"

	"github.com/migadvisor/migadvisor/advisor/base/history"
	"github.com/migadvisor/migadvisor/advisor/base/lint"
	"github.com/migadvisor/migadvisor/advisor/base/runmodel"
	"github.com/migadvisor/migadvisor/catalog"
	"github.com/migadvisor/migadvisor/internal/fsutil"
	"github.com/migadvisor/migadvisor/internal/textutil"
	"github.com/migadvisor/migadvisor/slurm"
)

// HistoryOpener opens one history to read.
type HistoryOpener func(ctx context.Context, path string) (*history.Store, error)

// HistoryOpeners open the histories advice reads. Own opens the user's: an
// error that is fs.ErrNotExist means the user has none yet, and none is
// read. SiteWide opens the site's, read-only.
type HistoryOpeners struct {
	Own, SiteWide HistoryOpener
}

// HistoriesRequest says whose histories to read, and for what.
type HistoriesRequest struct {
	UserDB string        // the user's history; "": none
	Site   *catalog.Site // its [history] site_db names the site-wide one
	// AllJobs: every job is wanted, not one script's. The site-wide
	// history is then left out: it holds every user's jobs.
	AllJobs bool
}

// HistorySet is the histories advice reads; Close closes them.
type HistorySet struct {
	Own      *history.Store   // the user's; nil when there is none yet
	SiteWide []*history.Store // the site's, when it is another file than the user's
	// Warning says why the site's history is left out although the site
	// names one: it could not be read. "" when it is read, or there is none.
	Warning string
}

// Histories opens the histories to read: the user's, and the site-wide
// one the site file names unless it is the user's own file. A site-wide
// history that cannot be read is no reason to give no advice: the set then
// holds the user's alone, and Warning says why.
func Histories(ctx context.Context, req HistoriesRequest, open HistoryOpeners) (*HistorySet, error) {
	set := &HistorySet{}
	if req.UserDB != "" {
		own, err := open.Own(ctx, req.UserDB)
		switch {
		case errors.Is(err, fs.ErrNotExist):
		case err != nil:
			return nil, err
		default:
			set.Own = own
		}
	}
	path := siteHistoryPath(req)
	if path == "" {
		return set, nil
	}
	st, err := open.SiteWide(ctx, path)
	if err != nil {
		set.Warning = fmt.Sprintf("the site-wide history is not readable, so only yours is used: %v", err)
		return set, nil
	}
	set.SiteWide = []*history.Store{st}
	return set, nil
}

// siteHistoryPath is the site-wide history to read besides the user's, ""
// for none.
func siteHistoryPath(req HistoriesRequest) string {
	if req.Site == nil || req.AllJobs {
		return ""
	}
	path := req.Site.History.SiteDB
	if path == "" || (req.UserDB != "" && fsutil.SamePath(path, req.UserDB)) {
		return ""
	}
	return path
}

// Close closes every history of the set.
func (h *HistorySet) Close() {
	if h.Own != nil {
		h.Own.Close()
	}
	for _, st := range h.SiteWide {
		st.Close()
	}
}

// StartEstimator asks the scheduler when a script would start on each of
// the site's profiles, submitted from dir; it returns what it found before
// an error too.
type StartEstimator interface {
	StartEstimates(ctx context.Context, site *catalog.Site, s *slurm.Script, dir string) (map[string]time.Time, error)
}

// AdviseRequest is one script to advise on, as the user asked.
type AdviseRequest struct {
	Path   string // the script, as the user named it
	Script *slurm.Script
	Site   *catalog.Site
	UserDB string // the user's history
	// User is who asks: only their jobs in the site-wide history can be the
	// script's earlier versions, and only their runs are its monthly rate.
	User string
	// Now is today: the runs of the last 30 days count back from it, and
	// the scheduler's start estimates are waits from it.
	Now        time.Time
	WaitsSince time.Time // the history's queue waits from jobs submitted since
	Options    Options
	Prior      string // the reference benchmark to judge from when the script has no runs; "": the one it looks like
	SubmitDir  string // where sbatch would run it: its --output directories, the start estimates
	// Peers reads other scripts' times on two profiles or more, less the
	// script's own (the advice indexes', as the sbatch wrapper reads them):
	// a job measured on one profile is scaled like them. Called only for
	// such a job; nil: none. Its error is warned of, never fatal.
	Peers func(fingerprint string) ([]runmodel.Peer, error)
}

// AdviseDeps are what Advise reads besides the script.
type AdviseDeps struct {
	Open HistoryOpeners
	// Starts answers for the turnaround objective with the scheduler's
	// estimates; nil: the history's medians alone.
	Starts StartEstimator
	// Warn hears of a problem that leaves the advice standing (the
	// site-wide history unreadable); nil: it goes unsaid.
	Warn func(msg string)
}

// Advise is the recommendation for a script: its runs and its earlier
// versions' from the user's history and the site's (a reference benchmark
// standing in when it has none), queue waits from the scheduler for the
// turnaround objective, then Recommend, with what sbatch or the site would
// reject put first.
func Advise(ctx context.Context, req AdviseRequest, deps AdviseDeps) (*Recommendation, error) {
	job, err := gatherEvidence(ctx, req, deps)
	if err != nil {
		return nil, err
	}
	var waitNote string
	if req.Options.Objective == ObjectiveTurnaround && deps.Starts != nil {
		waitNote = estimateStarts(ctx, req, deps.Starts, &job)
	}
	rec, err := Recommend(req.Site, job, req.Options)
	if err != nil {
		return nil, inFile(err, req.Path)
	}
	if waitNote != "" {
		rec.Notes = append(rec.Notes, waitNote)
	}
	// Judged where sbatch would run it: a missing --output directory fails a job at once.
	opt := lint.Options{SubmitDir: req.SubmitDir}
	rec.AddProblems(lint.SubmissionProblems(req.Script, req.Site, req.Path, opt), req.Path)
	// Refused by the script and the site alone: where it is submitted
	// from (a --output directory) may not be where recommend runs.
	rec.Refused = lint.HasErrors(lint.Check(req.Script, req.Site))
	return rec, nil
}

// gatherEvidence reads the script's runs from its histories (closed
// after), and chooses a prior when it has none.
func gatherEvidence(ctx context.Context, req AdviseRequest, deps AdviseDeps) (Job, error) {
	hs, err := Histories(ctx, HistoriesRequest{UserDB: req.UserDB, Site: req.Site}, deps.Open)
	if err != nil {
		return Job{}, err
	}
	defer hs.Close()
	if hs.Warning != "" && deps.Warn != nil {
		deps.Warn(hs.Warning)
	}
	job, err := GatherFor(ctx, req.Site, GatherRequest{Path: req.Path, Script: req.Script, User: req.User, WaitsSince: req.WaitsSince},
		hs.Own, hs.SiteWide...)
	if err != nil {
		return job, err
	}
	job.Source, job.Now = req.Script, req.Now
	if len(job.Runs) == 0 {
		job.Prior, err = priorFor(req.Site, req.Script, req.Prior)
		return job, err
	}
	if !NeedsPrior(job.Runs) {
		return job, nil
	}
	// The benchmark named, else the one the script looks like, else the
	// one its runs' output showed (GatherFor).
	b, err := priorFor(req.Site, req.Script, req.Prior)
	if err != nil {
		return job, err
	}
	if b != nil {
		job.Resembles = b
	}
	if req.Peers != nil {
		var perr error
		if job.Peers, perr = req.Peers(job.Fingerprint); perr != nil && deps.Warn != nil {
			deps.Warn("the advice goes on without other scripts' runtimes: " + perr.Error())
		}
	}
	return job, nil
}

// inFile names the script in a script error that names no file.
func inFile(err error, path string) error {
	var fe *catalog.FileError
	if errors.As(err, &fe) && fe.File == "" {
		fe.File = path
	}
	return err
}

// estimateStarts replaces the history's queue waits with the scheduler's
// own estimates (`sbatch --test-only`) where it answers, and words which
// were used.
func estimateStarts(ctx context.Context, req AdviseRequest, est StartEstimator, job *Job) string {
	starts, err := est.StartEstimates(ctx, req.Site, req.Script, req.SubmitDir)
	for p, at := range starts {
		job.QueueWaitS[p] = max(at.Sub(req.Now).Seconds(), 0)
	}
	switch {
	case err != nil && len(starts) == 0:
		return "queue waits: medians from the history, where it has them (sbatch --test-only: " + oneLine(err) + ")"
	case err != nil:
		return fmt.Sprintf("queue waits: sbatch --test-only estimates for %s, medians from the history for the rest, where it has them (%s)",
			textutil.Plural(len(starts), "profile"), oneLine(err))
	}
	return "queue waits: sbatch --test-only estimates of the start time now"
}

// oneLine is an error's text on one line: a Slurm command's stderr may
// span several.
func oneLine(err error) string {
	return strings.Join(strings.Fields(err.Error()), " ")
}

// PriorError is a reference benchmark asked for that the site does not have.
type PriorError struct {
	Name  string   // the benchmark asked for
	Site  string   // the site's name
	Known []string // the site's reference benchmarks; none: it has no reference set
}

func (e *PriorError) Error() string {
	if len(e.Known) == 0 {
		return fmt.Sprintf("site %s has no reference benchmarks", e.Site)
	}
	return fmt.Sprintf("%q is not a reference benchmark of %s (%s)", e.Name, e.Site, strings.Join(e.Known, ", "))
}

// priorFor is the reference benchmark named, else the one the script looks
// like (nil for none).
func priorFor(site *catalog.Site, script *slurm.Script, name string) (*catalog.Benchmark, error) {
	set, ok := catalog.ReferenceFor(site)
	switch {
	case !ok && name != "":
		return nil, &PriorError{Name: name, Site: site.Name}
	case !ok:
		return nil, nil
	case name != "":
		b, ok := set.Benchmark(name)
		if !ok {
			e := &PriorError{Name: name, Site: site.Name}
			for _, b := range set.Benchmarks {
				e.Known = append(e.Known, b.Name)
			}
			return nil, e
		}
		return b, nil
	}
	b, _ := RecogniseWorkload(set, script)
	return b, nil
}

// AddProblems puts a script's submission problems first among the
// recommendation's notes; a probe would submit a script with errors, so
// the next step becomes fixing them (lint).
func (r *Recommendation) AddProblems(problems []string, path string) {
	if len(problems) == 0 {
		return
	}
	r.Notes = append(problems, r.Notes...)
	if r.NextStep.Kind == NextProbe {
		r.SetNext(LintStep(path))
	}
}
