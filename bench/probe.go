package bench

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"time"

	"github.com/migadvisor/migadvisor/advisor/base/history"
	"github.com/migadvisor/migadvisor/advisor/base/outcome"
	"github.com/migadvisor/migadvisor/catalog"
	"github.com/migadvisor/migadvisor/internal/textutil"
)

// ProbeOptions say what to probe, where, and how long to wait.
type ProbeOptions struct {
	// Sweep is the script, site, monitor and --time of every rung; its
	// Profiles are the probe's (from the smallest), its OutDir the probe's
	// directory (a ladder puts each rung in a directory of its own there).
	Sweep    SweepOptions
	Ladder   bool   // one profile at a time, until one completes cleanly
	Workload string // tags the submitted jobs
	WorkDir  string // where sbatch runs, recorded with each submission
	Wait     WaitOptions
}

// ProbeSlurm is what a probe needs of Slurm: sbatch and scontrol to
// submit, squeue to follow.
type ProbeSlurm interface {
	Submitter
	Queue
}

// Recorder keeps sweeps and submissions: the history.
type Recorder interface {
	RecordSweep(ctx context.Context, sw history.Sweep) error
	RecordSubmissions(ctx context.Context, subs []history.Submission) error
}

// ProbeHistory is what a probe needs of the history: to record what it
// submits, and to read back how the script's runs went.
type ProbeHistory interface {
	Recorder
	History(ctx context.Context, f history.HistoryFilter) ([]history.JobRecord, error)
}

// ProbeDeps are the probe's ways to Slurm, the history and the user.
type ProbeDeps struct {
	Slurm   ProbeSlurm
	History ProbeHistory
	// Collect brings the final records of the ended jobs ids into the
	// history and explains them: CollectEnded with a collector.
	Collect  func(ctx context.Context, ids []string) (Ended, error)
	Clock    Clock            // nil: SystemClock
	Progress func(ProbeEvent) // nil: nothing is said
}

// ProbeEventKind is what a ProbeEvent reports.
type ProbeEventKind int

const (
	ProbeSubmitted ProbeEventKind = iota // a variant is submitted: Profile, JobID, File
	ProbeQueue                           // a look at the queue: Queue
	ProbeCollected                       // the jobs waited for are collected (Deps.Collect says what it found)
	ProbeJobEnded                        // Profile, JobID, State, Outcome
	ProbeNextRung                        // Profile did not complete cleanly: the ladder goes on
	ProbeStopped                         // the ladder stops at Profile: job JobID's Outcome would repeat higher up
	ProbeWarning                         // Err: something the history lacks, which does not stop the probe
	ProbeStarting                        // Plan: what the probe is about to submit, before the first job
	SuiteStarting                        // Suite: what a benchmark run is about to submit, before the first job
)

// ProbeEvent is one step of a probe, for the CLI to show.
type ProbeEvent struct {
	Kind     ProbeEventKind
	Workload string // a suite's: the workload tag of the submitted job
	Dir      string
	Profile  string
	JobID    string
	File     string // the variant, under Dir
	State    string // Slurm's final state, SummaryState's words
	Outcome  outcome.Outcome
	Queue    QueueState
	Err      error
	Plan     *ProbePlan
	Suite    *SuitePlan
}

// ProbeRung is one sweep a probe submitted and what became of it.
type ProbeRung struct {
	Dir      string
	Sweep    *Sweep
	Outcomes map[string]outcome.Outcome // by job id, once collected
}

// ProbeResult is what a probe did, rung by rung: also when it fails, so
// that the CLI can say which sweep's jobs still run.
type ProbeResult struct {
	Rungs     []ProbeRung
	Completed string // the profile the ladder stopped at with a clean run
	StoppedAt string // the profile the ladder stopped at with a failure no profile changes
}

// Dir is the directory of the last rung, "" before any.
func (r ProbeResult) Dir() string {
	if len(r.Rungs) == 0 {
		return ""
	}
	return r.Rungs[len(r.Rungs)-1].Dir
}

