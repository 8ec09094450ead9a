package bench

import (
	"context"
	"errors"
	"fmt"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/migadvisor/migadvisor/advisor/base/outcome"
	"github.com/migadvisor/migadvisor/catalog"
	"github.com/migadvisor/migadvisor/catalog/catalogtest"
	"github.com/migadvisor/migadvisor/slurm"
)

const probeScript = "#!/bin/bash\n#SBATCH --gres=gpu:a100_10g:1\n#SBATCH --mem=16G\n#SBATCH --time=01:00:00\npython train.py\n"

// probeWorld is a probe against fakes: each profile's job ends as ends says.
type probeWorld struct {
	slurm  *fakeSlurm
	hist   *fakeHistory
	clock  *fakeClock
	events []ProbeEvent
	deps   ProbeDeps
	opt    ProbeOptions
}

func newProbeWorld(t *testing.T, ends map[string]string) *probeWorld {
	t.Helper()
	site := catalogtest.Wulver(t)
	script := catalogtest.WriteScript(t, filepath.Join(t.TempDir(), "train.sh"), probeScript)
	w := &probeWorld{slurm: newFakeSlurm(2), hist: &fakeHistory{}, clock: newFakeClock()}
	acct := &fakeAccounting{h: w.hist, slurm: w.slurm, ends: ends}
	profiles, err := ProbeProfiles(site, nil)
	if err != nil {
		t.Fatal(err)
	}
	w.opt = ProbeOptions{Sweep: SweepOptions{Script: script, Site: site, Profiles: profiles, OutDir: filepath.Join(t.TempDir(), "probe")},
		Ladder: true, WorkDir: "/work"}
	w.deps = ProbeDeps{Slurm: w.slurm, History: w.hist, Clock: w.clock,
		Collect: func(ctx context.Context, ids []string) (Ended, error) {
			return CollectEnded(ctx, acct, w.hist, site, ids, nil)
		},
		Progress: func(e ProbeEvent) { w.events = append(w.events, e) }}
	return w
}

// submittedProfiles are the profiles submitted, in order.
func (w *probeWorld) submittedProfiles() string {
	var ps []string
	for _, f := range w.slurm.submitted {
		ps = append(ps, strings.TrimSuffix(filepath.Base(f), ".sh"))
	}
	return strings.Join(ps, " ")
}

// warnings are the ProbeWarning events' errors.
func (w *probeWorld) warnings() []string {
	var out []string
	for _, e := range w.events {
		if e.Kind == ProbeWarning {
			out = append(out, e.Err.Error())
		}
	}
	return out
}

// said lists the events of some kinds as "kind:profile".
func (w *probeWorld) said(kinds ...ProbeEventKind) string {
	var out []string
	for _, e := range w.events {
		for _, k := range kinds {
			if e.Kind == k {
				out = append(out, fmt.Sprintf("%d:%s", e.Kind, e.Profile))
			}
		}
	}
	return strings.Join(out, " ")
}

// The ladder stops at the first profile whose job completes.
func TestLadderStopsAtTheFirstProfileThatCompletes(t *testing.T) {
	w := newProbeWorld(t, map[string]string{"1g.10gb": "completed", "2g.20gb": "completed"})
	res, err := Probe(context.Background(), w.opt, w.deps)
	if err != nil {
		t.Fatal(err)
	}
	if got := w.submittedProfiles(); got != "1g.10gb" {
		t.Errorf("submitted %s, want 1g.10gb only", got)
	}
	if res.Completed != "1g.10gb" || len(res.Rungs) != 1 || res.Dir() != filepath.Join(w.opt.Sweep.OutDir, "1g.10gb") {
		t.Errorf("result %+v", res)
	}
	if len(w.hist.sweeps) != 1 || len(w.hist.subs) != 1 || w.hist.subs[0].Profile != "1g.10gb" || w.hist.subs[0].WorkDir != "/work" {
		t.Errorf("recorded %+v %+v", w.hist.sweeps, w.hist.subs)
	}
}

