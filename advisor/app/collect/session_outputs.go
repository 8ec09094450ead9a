package collect

import (
	"context"
	"fmt"
	"io"
	"os"
	"os/user"
	"path/filepath"
	"slices"
	"strings"
	"time"

	"github.com/migadvisor/migadvisor/advisor/base/history"
	"github.com/migadvisor/migadvisor/advisor/base/session"
	"github.com/migadvisor/migadvisor/slurm"
)

// An interactive session leaves no output file by Slurm's names: an
// salloc shell and srun --pty print to the user's terminal, and an Open
// OnDemand app writes output.log in its session directory, the job's
// working directory. The monitor, run in such a session, writes its
// summary where bench/monitor's DefaultOut puts it: beside stdout when
// that is a file (output.log), else in SLURM_SUBMIT_DIR, the working
// directory; named after the job in an salloc shell or a batch job
// (migadvisor-<job>.json), after the step under srun
// (migadvisor-<job>.<step>[.<task>].json). So for a job whose output is not
// found, collect looks there.
//
// These are names collect guesses, not paths a record named, and collect
// may read users' files as admin: as an emulation's files, only regular
// files themselves are read (a link could point anywhere), a summary up to
// maxSummaryBytes, a directory's names up to maxWorkDirNames.

// onDemandOutput is the file an Open OnDemand batch-connect session
// writes its output to, in its session directory.
const onDemandOutput = "output.log"

// maxSummaryBytes bounds a summary read from a working directory: the
// monitor writes a few KiB.
const maxSummaryBytes = 1 << 20

// maxWorkDirNames bounds the names read from a working directory in
// looking for the summaries of a job's steps.
const maxWorkDirNames = 4096

// workDirs finds what jobs' working directories hold of sessions' files,
// reading each directory's names once.
type workDirs struct {
	summaries map[string][]string // directory → the names of the monitor's summaries in it
}

// files are the files of a job with no output file found that its working
// directory holds: OnDemand's output.log for an app's job, and the
// monitor's summary of the job, or else those of its steps.
func (w *workDirs) files(r *history.JobRecord) (outputs, summaries []string) {
	if r.WorkDir == "" || !filepath.IsAbs(r.WorkDir) || r.Start == nil {
		return nil, nil
	}
	dir := filepath.Clean(r.WorkDir)
	if p := filepath.Join(dir, onDemandOutput); session.OnDemand(r.Name) && regularFile(p) {
		outputs = []string{p}
	}
	if p := filepath.Join(dir, slurm.SummaryName(r.Key)); regularFile(p) {
		return outputs, []string{p}
	}
	prefix := strings.TrimSuffix(slurm.SummaryName(r.Key), ".json") + "."
	for _, name := range w.summariesIn(dir) {
		step, ok := strings.CutPrefix(strings.TrimSuffix(name, ".json"), prefix)
		if p := filepath.Join(dir, name); ok && isStepName(step) && regularFile(p) {
			summaries = append(summaries, p)
		}
	}
	return outputs, summaries
}

// summariesIn are the names of dir's first maxWorkDirNames that may be
// the monitor's summaries (migadvisor-*.json).
func (w *workDirs) summariesIn(dir string) []string {
	if names, ok := w.summaries[dir]; ok {
		return names
	}
	if w.summaries == nil {
		w.summaries = map[string][]string{}
	}
	var out []string
	if f, err := os.Open(dir); err == nil {
		names, _ := f.Readdirnames(maxWorkDirNames)
		f.Close()
		for _, name := range names {
			if strings.HasPrefix(name, "migadvisor-") && strings.HasSuffix(name, ".json") {
				out = append(out, name)
			}
		}
	}
	slices.Sort(out) // the first stands for them all in the history: the same at every collect
	w.summaries[dir] = out
	return out
}

// isStepName reports whether s names a step as the monitor does: its
// number, and its task's when that is not the first ("3", "3.1").
func isStepName(s string) bool {
	step, task, hasTask := strings.Cut(s, ".")
	return digits(step) && (!hasTask || digits(task))
}

func digits(s string) bool {
	return s != "" && strings.Trim(s, "0123456789") == ""
}

// readWorkDirSummary reads a summary collect found by its name: a regular
// file itself, of at most maxSummaryBytes.
func readWorkDirSummary(path string) (*slurm.MonitorSummary, error) {
	if !regularFile(path) {
		return nil, fmt.Errorf("%s is not a regular file (a link or a pipe)", path)
	}
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	data, err := io.ReadAll(io.LimitReader(f, maxSummaryBytes+1))
	if err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	if len(data) > maxSummaryBytes {
		return nil, fmt.Errorf("%s: larger than %d bytes, not a monitor's summary", path, maxSummaryBytes)
	}
	return slurm.ParseMonitorSummary(path, data)
}

// applyWorkDirSummaries puts the figures of the summary with the largest
// peak among paths (the job's, or its steps') in ev, as applySummary does
// for the one beside a job's output; it returns why those it could not
// read were not.
func applyWorkDirSummaries(ev *slurm.OutputEvidence, paths []string) (unread []string) {
	var best *slurm.MonitorSummary
	bestPeak := -1.0
	for _, p := range paths {
		sum, err := readWorkDirSummary(p)
		if err != nil {
			unread = append(unread, err.Error())
			continue
		}
		if peak, d := sum.Peak(); d != nil && peak > bestPeak {
			best, bestPeak = sum, peak
		}
	}
	if best != nil {
		applyMonitorSummary(ev, best)
	}
	return unread
}

// sessionLookback is how far back a collect of the tracked jobs looks for
// the collecting user's sessions: as far as a collect with no --since
// reaches (DefaultWindow).
const sessionLookback = DefaultWindow

// maxSessionsPerCollect bounds the sessions, newest first, one collect
// looks at: a history's read of them stays a fraction of a second.
const maxSessionsPerCollect = 2000

// collectingUser is the name of the user running the collect ("" if
// unknown); a variable for the tests.
var collectingUser = func() string {
	u, err := user.Current()
	if err != nil {
		return ""
	}
	return u.Username
}

// withOwnSessions adds to the tracked jobs recs the collecting user's (me)
// sessions (GPU jobs no script is linked to) that ended in the last
// sessionLookback: no output file is recorded for them, and their working
// directories may hold the monitor's summary or OnDemand's output.log.
// Only the user's own: a site-wide collect does not look through every
// user's directories for files no record names.
func (c *Collector) withOwnSessions(ctx context.Context, recs []history.JobRecord, me string, now time.Time) ([]history.JobRecord, error) {
	if me == "" {
		return recs, nil
	}
	ended, err := c.Store.History(ctx, history.HistoryFilter{GPU: true, Ended: history.Period{From: now.Add(-sessionLookback)},
		Limit: maxSessionsPerCollect})
	if err != nil {
		return nil, fmt.Errorf("sessions: %w", err)
	}
	seen := map[[2]string]bool{}
	for _, r := range recs {
		seen[[2]string{r.Cluster, r.Key}] = true
	}
	for _, r := range ended {
		if r.User == me && r.Fingerprint == "" && !seen[[2]string{r.Cluster, r.Key}] {
			recs = append(recs, r)
		}
	}
	return recs, nil
}
