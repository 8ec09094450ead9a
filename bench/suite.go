package bench

import (
	"context"
	"fmt"
	"path/filepath"
	"time"

	"github.com/migadvisor/migadvisor/bench/workloads"
	"github.com/migadvisor/migadvisor/catalog"
	"github.com/migadvisor/migadvisor/slurm"
)

// SuiteOptions say which reference workloads to run, how their job scripts
// are written, and how their jobs are followed.
type SuiteOptions struct {
	Site      *catalog.Site
	Workloads []*workloads.Workload
	// Render is how every job script is written; its Dir is the suite's
	// directory (DefaultSuiteDir), which holds one directory per workload.
	Render   workloads.RenderOptions
	Profiles []string           // by name or GRES type; none: every one of the site's
	Monitor  *slurm.MonitorWrap // nil: the variants run without the GPU memory monitor
	NoWait   bool               // submit and return: no wait, no collect
	Wait     WaitOptions
	WorkDir  string // where sbatch runs, recorded with each submission
}

// SuiteJob is one submitted variant of a workload.
type SuiteJob struct {
	Workload string `json:"workload"` // the tag its runs get (WORKLOAD@synthetic...)
	Profile  string `json:"profile"`
	JobID    string `json:"job_id"`
	Script   string `json:"script"`          // the variant
	State    string `json:"state,omitempty"` // once collected: SummaryState's words
}

// SuiteResult is what a suite submitted: also when it fails, so that the
// CLI can say which jobs run.
type SuiteResult struct {
	Jobs []SuiteJob
}

// SuiteError is a workload that could not be written, swept or submitted.
type SuiteError struct {
	Workload string
	Script   string // its job script, "" when it could not be written
	Err      error
}

func (e *SuiteError) Error() string { return fmt.Sprintf("workload %s: %v", e.Workload, e.Err) }
func (e *SuiteError) Unwrap() error { return e.Err }

// RunSuite writes each workload's job script, says what it is about to do
// (a SuiteStarting event), sweeps each script over the profiles
// and submits the variants, tagged with the workload; then, unless NoWait,
// waits for every job and collects them. An unknown profile is a
// *catalog.UnknownProfileError, before anything is written.
func RunSuite(ctx context.Context, opt SuiteOptions, deps ProbeDeps) (SuiteResult, error) {
	profiles, err := ProbeProfiles(opt.Site, opt.Profiles)
	if err != nil {
		return SuiteResult{}, err
	}
	m := newMeasurer(deps)
	var res SuiteResult
	scripts := make([]suiteScript, len(opt.Workloads))
	plan := SuitePlan{Workloads: len(opt.Workloads), Profiles: profiles, Jobs: len(opt.Workloads) * len(profiles),
		Quick: opt.Render.Quick, Synthetic: opt.Render.Synthetic, Wait: !opt.NoWait, Dir: opt.Render.Dir}
	for i, wl := range opt.Workloads {
		if scripts[i], err = renderSuiteScript(opt, wl); err != nil {
			return res, err
		}
		if t := scripts[i].script.Resources.Time; t.Duration > plan.Longest {
			plan.Longest = t.Duration
		}
	}
	m.say(ProbeEvent{Kind: SuiteStarting, Dir: opt.Render.Dir, Suite: &plan})
	for i, wl := range opt.Workloads {
		jobs, err := m.submitWorkload(ctx, opt, wl, scripts[i], profiles)
		res.Jobs = append(res.Jobs, jobs...)
		if err != nil {
			return res, err
		}
	}
	if opt.NoWait {
		return res, nil
	}
	return res, m.collectSuite(ctx, opt, res.Jobs)
}

// SuitePlan is what a suite run is about to do, for the line that says so
// before its first job.
type SuitePlan struct {
	Workloads int
	Profiles  []string
	Jobs      int           // one per workload and profile
	Quick     bool          // short runs that check the setup
	Synthetic bool          // random data of the real shapes
	Longest   time.Duration // the longest --time of the workloads' jobs
	Wait      bool          // it waits for the jobs and collects them (not --no-wait)
	Dir       string
}

// suiteScript is a workload's job script, written and read back.
type suiteScript struct {
	job, tag string
	script   *slurm.Script
}