// A GPU OOM moves up a rung; a timeout too; the ladder goes on until a
// profile completes.
func TestLadderClimbsPastAnOOMAndATimeout(t *testing.T) {
	w := newProbeWorld(t, map[string]string{"1g.10gb": "gpu-oom", "2g.20gb": "timeout", "3g.40gb": "completed"})
	res, err := Probe(context.Background(), w.opt, w.deps)
	if err != nil {
		t.Fatal(err)
	}
	if got := w.submittedProfiles(); got != "1g.10gb 2g.20gb 3g.40gb" || res.Completed != "3g.40gb" {
		t.Errorf("submitted %s, completed on %q", got, res.Completed)
	}
	want := fmt.Sprintf("%d:1g.10gb %d:1g.10gb %d:2g.20gb %d:2g.20gb %d:3g.40gb", ProbeJobEnded, ProbeNextRung, ProbeJobEnded, ProbeNextRung, ProbeJobEnded)
	if got := w.said(ProbeJobEnded, ProbeNextRung); got != want {
		t.Errorf("said %s\nwant %s", got, want)
	}
	for _, e := range w.events {
		if e.Kind == ProbeJobEnded && e.Profile == "1g.10gb" && (e.Outcome.Kind != outcome.GPUOOM || e.State != "FAILED") {
			t.Errorf("1g.10gb ended %+v", e)
		}
	}
}

// A failure no profile changes (a command not found) stops the ladder at
// once, saying which job showed it.
func TestLadderStopsAtAFailureOfTheScript(t *testing.T) {
	w := newProbeWorld(t, map[string]string{"1g.10gb": "no-command"})
	res, err := Probe(context.Background(), w.opt, w.deps)
	if err != nil {
		t.Fatal(err)
	}
	if got := w.submittedProfiles(); got != "1g.10gb" || res.StoppedAt != "1g.10gb" || res.Completed != "" {
		t.Errorf("submitted %s, result %+v", got, res)
	}
	last := w.events[len(w.events)-1]
	if last.Kind != ProbeStopped || last.JobID != "100" || last.Outcome.Kind != outcome.CommandNotFound {
		t.Errorf("last event %+v", last)
	}
}

// Without a ladder, every profile is submitted at once, into one sweep.
func TestProbeWithoutLadderSubmitsEveryProfile(t *testing.T) {
	w := newProbeWorld(t, map[string]string{})
	w.opt.Ladder = false
	w.opt.Sweep.Profiles = []string{"1g.10gb", "full"}
	res, err := Probe(context.Background(), w.opt, w.deps)
	if err != nil {
		t.Fatal(err)
	}
	if got := w.submittedProfiles(); got != "1g.10gb full" || len(res.Rungs) != 1 || res.Dir() != w.opt.Sweep.OutDir {
		t.Errorf("submitted %s, %+v", got, res)
	}
	if got := w.said(ProbeSubmitted); got != fmt.Sprintf("%d:1g.10gb %d:full", ProbeSubmitted, ProbeSubmitted) {
		t.Errorf("said %s", got)
	}
}

// Cancelled while waiting (Ctrl-C), the probe returns the context's error
// and the directory of the sweep whose jobs still run.
func TestProbeCancelledMidWait(t *testing.T) {
	w := newProbeWorld(t, map[string]string{"1g.10gb": "gpu-oom"})
	w.slurm.polls = 1000
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	w.clock.onSleep = func(n int) {
		if n == 2 {
			cancel()
		}
	}
	res, err := Probe(ctx, w.opt, w.deps)
	if !errors.Is(err, context.Canceled) || res.Dir() != filepath.Join(w.opt.Sweep.OutDir, "1g.10gb") || len(w.hist.subs) != 1 {
		t.Errorf("err %v, dir %q, recorded %d", err, res.Dir(), len(w.hist.subs))
	}
}