// Probe measures the script on the chosen profiles: all at once, or as a
// ladder from the smallest that stops at the first clean completion, or at
// a failure that no larger profile would change.
func Probe(ctx context.Context, opt ProbeOptions, deps ProbeDeps) (ProbeResult, error) {
	p := prober{measurer: newMeasurer(deps), opt: opt}
	if w := NoGPUWarning(opt.Sweep.Script); w != "" {
		p.say(ProbeEvent{Kind: ProbeWarning, Err: errors.New(w)})
	}
	plan, err := PlanProbe(opt)
	if err != nil {
		return p.res, err
	}
	p.say(ProbeEvent{Kind: ProbeStarting, Dir: opt.Sweep.OutDir, Plan: &plan})
	if !opt.Ladder {
		_, err := p.rung(ctx, opt.Sweep.OutDir, opt.Sweep.Profiles)
		return p.res, err
	}
	for i, profile := range opt.Sweep.Profiles {
		rung, err := p.rung(ctx, filepath.Join(opt.Sweep.OutDir, profile), []string{profile})
		if err != nil {
			return p.res, err
		}
		if rung.completed() {
			p.res.Completed = profile
			return p.res, nil
		}
		if i == len(opt.Sweep.Profiles)-1 {
			return p.res, nil
		}
		// A failure that is not about the GPU would only repeat higher up.
		if id, o, ok := anyProfileFailure(rung); ok {
			p.res.StoppedAt = profile
			p.say(ProbeEvent{Kind: ProbeStopped, Profile: profile, JobID: id, Outcome: o})
			return p.res, nil
		}
		p.say(ProbeEvent{Kind: ProbeNextRung, Profile: profile})
	}
	return p.res, nil
}

// prober is one probe under way.
type prober struct {
	measurer
	opt ProbeOptions
	res ProbeResult
}

// rung writes, submits, waits for and collects the variants of some
// profiles in dir, and says how each job ended.
func (p *prober) rung(ctx context.Context, dir string, profiles []string) (ProbeRung, error) {
	sopt := p.opt.Sweep
	sopt.Profiles, sopt.OutDir = profiles, dir
	made := missingDirs(dir)
	sw, err := p.writeSweep(ctx, sopt)
	if err != nil {
		return ProbeRung{}, err
	}
	rung := ProbeRung{Dir: dir, Sweep: sw, Outcomes: map[string]outcome.Outcome{}}
	ids, err := p.submit(ctx, dir, sw)
	if err != nil {
		if jobsOf(sw) == 0 {
			// Nothing reached Slurm: what the rung wrote would only mislead.
			return ProbeRung{}, discardSweep(dir, sw, made, err)
		}
		p.res.Rungs = append(p.res.Rungs, rung)
		return rung, fmt.Errorf("%w; %s of this probe were submitted before it: %s keeps their variants ('migadvisor wait --sweep %s' follows them)",
			err, textutil.Plural(jobsOf(sw), "job"), dir, dir)
	}
	p.res.Rungs = append(p.res.Rungs, rung)
	ended, err := p.waitAndCollect(ctx, dir, ids, p.opt.Wait)
	if err != nil {
		return rung, err
	}
	for _, t := range ended.Tracked {
		o := ended.Outcomes.Of(t)
		rung.Outcomes[t.JobID] = o
		p.say(ProbeEvent{Kind: ProbeJobEnded, Dir: dir, Profile: t.Profile, JobID: t.JobID, State: SummaryState(t.Jobs), Outcome: o})
		if emulates(sw, t.JobID) && o.Kind == outcome.Completed && ended.Outcomes.EmulatedRuns(t) == 0 {
			p.say(ProbeEvent{Kind: ProbeWarning, Dir: dir, Err: fmt.Errorf("job %s ran the script once, not emulated: it recorded no emulated run "+
				"(no migadvisor with emulate on its node, or emulate failed first: its output says which); it counts as one run on %s", t.JobID, t.Profile)})
		}
	}
	return rung, nil
}

// emulates reports whether the sweep's job id is an emulation job's.
func emulates(sw *Sweep, jobID string) bool {
	for _, v := range sw.Variants {
		if v.JobID == jobID && len(v.Emulates) > 0 {
			return true
		}
	}
	return false
}

// submit submits the sweep's variants and records them, and says each;
// a failure part-way still records those submitted.
func (p *prober) submit(ctx context.Context, dir string, sw *Sweep) ([]string, error) {
	if err := p.submitSweep(ctx, dir, sw, p.opt.Workload, p.opt.WorkDir); err != nil {
		return nil, err
	}
	var ids []string
	for _, name := range sw.Profiles {
		v := sw.Variants[name]
		ids = append(ids, v.JobID)
		p.say(ProbeEvent{Kind: ProbeSubmitted, Dir: dir, Profile: name, JobID: v.JobID, File: filepath.Join(dir, v.File)})
	}
	return ids, nil
}

// jobsOf counts the sweep's variants that have a job id.
func jobsOf(sw *Sweep) int {
	n := 0
	for _, v := range sw.Variants {
		if v.JobID != "" {
			n++
		}
	}
	return n
}

