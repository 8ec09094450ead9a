package bench

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/migadvisor/migadvisor/bench/workloads"
	"github.com/migadvisor/migadvisor/catalog"
	"github.com/migadvisor/migadvisor/catalog/catalogtest"
	"github.com/migadvisor/migadvisor/slurm"
)

// suiteWorld is a suite of two workloads against fakes: each profile's
// job ends as ends says.
type suiteWorld struct {
	slurm  *fakeSlurm
	hist   *fakeHistory
	acct   *fakeAccounting
	events []ProbeEvent
	opt    SuiteOptions
	deps   ProbeDeps
}

func newSuiteWorld(t *testing.T, ends map[string]string) *suiteWorld {
	t.Helper()
	site := catalogtest.Wulver(t)
	suite, err := workloads.LookupSuite(workloads.DefaultSuite)
	if err != nil {
		t.Fatal(err)
	}
	ws, err := suite.Select([]string{"pytorch_mnist_simplecnn", "gromacs_performance"})
	if err != nil {
		t.Fatal(err)
	}
	w := &suiteWorld{slurm: newFakeSlurm(2), hist: &fakeHistory{}}
	w.acct = &fakeAccounting{h: w.hist, slurm: w.slurm, ends: ends}
	w.opt = SuiteOptions{Site: site, Workloads: ws, Render: workloads.RenderOptions{Dir: filepath.Join(t.TempDir(), "bench"), Synthetic: true},
		Profiles: []string{"full", "1g.10gb"}, WorkDir: "/work"}
	w.deps = ProbeDeps{Slurm: w.slurm, History: w.hist, Clock: newFakeClock(),
		Collect: func(ctx context.Context, ids []string) (Ended, error) {
			return CollectEnded(ctx, w.acct, w.hist, site, ids, nil)
		},
		Progress: func(e ProbeEvent) { w.events = append(w.events, e) }}
	return w
}

func (w *suiteWorld) jobs(res SuiteResult) string {
	var out []string
	for _, j := range res.Jobs {
		out = append(out, fmt.Sprintf("%s/%s/%s/%s", j.Workload, j.Profile, j.JobID, j.State))
	}
	return strings.Join(out, " ")
}

// Each workload is written, swept from the smallest profile in its own
// sweep/ directory and submitted, tagged with its variant's tag; then every
// job is waited for, collected at once, and given its final state.
func TestRunSuiteSubmitsEachWorkloadThenCollects(t *testing.T) {
	w := newSuiteWorld(t, map[string]string{"1g.10gb": "gpu-oom", "full": "completed"})
	res, err := RunSuite(context.Background(), w.opt, w.deps)
	if err != nil {
		t.Fatal(err)
	}
	want := "pytorch_mnist_simplecnn@synthetic/1g.10gb/100/FAILED pytorch_mnist_simplecnn@synthetic/full/101/COMPLETED " +
		"gromacs_performance@synthetic/1g.10gb/102/FAILED gromacs_performance@synthetic/full/103/COMPLETED"
	if got := w.jobs(res); got != want {
		t.Errorf("jobs %s\nwant %s", got, want)
	}
	if first := filepath.Join(w.opt.Render.Dir, "pytorch_mnist_simplecnn", "sweep", "1g.10gb.sh"); res.Jobs[0].Script != first || w.slurm.submitted[0] != first {
		t.Errorf("first variant %s (submitted %s), want %s", res.Jobs[0].Script, w.slurm.submitted[0], first)
	}
	if len(w.hist.sweeps) != 2 || len(w.hist.subs) != 4 || w.hist.subs[2].Workload != "gromacs_performance@synthetic" || w.hist.subs[2].WorkDir != "/work" {
		t.Errorf("recorded %d sweeps and submissions %+v", len(w.hist.sweeps), w.hist.subs)
	}
	var submitted, collected int
	for _, e := range w.events {
		switch e.Kind {
		case ProbeSubmitted:
			submitted++
			if e.Workload == "" || e.JobID == "" || e.Profile == "" {
				t.Errorf("a submission said without its workload, job or profile: %+v", e)
			}
		case ProbeCollected:
			collected++
		}
	}
	if submitted != 4 || collected != 1 {
		t.Errorf("said %d submissions and %d collects, want 4 and 1", submitted, collected)
	}
	// The job scripts ask for the site's largest profile; the sweep rewrites it.
	job, err := os.ReadFile(filepath.Join(w.opt.Render.Dir, "gromacs_performance", "gromacs_performance.sh"))
	if full, _ := w.opt.Site.LookupProfile("full"); err != nil || !strings.Contains(string(job), full.Request) {
		t.Errorf("the job script does not ask for %s (%v)", "full", err)
	}
}

// With NoWait the suite submits and returns: no wait, no collect, no states.
func TestRunSuiteNoWaitOnlySubmits(t *testing.T) {
	w := newSuiteWorld(t, nil)
	w.opt.NoWait = true
	res, err := RunSuite(context.Background(), w.opt, w.deps)
	if err != nil {
		t.Fatal(err)
	}
	if len(res.Jobs) != 4 || res.Jobs[3].State != "" || len(w.slurm.seen) != 0 || len(w.hist.records) != 0 {
		t.Errorf("jobs %s; squeue asked about %d jobs, %d records collected", w.jobs(res), len(w.slurm.seen), len(w.hist.records))
	}
}