// A timeout while waiting ends the probe with the wait's error.
func TestProbeTimesOut(t *testing.T) {
	w := newProbeWorld(t, map[string]string{})
	w.slurm.polls = 1000
	w.opt.Wait.Timeout = 10 * time.Minute
	_, err := Probe(context.Background(), w.opt, w.deps)
	var te *TimeoutError
	if !errors.As(err, &te) || te.Queued != 1 {
		t.Errorf("err %v", err)
	}
}

// The history failing to record is said, and the probe goes on: the jobs
// are in sweep.json.
func TestProbeGoesOnWhenTheHistoryCannotRecord(t *testing.T) {
	w := newProbeWorld(t, map[string]string{"1g.10gb": "completed"})
	w.hist.failOn = "RecordSweep"
	if _, err := Probe(context.Background(), w.opt, w.deps); err != nil {
		t.Fatal(err)
	}
	var warned []string
	for _, e := range w.events {
		if e.Kind == ProbeWarning {
			warned = append(warned, e.Err.Error())
		}
	}
	if strings.Join(warned, "\n") != "the sweep is not in the history: database is locked" {
		t.Errorf("warnings %q", warned)
	}
}

// --profiles is read in size order whatever the order given, by name or
// GRES type; a name the site lacks is refused with the site's names.
func TestProbeProfiles(t *testing.T) {
	site := catalogtest.Wulver(t)
	got, err := ProbeProfiles(site, []string{"full", "a100_10g", "1g.10gb"})
	if err != nil || strings.Join(got, " ") != "1g.10gb full" {
		t.Errorf("%v %v", got, err)
	}
	_, err = ProbeProfiles(site, []string{"1g.10gb", "7g.80gb"})
	var unknown *catalog.UnknownProfileError
	if !errors.As(err, &unknown) || unknown.Name != "7g.80gb" || !strings.Contains(err.Error(), "(profiles: 1g.10gb, 2g.20gb, 3g.40gb, full)") {
		t.Errorf("%v", err)
	}
}

// A probe of a script that asks for no GPU says so once, before the first
// rung, however many rungs the ladder climbs.
func TestProbeWarnsOnceOfAScriptWithoutAGPU(t *testing.T) {
	w := newProbeWorld(t, map[string]string{"1g.10gb": "gpu-oom", "2g.20gb": "completed"})
	w.opt.Sweep.Script = catalogtest.WriteScript(t, filepath.Join(t.TempDir(), "cpu.sh"), "#!/bin/bash\n#SBATCH --time=01:00:00\npython train.py\n")
	if _, err := Probe(context.Background(), w.opt, w.deps); err != nil {
		t.Fatal(err)
	}
	var warnings []string
	for _, e := range w.events {
		if e.Kind == ProbeWarning {
			warnings = append(warnings, e.Err.Error())
		}
	}
	if len(warnings) != 1 || !strings.Contains(warnings[0], "asks for no GPU") || w.events[0].Kind != ProbeWarning {
		t.Errorf("warnings %q", warnings)
	}
}

// An emulation job that completed with no emulated run (no migadvisor on
// its node) is said, and counts as the one run it was; one that recorded
// its runs is not.
func TestAnEmulationJobThatRanPlainIsSaid(t *testing.T) {
	for _, c := range []struct {
		ends string
		warn bool
	}{{"completed", true}, {"completed-emulated", false}} {
		w := newProbeWorld(t, map[string]string{"emulate": c.ends}) // the job is emulate.sh
		w.opt.Ladder, w.opt.Sweep.Emulate = false, &slurm.EmulateWrap{}
		if _, err := Probe(context.Background(), w.opt, w.deps); err != nil {
			t.Fatal(err)
		}
		warned := strings.Contains(strings.Join(w.warnings(), "\n"), "ran the script once, not emulated")
		if got := w.submittedProfiles(); got != "emulate" || warned != c.warn {
			t.Errorf("%s: submitted %s, warnings %q; want the one emulation job, a warning %v", c.ends, got, w.warnings(), c.warn)
		}
	}
}