// missingDirs are dir and those of its parents that do not exist yet,
// deepest first: the directories writing a sweep there would make.
func missingDirs(dir string) []string {
	var made []string
	for d := filepath.Clean(dir); ; d = filepath.Dir(d) {
		if _, err := os.Lstat(d); err == nil || d == filepath.Dir(d) {
			return made
		}
		made = append(made, d)
	}
}

// discardSweep removes what writing a sweep in dir made, once its
// submission failed before any job: its variants, sweep.json, and the
// directories made for it (where nothing else came to lie in them). The
// error says so, or where what could not be removed is.
func discardSweep(dir string, sw *Sweep, made []string, subErr error) error {
	var left []string
	files := []string{SweepFileName}
	for _, name := range sw.Profiles {
		files = append(files, sw.Variants[name].File)
	}
	for _, f := range files {
		if err := os.Remove(filepath.Join(dir, f)); err != nil && !errors.Is(err, fs.ErrNotExist) {
			left = append(left, filepath.Join(dir, f))
		}
	}
	for _, d := range made {
		os.Remove(d) // only if empty: anything else in it stays
	}
	if len(left) > 0 {
		return fmt.Errorf("%w; nothing was submitted, but %s could not be removed", subErr, strings.Join(left, ", "))
	}
	return fmt.Errorf("%w; nothing was submitted, and the variants written for it were removed", subErr)
}

// completed reports whether a job of the rung completed cleanly (its
// outcome, as collected, is a completion: no GPU OOM in its output).
func (r ProbeRung) completed() bool {
	for _, o := range r.Outcomes {
		if o.Kind == outcome.Completed {
			return true
		}
	}
	return false
}

// anyProfileFailure is a job of the rung that failed in a way no profile
// changes, in the sweep's order.
func anyProfileFailure(rung ProbeRung) (string, outcome.Outcome, bool) {
	for _, name := range rung.Sweep.Profiles {
		id := rung.Sweep.Variants[name].JobID
		if o, ok := rung.Outcomes[id]; ok && o.AnyProfile {
			return id, o, true
		}
	}
	return "", outcome.Outcome{}, false
}

// ProbeProfiles are the profiles named, by name or GRES type (every one of
// the site's when none is), from the smallest whatever the order given: the
// order a ladder climbs. An unknown name is a *catalog.UnknownProfileError.
func ProbeProfiles(site *catalog.Site, named []string) ([]string, error) {
	chosen, err := selectProfiles(site, named)
	if err != nil {
		return nil, err
	}
	var names []string
	for _, p := range site.ProfilesBySize() {
		if slices.Contains(chosen, p) {
			names = append(names, p.Name)
		}
	}
	return names, nil
}

// DefaultProbeDir is where a probe writes its variants when not told:
// migadvisor-probe-JOB-TIME, in the current directory.
func DefaultProbeDir(script string, now time.Time) string {
	base := strings.TrimSuffix(filepath.Base(script), filepath.Ext(script))
	return fmt.Sprintf("migadvisor-probe-%s-%s", base, now.Format("20060102-150405"))
}

// RecordSweep links the script's fingerprint to the sweep in dir in the history.
func RecordSweep(ctx context.Context, r Recorder, dir string, sw *Sweep) error {
	abs, err := filepath.Abs(dir)
	if err != nil {
		return err
	}
	rec := history.Sweep{Dir: abs, Script: sw.Script, Fingerprint: sw.Fingerprint, Site: sw.Site, Created: sw.Created}
	for _, name := range sw.Profiles {
		v := sw.Variants[name]
		rec.Variants = append(rec.Variants, history.Variant{Profile: v.Profile, File: v.File, Request: v.Request, JobName: v.JobName})
	}
	return r.RecordSweep(ctx, rec)
}

// RecordSubmissions links each submitted variant of the sweep in dir to
// the script in the history, tagged with workload; workDir is where sbatch ran.
func RecordSubmissions(ctx context.Context, r Recorder, dir string, sw *Sweep, workload, workDir string) error {
	abs, err := filepath.Abs(dir)
	if err != nil {
		return err
	}
	var subs []history.Submission
	for _, name := range sw.Profiles {
		v := sw.Variants[name]
		if v.JobID == "" {
			continue
		}
		subs = append(subs, history.Submission{Cluster: v.Cluster, JobID: v.JobID, Fingerprint: sw.Fingerprint, Source: sw.Script,
			Script: filepath.Join(abs, v.File), Profile: name, SweepDir: abs, Workload: workload,
			WorkDir: workDir, Stdout: v.Stdout, Submitted: v.Submitted})
	}
	if len(subs) == 0 {
		return nil
	}
	return r.RecordSubmissions(ctx, subs)
}