// An unknown profile refuses the suite before anything is written.
func TestRunSuiteRefusesAnUnknownProfile(t *testing.T) {
	w := newSuiteWorld(t, nil)
	w.opt.Profiles = []string{"5g.50gb"}
	_, err := RunSuite(context.Background(), w.opt, w.deps)
	var unknown *catalog.UnknownProfileError
	if !errors.As(err, &unknown) {
		t.Fatalf("error %v, want an unknown profile", err)
	}
	if _, err := os.Stat(w.opt.Render.Dir); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("a refused suite wrote %s", w.opt.Render.Dir)
	}
}

// A failing squeue stops the suite after it submitted: the jobs come back
// with the error, so that the CLI lists them.
func TestRunSuiteKeepsTheJobsOfAFailedWait(t *testing.T) {
	w := newSuiteWorld(t, nil)
	w.slurm.queueErr = errors.New("slurm_load_jobs error: Socket timed out")
	res, err := RunSuite(context.Background(), w.opt, w.deps)
	if err == nil || !strings.Contains(err.Error(), "Socket timed out") || len(res.Jobs) != 4 {
		t.Errorf("error %v, jobs %s", err, w.jobs(res))
	}
}

// A workload that cannot be submitted is a *SuiteError naming it and its
// script; the workloads before it keep their jobs.
func TestRunSuiteNamesTheWorkloadThatFailed(t *testing.T) {
	w := newSuiteWorld(t, nil)
	w.deps.Slurm = failingSubmit{w.slurm, 3}
	res, err := RunSuite(context.Background(), w.opt, w.deps)
	var failed *SuiteError
	if !errors.As(err, &failed) || failed.Workload != "gromacs_performance" || filepath.Base(failed.Script) != "gromacs_performance.sh" ||
		!strings.HasPrefix(err.Error(), "workload gromacs_performance: submit full: ") {
		t.Fatalf("error %v", err)
	}
	if len(res.Jobs) != 3 || res.Jobs[2].Profile != "1g.10gb" {
		t.Errorf("jobs %s: want the 3 submitted", w.jobs(res))
	}
	if len(w.hist.subs) != 3 {
		t.Errorf("recorded %d submissions, want the 3 submitted", len(w.hist.subs))
	}
}

// failingSubmit is Slurm whose sbatch fails after n submissions.
type failingSubmit struct {
	*fakeSlurm
	n int
}

func (s failingSubmit) Submit(ctx context.Context, dir, script string, args ...string) (slurm.JobRef, error) {
	if len(s.submitted) >= s.n {
		return slurm.JobRef{}, errors.New("sbatch: error: Batch job submission failed")
	}
	return s.fakeSlurm.Submit(ctx, dir, script, args...)
}

// A workload's job script is its directory's, named by the workload; its
// runs' tag says synthetic or quick; a site without profiles has nothing
// to ask for.
func TestRenderWorkloadAsksForTheLargestProfile(t *testing.T) {
	site := catalogtest.Wulver(t)
	wl, ok := workloads.Find("pytorch_mnist_simplecnn")
	if !ok {
		t.Fatal("no pytorch_mnist_simplecnn")
	}
	dir := t.TempDir()
	job, tag, err := RenderWorkload(site, wl, workloads.RenderOptions{Dir: dir, Quick: true})
	if err != nil {
		t.Fatal(err)
	}
	if job != filepath.Join(dir, "pytorch_mnist_simplecnn", "pytorch_mnist_simplecnn.sh") || tag != "pytorch_mnist_simplecnn@quick" {
		t.Errorf("job %s, tag %s", job, tag)
	}
	empty := *site
	empty.Profiles = nil
	if _, _, err := RenderWorkload(&empty, wl, workloads.RenderOptions{Dir: dir}); err == nil || !strings.Contains(err.Error(), "has no GPU profiles") {
		t.Errorf("a site without profiles: %v", err)
	}
}

// Before its first job, a suite says what it is about to do: how many
// jobs of how many workloads on which profiles, what kind of runs, and
// the longest --time it may wait for (both ask for 01:00:00).
func TestRunSuiteSaysWhatItDoesFirst(t *testing.T) {
	w := newSuiteWorld(t, map[string]string{"1g.10gb": "completed", "full": "completed"})
	w.opt.Render.Quick = true
	if _, err := RunSuite(context.Background(), w.opt, w.deps); err != nil {
		t.Fatal(err)
	}
	first := w.events[0]
	if first.Kind != SuiteStarting || first.Suite == nil {
		t.Fatalf("first event %+v", first)
	}
	p := first.Suite
	if p.Jobs != 4 || p.Workloads != 2 || strings.Join(p.Profiles, ",") != "1g.10gb,full" || !p.Quick || !p.Synthetic || !p.Wait ||
		p.Longest.String() != "1h0m0s" || p.Dir != w.opt.Render.Dir {
		t.Errorf("plan %+v", p)
	}
}