// renderSuiteScript writes a workload's job script and reads it back.
func renderSuiteScript(opt SuiteOptions, wl *workloads.Workload) (suiteScript, error) {
	job, tag, err := RenderWorkload(opt.Site, wl, opt.Render)
	if err != nil {
		return suiteScript{}, &SuiteError{Workload: wl.Name, Err: err}
	}
	script, err := slurm.ReadScript(job)
	if err != nil {
		return suiteScript{}, &SuiteError{Workload: wl.Name, Script: job, Err: err}
	}
	return suiteScript{job: job, tag: tag, script: script}, nil
}

// submitWorkload writes a workload, sweeps it over the profiles in its
// directory's sweep/ and submits the variants: those submitted are
// returned also when a later one fails.
func (m measurer) submitWorkload(ctx context.Context, opt SuiteOptions, wl *workloads.Workload, s suiteScript, profiles []string) ([]SuiteJob, error) {
	job, tag, script := s.job, s.tag, s.script
	dir := filepath.Join(filepath.Dir(job), "sweep")
	sw, err := m.writeSweep(ctx, SweepOptions{Script: script, Site: opt.Site, Profiles: profiles, OutDir: dir, Monitor: opt.Monitor})
	if err != nil {
		return nil, &SuiteError{Workload: wl.Name, Script: job, Err: err}
	}
	subErr := m.submitSweep(ctx, dir, sw, tag, opt.WorkDir)
	var jobs []SuiteJob
	for _, p := range sw.Profiles {
		v := sw.Variants[p]
		if v.JobID == "" {
			continue
		}
		file := filepath.Join(dir, v.File)
		jobs = append(jobs, SuiteJob{Workload: tag, Profile: p, JobID: v.JobID, Script: file})
		m.say(ProbeEvent{Kind: ProbeSubmitted, Workload: tag, Dir: dir, Profile: p, JobID: v.JobID, File: file})
	}
	if subErr != nil {
		return jobs, &SuiteError{Workload: wl.Name, Script: job, Err: subErr}
	}
	return jobs, nil
}

// collectSuite waits for the suite's jobs to leave the queue, collects
// them all at once, and gives each its final state.
func (m measurer) collectSuite(ctx context.Context, opt SuiteOptions, jobs []SuiteJob) error {
	ids := make([]string, len(jobs))
	for i, j := range jobs {
		ids[i] = j.JobID
	}
	ended, err := m.waitAndCollect(ctx, opt.Render.Dir, ids, opt.Wait)
	if err != nil {
		return err
	}
	states := map[string]string{}
	for _, t := range ended.Tracked {
		states[t.JobID] = SummaryState(t.Jobs)
	}
	for i := range jobs {
		jobs[i].State = states[jobs[i].JobID]
	}
	return nil
}

// RenderWorkload writes a workload's job script into opt.Dir/<workload>,
// asking for the site's largest profile (a sweep rewrites the request for
// each profile), and returns it with the tag its runs get.
func RenderWorkload(site *catalog.Site, wl *workloads.Workload, opt workloads.RenderOptions) (job, tag string, err error) {
	ordered := site.ProfilesBySize()
	if len(ordered) == 0 {
		return "", "", fmt.Errorf("site %s has no GPU profiles", site.Name)
	}
	opt.Dir = filepath.Join(opt.Dir, wl.Name)
	opt.GPURequest = ordered[len(ordered)-1].Request
	job, err = wl.Render(opt)
	return job, wl.Tag(opt), err
}

// RenderedWorkload is a workload's job script, written, and the tag its
// runs get.
type RenderedWorkload struct {
	Workload string `json:"workload"`
	Tag      string `json:"tag"`
	Job      string `json:"job"`
}

// RenderSuite writes each workload's job script (RenderWorkload), without
// submitting any.
func RenderSuite(site *catalog.Site, ws []*workloads.Workload, opt workloads.RenderOptions) ([]RenderedWorkload, error) {
	var all []RenderedWorkload
	for _, wl := range ws {
		job, tag, err := RenderWorkload(site, wl, opt)
		if err != nil {
			return nil, err
		}
		all = append(all, RenderedWorkload{Workload: wl.Name, Tag: tag, Job: job})
	}
	return all, nil
}

// DefaultSuiteDir is where a suite writes its workloads when not told:
// migadvisor-bench-SUITE-TIME, in the current directory.
func DefaultSuiteDir(suite string, now time.Time) string {
	return fmt.Sprintf("migadvisor-bench-%s-%s", suite, now.Format("20060102-150405"))
}
