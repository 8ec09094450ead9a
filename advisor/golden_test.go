package advisor

import (
	"bytes"
	"encoding/json"
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/migadvisor/migadvisor/advisor/base/history"
	"github.com/migadvisor/migadvisor/advisor/base/outcome"
	"github.com/migadvisor/migadvisor/advisor/base/runmodel"
	"github.com/migadvisor/migadvisor/catalog"
	"github.com/migadvisor/migadvisor/catalog/catalogtest"
	"github.com/migadvisor/migadvisor/slurm"
)

// The engine's golden outputs: every recommendation the package's own tests
// make, and the site's reference benchmarks as histories and as priors,
// written as recommend prints them (JSON and text) under
// testdata/recommend/<case>. They hold the engine's behaviour still while
// its inside changes: go test ./advisor -run TestRecommendGolden -update
// rewrites them, and a diff of them is a change of behaviour.
var update = flag.Bool("update", false, "rewrite the golden outputs under testdata/recommend")

const goldenDir = "testdata/recommend"

// goldenCase is one recommendation: the job, built for the site, and the options.
type goldenCase struct {
	name string
	job  func(t *testing.T, site *catalog.Site) Job
	opt  Options
	// unpriced names a profile the site's SU formula fails on.
	unpriced string
}

type jobOf = func(t *testing.T, site *catalog.Site) Job

// asked is job.sh, the recommend tests' script with directives added,
// read for its resources alone (no change is shown).
func asked(directives string, runs ...Run) jobOf {
	return func(*testing.T, *catalog.Site) Job {
		s := slurm.Parse("job.sh", []byte(script+directives+"srun ./train\n"))
		return Job{Script: "job.sh", Resources: s.Resources, Runs: runs}
	}
}

// sourced is a job whose script is given (the change is shown), read at
// path: the files beside it are its software.
func sourced(path, text string, runs ...Run) jobOf {
	return func(*testing.T, *catalog.Site) Job {
		s := slurm.Parse(path, []byte(text))
		return Job{Script: "job.sh", Resources: s.Resources, Source: s, Runs: runs}
	}
}

// with changes the job f builds.
func with(f jobOf, change func(t *testing.T, site *catalog.Site, j *Job)) jobOf {
	return func(t *testing.T, site *catalog.Site) Job {
		j := f(t, site)
		change(t, site, &j)
		return j
	}
}

func benchmarkOf(t *testing.T, site *catalog.Site, name string) *catalog.Benchmark {
	t.Helper()
	set, _ := catalog.ReferenceFor(site)
	b, ok := set.Benchmark(name)
	if !ok {
		t.Fatalf("no %s reference benchmark", name)
	}
	return b
}

func resembling(name string) func(*testing.T, *catalog.Site, *Job) {
	return func(t *testing.T, site *catalog.Site, j *Job) { j.Resembles = benchmarkOf(t, site, name) }
}

// goldenCases are the recommendations of recommend_test.go, trust_test.go,
// decide_probe_test.go, emulated_test.go, memory_test.go, peers_test.go,
// the submission tests and recommend_wulver_test.go, with their inputs
// copied (runs in a fixed order), and more: CPU-only scripts, multi-GPU
// scripts, failures, options.
func goldenCases(t *testing.T, site *catalog.Site) []goldenCase {
	cases := slices.Concat(recommendCases(), trustCases(), probeCases(), emulatedCases(site), memoryCases(), peerCases(site),
		submissionCases(), moreCases())
	set, _ := catalog.ReferenceFor(site)
	for i := range set.Benchmarks {
		b := &set.Benchmarks[i]
		name := strings.NewReplacer("@", "-at-", " ", "-").Replace(b.Name)
		res := func(t *testing.T, b *catalog.Benchmark) slurm.Resources { return scriptResources(t, b, "") }
		cases = append(cases, goldenCase{name: "history-" + name, job: func(t *testing.T, site *catalog.Site) Job {
			return Job{Script: "job.sh", Resources: res(t, b), Runs: wulverHistory(t, site, b)}
		}})
		if b.IsPrior() {
			cases = append(cases, goldenCase{name: "prior-" + name, job: func(t *testing.T, site *catalog.Site) Job {
				return Job{Script: "job.sh", Resources: res(t, b), Prior: b}
			}})
		}
		// Measured on its biggest profile alone, and looking like itself.
		cases = append(cases, goldenCase{name: "resembles-" + name, job: func(t *testing.T, site *catalog.Site) Job {
			runs := wulverHistory(t, site, b)
			return Job{Script: "job.sh", Resources: res(t, b), Runs: runs[len(runs)-1:], Resembles: b}
		}})
	}
	for _, o := range []struct {
		name string
		opt  Options
	}{{"time", Options{Objective: ObjectiveTime}}, {"turnaround", Options{Objective: ObjectiveTurnaround}},
		{"tolerance", Options{SUTolerance: 0.9}}, {"lowrisk", Options{LowRiskShare: 0.94}}, {"slowdown", Options{MaxSlowdown: 1.5}}} {
		cases = append(cases, goldenCase{name: "history-llm-finetuning-at-a5945c9-" + o.name, opt: o.opt, job: func(t *testing.T, site *catalog.Site) Job {
			b := benchmarkOf(t, site, "llm-finetuning@a5945c9")
			return Job{Script: "job.sh", Resources: scriptResources(t, b, ""), Runs: wulverHistory(t, site, b)}
		}})
	}
	return cases
}

func recommendCases() []goldenCase {
	killed := newRun("2g.20gb", 300).peak(2048)
	killed.Completed, killed.HostOOM, killed.State, killed.ReqMemMiB, killed.MaxRSSMiB = false, true, "OUT_OF_MEMORY", 4096, 4090
	failed := newRun("2g.20gb", 30).peak(1024)
	failed.Completed, failed.State, failed.ExitCode = false, "FAILED", 3
	busy := newRun("full", 600).util(40)
	busy.MemUtilization = 36
	var tolerance []Run
	for i, d := range []float64{-5, 0, 5} {
		tolerance = append(tolerance, newRun("1g.10gb", 3600+d).peak(1024).id(fmt.Sprint("a", i)), newRun("2g.20gb", 2088+d).peak(1024).id(fmt.Sprint("b", i)))
	}
	ladder := []Run{newRun("1g.10gb", 4000).peak(1024), newRun("2g.20gb", 2200).peak(1024), newRun("3g.40gb", 1500).peak(1024), newRun("full", 1000).peak(1024)}
	capped := []Run{newRun("1g.10gb", 600).peak(2048).work(100, "step").timeout(), newRun("full", 600).peak(2048).work(600, "step").timeout()}
	var fixedTime, sameWork []Run
	for _, c := range []struct {
		p      string
		ns, s  float64
		single float64
	}{{"1g.10gb", 1.0, 3000, 0}, {"2g.20gb", 1.9, 1600, 0}, {"3g.40gb", 3.6, 900, 0}, {"full", 3.8, 800, 0}} {
		for i := range 3 {
			fixedTime = append(fixedTime, newRun(c.p, 600+float64(i)).peak(2048).work(c.ns, "ns"))
		}
		sameWork = append(sameWork, newRun(c.p, c.s).peak(2048).work(100, "ns"))
	}
	at := time.Date(2026, 11, 20, 1, 0, 0, 0, time.UTC)
	fail := func(p string, minutes int, text string) Run {
		r := newRun(p, 5)
		r.Completed, r.State, r.ExitCode, r.JobID = false, "FAILED", 1, fmt.Sprint(100+minutes)
		r.Submitted, r.Outcome = at.Add(time.Duration(minutes)*time.Minute), outcome.Outcome{Kind: outcome.Failed, Text: text}
		return r
	}
	fails := []Run{fail("1g.10gb", 0, "failed with exit code 1; err-100.txt line 3: ModuleNotFoundError: No module named 'x'"),
		fail("full", 1, "failed with exit code 1; err-101.txt line 3: ModuleNotFoundError: No module named 'x'")}
	done := newRun("1g.10gb", 60).peak(1024)
	done.Submitted = at.Add(time.Hour)
	late := fail("2g.20gb", 120, "failed with exit code 1")
	return []goldenCase{
		{name: "full-only-predicts-the-slices", job: asked("", newRun("full", 3600).peak(3072))},
		{name: "no-memory-evidence", job: asked("", newRun("full", 600))},
		{name: "memory-margin", job: asked("", newRun("full", 3600).peak(8704))},
		{name: "memory-margin-low-risk-share", job: asked("", newRun("full", 3600).peak(8704)), opt: Options{LowRiskShare: 0.93}},
		{name: "oom-ladder", job: asked("", newRun("1g.10gb", 60).oom(12000), newRun("2g.20gb", 60).oom(-1), newRun("3g.40gb", 1800).peak(30000))},
		{name: "oom-everywhere", job: asked("", newRun("full", 60).oom(90000))},
		{name: "completed-under-a-ceiling", job: asked("", newRun("2g.20gb", 1000).peak(19456), newRun("3g.40gb", 700).peak(30000))},
		{name: "completed-with-a-need", job: asked("", newRun("2g.20gb", 1000).peak(19456), newRun("3g.40gb", 700).peak(19500))},
		{name: "time-limit-advice", job: asked("#SBATCH --time=01:10:00\n", newRun("full", 3600).peak(2048))},
		{name: "time-limit-beyond-the-partition", job: asked("#SBATCH --time=3-00:00:00\n", newRun("full", 65*3600).peak(2048))},
		{name: "time-limit-none-asked-long-job", job: asked("", newRun("full", 65*3600).peak(2048))},
		{name: "time-limit-reached-the-partitions", job: asked("#SBATCH --time=3-00:00:00\n", newRun("1g.10gb", 72*3600).peak(2048).timeout())},
		{name: "timeout-lower-bound", job: asked("#SBATCH --time=15:00\n", newRun("full", 600).peak(1024), newRun("1g.10gb", 900).peak(1024).timeout())},
		{name: "timeouts-only", job: asked("#SBATCH --time=15:00\n", newRun("1g.10gb", 900).peak(1024).timeout())},
		{name: "work-rate-of-capped-probes", job: asked("#SBATCH --time=10:00\n", capped...)},
		{name: "work-rate-with-a-completion", job: asked("#SBATCH --time=2:00:00\n", append(slices.Clone(capped), newRun("3g.40gb", 4500).peak(2048).work(3000, "step"))...)},
		{name: "su-tolerance", job: asked("", tolerance...)},
		{name: "su-tolerance-1pct", job: asked("", tolerance...), opt: Options{SUTolerance: 0.01}},
		{name: "objective-time", job: asked("", ladder...), opt: Options{Objective: ObjectiveTime}},
		{name: "max-slowdown", job: asked("", ladder...), opt: Options{MaxSlowdown: 2.5}},
		{name: "objective-turnaround", opt: Options{Objective: ObjectiveTurnaround}, job: with(asked("", ladder...), func(_ *testing.T, _ *catalog.Site, j *Job) {
			j.Script, j.QueueWaitS = "", map[string]float64{"1g.10gb": 60, "2g.20gb": 600, "3g.40gb": 3600, "full": 7200}
		})},
		{name: "objective-turnaround-some-waits", opt: Options{Objective: ObjectiveTurnaround}, job: with(asked("", ladder...), func(_ *testing.T, _ *catalog.Site, j *Job) {
			j.QueueWaitS = map[string]float64{"2g.20gb": 600, "full": 7200}
		})},
		{name: "host-oom", job: asked("", killed, newRun("full", 600).peak(2048))},
		{name: "host-oom-asks-for-more", job: asked("#SBATCH --mem=16G\n", killed)},
		{name: "prior-md", job: with(asked("#SBATCH --cpus-per-task=4\n#SBATCH --mem=16G\n"), func(t *testing.T, site *catalog.Site, j *Job) {
			j.Script, j.Prior = "md.sh", benchmarkOf(t, site, "gromacs_performance")
		})},
		{name: "no-history", job: asked("")},
		{name: "unknown-risk-probe", job: asked("", newRun("full", 60).timeout())},
		{name: "oom-with-no-figure", job: asked("", newRun("2g.20gb", 60).oom(-1))},
		{name: "advice-that-stands", job: asked("", newRun("1g.10gb", 600).peak(3000), newRun("2g.20gb", 400).peak(3000))},
		{name: "unexplained-failure", job: asked("", failed, newRun("full", 60).peak(1024))},
		{name: "only-an-oom", job: asked("", newRun("1g.10gb", 100).oom(12000))},
		{name: "one-busy-run", job: asked("", busy)},
		{name: "sm-ratio", job: asked("", newRun("1g.10gb", 800), newRun("2g.20gb", 400))},
		{name: "work-done-in-a-fixed-time", job: asked("", fixedTime...)},
		{name: "same-work-everywhere", job: asked("", sameWork...)},
		{name: "measured-before-predicted", job: asked("", newRun("1g.10gb", 1000).peak(2048), newRun("full", 400).peak(2048))},
		{name: "measured-on-one-profile", job: asked("", newRun("full", 3600).peak(2048))},
		{name: "fails-everywhere", job: asked("", fails...)},
		{name: "fails-on-one-profile", job: asked("", fails[0])},
		{name: "fails-then-fixed", job: asked("", append(slices.Clone(fails), done)...)},
		{name: "fails-after-a-fix", job: asked("", append(slices.Clone(fails), done, late)...)},
		{name: "unpriced-slice", job: asked("", newRun("full", 3600).peak(3072)), unpriced: "1g.10gb"},
	}
}

func trustCases() []goldenCase {
	var three []Run
	for i, d := range []float64{0, 5, 10} {
		three = append(three, newRun("1g.10gb", 1000+d).peak(1024).id("a"+string(rune('0'+i))),
			newRun("2g.20gb", 560+d/2).peak(1024).id("b"+string(rune('0'+i))))
	}
	noisy := append(slices.Clone(three), newRun("2g.20gb", 800).peak(1024).id("b9"), newRun("2g.20gb", 500).peak(1024).id("b8"))
	src := "#!/bin/bash\n#SBATCH --partition=gpu\n#SBATCH --gres=gpu:a100:1\n#SBATCH --cpus-per-task=1\n#SBATCH --mem=4G\n#SBATCH --time=30\npython train.py\n"
	now := time.Date(2026, 11, 20, 12, 0, 0, 0, time.UTC)
	var monthly []Run
	for i := range 4 {
		r := newRun("full", 2400).peak(2867).id(string(rune('a' + i)))
		r.Submitted = now.Add(-time.Duration(i) * 72 * time.Hour)
		monthly = append(monthly, r)
	}
	old := newRun("full", 2400).peak(2867).id("old")
	old.Submitted = now.Add(-60 * 24 * time.Hour)
	monthly = append(monthly, old)
	two := func(r Run) Run { r.GPUs = 2; return r }
	versions := []Run{newRun("full", 600).peak(2867).earlier().id("o1"), newRun("full", 600).peak(2867).earlier().id("o2"),
		newRun("full", 600).peak(2867).id("n1")}
	cancelled := newRun("full", 0).id("c")
	cancelled.Completed, cancelled.State = false, "CANCELLED"
	crashed := newRun("1g.10gb", 30).work(1e6, "samples")
	crashed.Completed, crashed.HostOOM, crashed.State = false, true, "OUT_OF_MEMORY"
	short := "#!/bin/bash\n#SBATCH -p gpu\n#SBATCH --gres=gpu:a100:1\n#SBATCH -c 1\n#SBATCH --mem=4G\nrun\n"
	users := time.Date(2026, 11, 20, 0, 0, 0, 0, time.UTC)
	var byUser []Run
	for i, u := range []string{"alice", "bob", "bob", "bob"} {
		r := newRun("full", 3600).peak(2048).id(fmt.Sprint(i))
		r.User, r.Submitted = u, users.Add(-time.Duration(i)*time.Hour)
		byUser = append(byUser, r)
	}
	var probe []Run
	for i, p := range []string{"1g.10gb", "2g.20gb", "3g.40gb", "full"} {
		r := newRun(p, 4000).peak(2048).id(fmt.Sprint("p", i))
		r.User, r.Submitted, r.Swept = "alice", users.Add(-time.Minute), true
		probe = append(probe, r)
	}
	alice := func(_ *testing.T, _ *catalog.Site, j *Job) { j.User = "alice" }
	tie := "#!/bin/bash\n#SBATCH -p gpu\n#SBATCH --gres=gpu:a100_20g:1\n#SBATCH -c 1\n#SBATCH --mem=4G\nrun\n"
	scripted := func(name string) func(*testing.T, *catalog.Site, *Job) {
		return func(_ *testing.T, _ *catalog.Site, j *Job) { j.Script = name }
	}
	bounds := []Run{newRun("1g.10gb", 4).peak(1024).id("236"), newRun("1g.10gb", 68).peak(1024).id("194").timeout(), newRun("full", 11).peak(1024).id("300")}
	budget := []Run{newRun("full", 14407).peak(3072).util(25).timeout().id("1"), newRun("full", 14405).peak(3072).util(25).timeout().id("2"),
		newRun("full", 14410).peak(3072).util(25).timeout().id("3")}
	return []goldenCase{
		{name: "timed-out-never-chosen-on-a-prediction", job: asked("#SBATCH --time=10:00\n", newRun("full", 300).peak(1024).util(10), newRun("1g.10gb", 600).peak(1024).util(10).timeout())},
		{name: "bound-on-a-bigger-profile", job: asked("#SBATCH --time=1:00:00\n", newRun("full", 1200).peak(1024).util(10), newRun("2g.20gb", 3600).peak(1024).util(10).timeout())},
		{name: "tie-one-run-each", job: asked("", newRun("1g.10gb", 1000).peak(1024), newRun("2g.20gb", 560).peak(1024))},
		{name: "tie-three-steady-runs", job: asked("", three...)},
		{name: "tie-noisy-runs", job: asked("", noisy...)},
		{name: "multi-gpu-no-runs", job: asked("#SBATCH --gres=gpu:a100:2\n")},
		{name: "su-per-work-unit", job: asked("", newRun("1g.10gb", 1000).peak(1024).work(8e6, "samples"))},
		{name: "figures-rounded", job: asked("", newRun("1g.10gb", 3.149949263241184).peak(1024))},
		{name: "change-and-savings", job: with(sourced("job.sh", src, monthly...), func(_ *testing.T, _ *catalog.Site, j *Job) { j.Now = now })},
		{name: "earlier-exact", job: asked("", newRun("full", 600).peak(7168))},
		{name: "earlier-version", job: asked("", newRun("full", 600).peak(7168).earlier())},
		{name: "earlier-completion", job: asked("", newRun("1g.10gb", 600).peak(9400).earlier())},
		{name: "multi-gpu-own-runs", job: asked("#SBATCH --gres=gpu:a100:2\n", two(newRun("full", 600).peak(5000).id("900001")),
			two(newRun("full", 620).peak(5000).id("900002")), newRun("full", 1000).peak(5000).id("1gpu"))},
		{name: "this-version-outweighs", job: asked("", versions...)},
		{name: "this-version-cancelled", job: asked("", versions[0], versions[1], cancelled)},
		{name: "need-names-its-runs", job: asked("", append(runsOn("1g.10gb", 1, 60, 0, true), newRun("3g.40gb", 600).peak(8000), newRun("full", 500).peak(8000))...)},
		{name: "crashed-run-no-work-rate", job: asked("", crashed)},
		{name: "monthly-rate-users-own", job: with(sourced("job.sh", short, append(slices.Clone(byUser), probe...)...), alice)},
		{name: "monthly-rate-probe-only", job: with(sourced("job.sh", short, probe...), alice)},
		{name: "tie-with-the-profile-asked-for", job: with(sourced("tie.sh", tie, newRun("1g.10gb", 600).peak(1024).id("a"), newRun("1g.10gb", 610).peak(1024).id("b"),
			newRun("2g.20gb", 340).peak(1024).id("c"), newRun("2g.20gb", 345).peak(1024).id("d")), scripted("tie.sh"))},
		{name: "su-per-work-follows-the-bound", job: asked("#SBATCH --time=2:00:00\n", newRun("full", 600).peak(2048).work(1e6, "tokens").util(10),
			newRun("1g.10gb", 7200).peak(2048).work(5e5, "tokens").util(10).timeout())},
		{name: "multi-gpu-slices-no-figures", job: asked("#SBATCH --gres=gpu:a100:2\n", newRun("full", 600).peak(2048))},
		{name: "bound-model-and-next-step", job: asked("#SBATCH --time=1:00:00\n", newRun("full", 600).id("1"), newRun("full", 620).id("2"), newRun("1g.10gb", 3630).id("3").timeout())},
		{name: "best-that-ties", job: asked("", newRun("1g.10gb", 1000).peak(1024), newRun("2g.20gb", 600).peak(1024))},
		{name: "best-far-apart", job: asked("", newRun("1g.10gb", 1000).peak(1024), newRun("2g.20gb", 900).peak(1024))},
		{name: "timeout-beside-a-completion", job: asked("#SBATCH --time=1\n", bounds...), opt: Options{Objective: ObjectiveTime}},
		{name: "timeout-below-the-median", job: asked("#SBATCH --time=5\n", append(slices.Clone(bounds), newRun("1g.10gb", 80).peak(1024).id("237"), newRun("1g.10gb", 90).peak(1024).id("238"))...)},
		{name: "saving-within-the-noise", job: with(sourced("tie.sh", tie, newRun("1g.10gb", 1000).peak(1024).id("a"), newRun("2g.20gb", 620).peak(1024).id("b")), scripted("tie.sh"))},
		{name: "saving-clear", job: with(sourced("tie.sh", tie, newRun("1g.10gb", 1000).peak(1024).id("a"), newRun("2g.20gb", 900).peak(1024).id("b")), scripted("tie.sh"))},
		{name: "time-budget", job: asked("#SBATCH --time=4:00:00\n", budget...)},
		{name: "time-budget-one-run", job: asked("#SBATCH --time=4:00:00\n", budget[0])},
		{name: "time-budget-two-limits", job: asked("#SBATCH --time=4:00:00\n", budget[0], newRun("full", 7207).peak(3072).util(25).timeout().id("4"))},
		{name: "time-budget-one-completion", job: asked("#SBATCH --time=4:00:00\n", append([]Run{newRun("full", 9000).peak(3072).util(25).id("5")}, budget...)...)},
		{name: "time-budget-with-work", job: asked("#SBATCH --time=4:00:00\n", budget[0].work(40, "ns"), budget[1].work(41, "ns"), budget[2].work(40.5, "ns"))},
		{name: "time-budget-on-a-slice", job: asked("#SBATCH --time=4:00:00\n", newRun("2g.20gb", 14407).peak(3072).timeout().id("1"), newRun("2g.20gb", 14405).peak(3072).timeout().id("2"))},
	}
}

func probeCases() []goldenCase {
	full := newRun("full", 3600).peak(23.5 * 1024)
	var rates []Run
	for i, sec := range []float64{30000, 36000, 40000, 33000} {
		rate := 10.0 * (1 + 0.02*float64(i%2))
		rates = append(rates, newRun("1g.10gb", sec).work(sec*rate, "samples"))
	}
	jax := newRun("full", 3600).peak(60 * 1024)
	jax.Software = []string{"jax"}
	var tied []Run
	for _, sec := range []float64{36000, 40000, 44000} {
		tied = append(tied, newRun("1g.10gb", sec).peak(7*1024))
	}
	return []goldenCase{
		{name: "probe-the-best-predicted-saving", job: with(sourced("testdata/scripts/peft/job.sh", script+"python finetune.py\n", full, full), resembling("llm-finetuning"))},
		{name: "different-work-scaled-like-its-workload", job: with(sourced("job.sh", script+"./run.sh\n", newRun("full", 32802).work(45.7, "ns"),
			newRun("full", 31355).work(41.9, "ns"), newRun("3g.40gb", 26923)), resembling("gromacs_performance"))},
		{name: "noise-of-different-work", job: sourced("job.sh", script+"./run.sh\n", rates...)},
		{name: "cheaper-slice-open", job: sourced("testdata/scripts/job.sh", script+"python3 -c 'import jax'\n", jax, jax)},
		{name: "tie-passed-over-for-an-untried-profile", job: with(sourced("job.sh", script+"python finetune.py\n", tied...), resembling("llm-finetuning"))},
	}
}

func emulatedCases(wulver *catalog.Site) []goldenCase {
	h100, a100 := "NVIDIA H100 80GB HBM3", "NVIDIA A100-SXM4-80GB"
	cancelled := newRun("2g.20gb", 0)
	cancelled.Completed, cancelled.State = false, "CANCELLED"
	at := func(r Run, sm, bw float64) Run {
		r = r.emulatedOn(a100)
		r.RanAt = &catalog.Shares{SM: sm, Bandwidth: bw}
		return r
	}
	whole := newRun("full", 100).peak(2000).emulatedOn(a100)
	whole.EmulatedWhole = true
	ran := [][2]float64{{0.13, 0.40}, {0.26, 0.72}, {0.39, 0.89}}
	var streaming, computing []Run
	for i, p := range []string{"1g.10gb", "2g.20gb", "3g.40gb"} {
		streaming = append(streaming, at(newRun(p, 100/ran[i][1]).peak(2000), ran[i][0], ran[i][1]))
		computing = append(computing, at(newRun(p, 100/ran[i][0]).peak(2000), ran[i][0], ran[i][0]))
	}
	cnnWhole := newRun("full", 1e5/21628.2).peak(2000).emulatedOn(a100)
	cnnWhole.EmulatedWhole = true
	cnn := []Run{cnnWhole}
	for _, r := range []struct {
		profile       string
		sm, bw, rate  float64
		util, memUtil float64
	}{
		{"1g.10gb", 16.0 / 132, 1127 / 2956.0, 9849.3, 43, 4},
		{"2g.20gb", 34.0 / 132, 2122.1 / 2956, 15764.4, 28, 7},
		{"3g.40gb", 50.0 / 132, 2619.2 / 2956, 18883.3, 26, 8},
	} {
		run := newRun(r.profile, 1e5/r.rate).peak(2000).emulatedOn(a100)
		run.RanAt = &catalog.Shares{SM: r.sm, Bandwidth: r.bw}
		run.Utilization, run.MemUtilization = r.util, r.memUtil
		cnn = append(cnn, run)
	}
	scaled := func(sm float64) float64 { return 0.2 + 0.8/sm }
	busyPct := func(sm float64) float64 { return 100 * (0.8 / sm) / scaled(sm) }
	var elsewhere []Run
	for _, r := range []struct {
		profile string
		sm, bw  float64
	}{{"1g.10gb", 16.0 / 132, 0.38}, {"2g.20gb", 34.0 / 132, 0.72}, {"3g.40gb", 50.0 / 132, 0.89}} {
		run := newRun(r.profile, 50*scaled(r.sm)).peak(2000).emulatedOn(h100)
		run.RanAt = &catalog.Shares{SM: r.sm, Bandwidth: r.bw}
		run.Utilization, run.MemUtilization = busyPct(r.sm), 10
		elsewhere = append(elsewhere, run)
	}
	h100Whole := newRun("full", 50).peak(2000).emulatedOn(h100)
	h100Whole.EmulatedWhole, h100Whole.Utilization, h100Whole.MemUtilization = true, busyPct(1), 10
	elsewhere = append(elsewhere, h100Whole)
	const idle, gpu = 60.0, 19.0
	var fed []Run
	for _, c := range []struct {
		p     string
		noise float64
	}{{"1g.10gb", 1}, {"3g.40gb", 1.1}, {"full", 1.2}} {
		p, _ := wulver.Profile(c.p)
		sh := wulver.Shares(p)
		busy := gpu / sh.SM
		run := newRun(c.p, (idle+busy)*c.noise).peak(2000).emulatedOn(a100)
		run.Utilization, run.MemUtilization = 100*busy/run.Seconds, 2
		if c.p == "full" {
			run.EmulatedWhole = true
		} else {
			run.RanAt = &sh
		}
		fed = append(fed, run)
	}
	elapsed := int64(600)
	plain := &history.JobRecord{Cluster: "c", Key: "9", JobID: "9", State: "COMPLETED", Profile: "full", GPUCount: 1, ElapsedS: &elapsed,
		Emulated: []history.EmulatedRun{{Profile: slurm.PlainProfile, Outcome: slurm.EmulatedCompleted, Seconds: 590,
			Evidence: slurm.OutputEvidence{Work: 7, WorkUnit: "steps", GPUPeakMiB: 2048}}}}
	emulatedRecord := &history.JobRecord{Cluster: "c", Key: "10", JobID: "10", State: "COMPLETED", Profile: "full", GPUCount: 1, ElapsedS: &elapsed,
		Emulated: []history.EmulatedRun{{Profile: "1g.10gb", GPU: h100, Outcome: slurm.EmulatedFailed},
			{Profile: "2g.20gb", GPU: h100, Outcome: slurm.EmulatedCompleted, Seconds: 300, Evidence: slurm.OutputEvidence{GPUPeakMiB: 9000}},
			{Profile: "3g.40gb", GPU: h100, Outcome: slurm.EmulatedBudget, Seconds: 120},
			{Profile: "full", GPU: h100, Outcome: slurm.EmulatedCancelled}}}
	return []goldenCase{
		{name: "emulated-on-another-gpu", job: asked("", newRun("1g.10gb", 0).oom(14000).emulatedOn(h100), newRun("2g.20gb", 300).peak(14500).emulatedOn(h100),
			newRun("full", 100).peak(14500).emulatedOn(h100))},
		{name: "emulated-on-the-sites-gpu", job: asked("", newRun("2g.20gb", 300).peak(14500).emulatedOn(a100))},
		{name: "emulated-and-measured", job: asked("", newRun("2g.20gb", 400).peak(14500), newRun("2g.20gb", 300).oom(20000).emulatedOn(h100))},
		{name: "emulated-beside-an-uninformative-run", job: asked("", cancelled, newRun("2g.20gb", 300).peak(14500).emulatedOn(h100))},
		{name: "emulated-shares-bandwidth-bound", job: asked("", append(slices.Clone(streaming), whole)...)},
		{name: "emulated-shares-sm-bound", job: asked("", append(slices.Clone(computing), whole)...)},
		{name: "emulated-explained-by-what-it-waits-on", job: asked("", cnn...)},
		{name: "emulated-elsewhere-alone", job: asked("", elsewhere...)},
		{name: "emulated-elsewhere-shapes-the-sites-times", job: asked("", append(slices.Clone(elsewhere), newRun("full", 100).peak(2000))...)},
		{name: "emulated-busy-time-on-the-sites-gpu", job: asked("", fed...)},
		{name: "emulated-record-plain-run", job: asked("", RunsFromRecord(plain)...)},
		{name: "emulated-record-slices", job: asked("", RunsFromRecord(emulatedRecord)...)},
	}
}

func memoryCases() []goldenCase {
	dir := "testdata/scripts/transformers/job.sh"
	tf := newRun("full", 600).peak(62.6 * 1024)
	tf.Software = []string{slurm.SoftwareTensorFlow}
	allocated := newRun("full", 3600).peak(23.5 * 1024)
	allocated.AllocatedMiB = 5.68 * 1000 * 1000 * 1000 / (1 << 20)
	need := newRun("full", 3600).peak(30 * 1024)
	torch := script + "python3 -c 'import torch'\n"
	return []goldenCase{
		{name: "memory-caching-framework-ceiling", job: sourced(dir, script+"module load python\npython finetune.py --epochs 1\n", newRun("full", 3600).peak(23.5*1024))},
		{name: "memory-compiled-gromacs", job: sourced("job.sh", script+"module load gromacs/2023.3\ngmx mdrun -deffnm md -nb gpu\n", need)},
		{name: "memory-nothing-to-say", job: sourced("job.sh", script+"./my_solver input.dat\n", need)},
		{name: "memory-jax-platform-allocator", job: sourced("job.sh", script+"export XLA_PYTHON_CLIENT_ALLOCATOR=platform\npython - <<'EOF'\nimport jax\nEOF\n", need)},
		{name: "memory-jax-heredoc", job: sourced("job.sh", script+"python3 <<'EOF'\nimport jax.numpy as jnp\nEOF\n", newRun("full", 600).peak(62.6*1024), newRun("full", 610).peak(62.6*1024))},
		{name: "memory-jax-no-prealloc", job: sourced("job.sh", script+"export XLA_PYTHON_CLIENT_PREALLOCATE=false\npython3 -c 'import jax'\n", newRun("full", 600).peak(62.6*1024))},
		{name: "memory-tensorflow-in-the-output", job: sourced("job.sh", script+"python3 train.py\n", tf)},
		{name: "memory-allocated-fits", job: sourced("job.sh", torch, allocated)},
		{name: "memory-oom-under-a-framework", job: sourced("job.sh", torch, newRun("2g.20gb", 60).oom(21000), newRun("full", 3600).peak(40*1024))},
	}
}

func peerCases(wulver *catalog.Site) []goldenCase {
	peers := []runmodel.Peer{smBound(wulver, 100, "1g.10gb", "3g.40gb", "full"), smBound(wulver, 40, "2g.20gb", "full")}
	gemm := Job{Script: "gemm.sh", Runs: []Run{newRun("full", 100).peak(2048), newRun("full", 100).peak(2048)}}
	return []goldenCase{
		{name: "peers-none", job: func(*testing.T, *catalog.Site) Job { return gemm }},
		{name: "peers-sm-bound", job: func(*testing.T, *catalog.Site) Job { j := gemm; j.Peers = peers; return j }},
		{name: "peers-and-the-benchmark-it-looks-like", job: func(t *testing.T, site *catalog.Site) Job {
			return Job{Script: "cifar.sh", Runs: []Run{newRun("3g.40gb", 100).peak(600)}, Resembles: benchmarkOf(t, site, "pytorch_cifar10_deepcnn"),
				Peers: peers[:1]}
		}},
	}
}

// submissionCases are the wrapper's: a command line's resources, no source.
func submissionCases() []goldenCase {
	cl := func(header string, args []string, runs ...Run) jobOf {
		return func(*testing.T, *catalog.Site) Job {
			s := slurm.Parse("job.sh", []byte("#!/bin/bash\n#SBATCH -p gpu\n"+header+"python train.py\n"))
			c := slurm.ParseCommandLine(append(args, "job.sh"))
			return Job{Script: "job.sh", Fingerprint: s.Fingerprint(), Resources: c.Resources(s, nil), Runs: runs}
		}
	}
	full := runsOn("full", 3, 3600, 5.7*1024, false)
	for _, id := range []string{"c1", "c2"} {
		full = append(full, Run{JobID: id, Profile: "full", State: "CANCELLED", Seconds: 0, NeedMiB: -1, PeakMiB: -1,
			AllocatedMiB: -1, Work: -1, Utilization: -1, MemUtilization: -1, ReqMemMiB: -1, MaxRSSMiB: -1, QueueWaitS: -1})
	}
	mixed := append(runsOn("1g.10gb", 2, 600, 0, true), runsOn("2g.20gb", 1, 3600, 12000, false)...)
	var spread []Run
	for _, p := range []string{"1g.10gb", "1g.10gb", "2g.20gb", "3g.40gb", "full"} {
		spread = append(spread, newRun(p, 600).peak(614).id(p+string(rune('a'+len(spread)))))
	}
	killed := newRun("2g.20gb", 300).peak(2048).id("4242")
	killed.Completed, killed.HostOOM, killed.State, killed.ReqMemMiB, killed.MaxRSSMiB = false, true, "OUT_OF_MEMORY", 4096, 4090
	small := newRun("2g.20gb", 1).id("153")
	small.Completed, small.HostOOM, small.State, small.ReqMemMiB, small.MaxRSSMiB = false, true, "OUT_OF_MEMORY", 200, 0.1
	var earlier []Run
	for _, p := range []string{"1g.10gb", "2g.20gb", "full"} {
		r := newRun(p, 300).id(p)
		r.Earlier = true
		earlier = append(earlier, r)
	}
	return []goldenCase{
		{name: "submission-cheaper-slice", job: cl("#SBATCH --gres=gpu:a100:1\n#SBATCH -t 4:00:00\n", nil, full...)},
		{name: "submission-asked-for-the-advice", job: cl("#SBATCH --gres=gpu:a100:1\n#SBATCH -t 4:00:00\n", []string{"--gres=gpu:a100_10g:1"}, full...)},
		{name: "submission-oom-on-the-asked", job: cl("#SBATCH --gres=gpu:a100:1\n#SBATCH -t 4:00:00\n", []string{"--gres=gpu:a100_10g:1"}, mixed...)},
		{name: "submission-oom-on-a-bigger", job: cl("#SBATCH --gres=gpu:a100_10g:1\n", nil, append(runsOn("2g.20gb", 1, 600, 0, true), runsOn("3g.40gb", 1, 900, 25000, false)...)...)},
		{name: "submission-runs-everywhere", job: cl("#SBATCH --gres=gpu:a100:1\n#SBATCH -t 1:00:00\n", nil, spread...)},
		{name: "submission-host-memory", job: cl("#SBATCH --gres=gpu:a100_20g:1\n#SBATCH --mem=4G\n", nil, killed, newRun("2g.20gb", 300).peak(2048).id("4243"))},
		{name: "submission-only-a-gpu-oom", job: cl("#SBATCH --gres=gpu:a100_10g:1\n#SBATCH -t 5\n", nil, runsOn("1g.10gb", 1, 2, 0, true)...)},
		{name: "submission-only-a-host-oom", job: cl("#SBATCH --gres=gpu:a100_20g:1\n#SBATCH --mem=200M\n", nil, small)},
		{name: "submission-only-a-timeout", job: cl("#SBATCH --gres=gpu:a100_20g:1\n#SBATCH -t 1\n", nil, newRun("2g.20gb", 60).peak(1024).timeout().id("137"))},
		{name: "submission-no-profile-bigger", job: cl("#SBATCH --gres=gpu:a100:1\n", nil, newRun("full", 60).oom(84000))},
		{name: "submission-earlier-without-a-figure", job: cl("#SBATCH --gres=gpu:a100:1\n#SBATCH -t 1:00:00\n", nil, earlier...)},
		{name: "submission-risk-reasons", job: asked("", newRun("3g.40gb", 600).peak(2048))},
	}
}

// moreCases are what no test above judges whole: CPU-only scripts,
// multi-GPU launchers, failures no profile changes, the changes made
// before measuring.
func moreCases() []goldenCase {
	cpu := "#!/bin/bash\n#SBATCH --partition=general\n#SBATCH --cpus-per-task=4\n#SBATCH --mem=8G\nsrun ./solve\n"
	torchrun := script + "torchrun --nproc_per_node=4 train.py\n"
	notFound := newRun("1g.10gb", 2).id("71")
	notFound.Completed, notFound.State, notFound.ExitCode = false, "FAILED", 127
	notFound.Outcome = outcome.Outcome{Kind: outcome.CommandNotFound, Text: "failed at once: line 7: python: command not found", AnyProfile: true}
	noOutput := newRun("2g.20gb", 0).id("72")
	noOutput.Completed, noOutput.State, noOutput.ExitCode = false, "FAILED", 53
	noOutput.Outcome = outcome.Outcome{Kind: outcome.NoOutputFile, Text: "failed at once because Slurm could not open /nonexistent/dir/72.out", AnyProfile: true}
	lost := newRun("full", 300).peak(2048).id("73")
	lost.Completed, lost.State = false, "NODE_FAIL"
	lost.Outcome = outcome.Outcome{Kind: outcome.NodeFailure, Text: "lost its node n1: resubmit it"}
	killedOnly := newRun("1g.10gb", 120).peak(1024).id("74")
	killedOnly.Completed, killedOnly.HostOOM, killedOnly.State, killedOnly.ReqMemMiB, killedOnly.MaxRSSMiB = false, true, "OUT_OF_MEMORY", 4096, 4000
	var failures []Run
	for i := range 5 {
		r := newRun("full", 10).id(fmt.Sprint("f", i))
		r.Completed, r.State, r.ExitCode = false, "FAILED", 2
		r.Outcome = outcome.Outcome{Kind: outcome.Failed, Text: "failed with exit code 2"}
		failures = append(failures, r)
	}
	return []goldenCase{
		{name: "cpu-only", job: sourced("cpu.sh", cpu)},
		{name: "cpu-only-asked", job: func(*testing.T, *catalog.Site) Job {
			return Job{Script: "cpu.sh", Resources: slurm.Parse("cpu.sh", []byte(cpu)).Resources}
		}},
		{name: "cpu-only-with-gpu-runs", job: sourced("cpu.sh", cpu, newRun("1g.10gb", 600).peak(1024))},
		{name: "cpu-only-with-a-prior", job: with(sourced("cpu.sh", cpu), func(t *testing.T, site *catalog.Site, j *Job) {
			j.Prior = benchmarkOf(t, site, "gromacs_performance")
		})},
		{name: "multi-gpu-torchrun", job: sourced("job.sh", torchrun)},
		{name: "multi-gpu-torchrun-with-runs", job: sourced("job.sh", torchrun, newRun("full", 600).peak(4000), func(r Run) Run { r.GPUs = 4; return r }(newRun("full", 300).peak(4000)))},
		{name: "multi-gpu-with-a-prior", job: with(asked("#SBATCH --gres=gpu:a100:2\n"), func(t *testing.T, site *catalog.Site, j *Job) {
			j.Prior = benchmarkOf(t, site, "gromacs_performance")
		})},
		{name: "command-not-found", job: sourced("job.sh", script+"python train.py\n", notFound)},
		{name: "no-output-directory", job: sourced("job.sh", script+"#SBATCH --output=/nonexistent/dir/%j.out\npython train.py\n", noOutput)},
		{name: "node-failure-and-completion", job: asked("", lost, newRun("full", 600).peak(2048))},
		{name: "host-oom-only", job: sourced("job.sh", script+"python train.py\n", killedOnly)},
		{name: "timeout-only-with-source", job: sourced("job.sh", script+"#SBATCH --time=10:00\npython train.py\n", newRun("2g.20gb", 600).peak(1024).timeout())},
		{name: "many-failures", job: asked("", append(slices.Clone(failures), newRun("1g.10gb", 600).peak(1024))...)},
		{name: "change-to-a-slice-with-mem", job: sourced("job.sh", script+"python train.py\n", killed(newRun("full", 600).peak(1024)), newRun("full", 700).peak(1024).id("2"))},
		{name: "queue-waits-and-su", job: with(asked("", newRun("1g.10gb", 600).peak(1024), newRun("full", 200).peak(1024)), func(_ *testing.T, _ *catalog.Site, j *Job) {
			j.QueueWaitS = map[string]float64{"1g.10gb": 10.4, "2g.20gb": 20, "3g.40gb": 30, "full": 4000}
		})},
	}
}

// killed is r killed for host memory with --mem=4G.
func killed(r Run) Run {
	r.Completed, r.HostOOM, r.State, r.ReqMemMiB, r.MaxRSSMiB, r.JobID = false, true, "OUT_OF_MEMORY", 4096, 4090, "k"
	return r
}

func TestRecommendGolden(t *testing.T) {
	site := catalogtest.Wulver(t)
	cases := goldenCases(t, site)
	seen := map[string]bool{}
	for _, c := range cases {
		if seen[c.name] {
			t.Fatalf("two cases named %s", c.name)
		}
		seen[c.name] = true
		t.Run(c.name, func(t *testing.T) {
			if c.unpriced != "" {
				charge := chargeJob
				t.Cleanup(func() { chargeJob = charge })
				chargeJob = func(s *catalog.Site, j catalog.Job) (catalog.Charge, error) {
					if j.Profile != nil && j.Profile.Name == c.unpriced {
						return catalog.Charge{}, fmt.Errorf("no rate for %s", j.Profile.Name)
					}
					return charge(s, j)
				}
			}
			js, txt := goldenOutput(t, site, c)
			checkGolden(t, filepath.Join(goldenDir, c.name, "stdout.json"), js)
			checkGolden(t, filepath.Join(goldenDir, c.name, "stdout.txt"), txt)
		})
	}
	// A golden no case writes any more is a case lost.
	dirs, err := os.ReadDir(goldenDir)
	if err != nil {
		t.Fatal(err)
	}
	for _, d := range dirs {
		if !seen[d.Name()] {
			if *update {
				os.RemoveAll(filepath.Join(goldenDir, d.Name()))
				continue
			}
			t.Errorf("%s/%s has no case", goldenDir, d.Name())
		}
	}
}

// goldenOutput is the recommendation as recommend --json and recommend
// print it, and, in the text, what a profile's figures do not show: whether
// it is past its time limit, and why (the report and the wrapper read them).
func goldenOutput(t *testing.T, site *catalog.Site, c goldenCase) (js, txt []byte) {
	rec, err := Recommend(site, c.job(t, site), c.opt)
	if err != nil {
		return []byte("null\n"), []byte("error: " + err.Error() + "\n")
	}
	var j, x bytes.Buffer
	enc := json.NewEncoder(&j)
	enc.SetIndent("", "  ")
	if err := enc.Encode(rec); err != nil {
		t.Fatal(err)
	}
	rec.WriteText(&x)
	for i := range rec.Profiles {
		if pa := &rec.Profiles[i]; pa.PastTimeLimit() || pa.TimeLimitNote() != "" {
			fmt.Fprintf(&x, "limit %s: past %v: %s\n", pa.Profile, pa.PastTimeLimit(), pa.TimeLimitNote())
		}
	}
	return j.Bytes(), x.Bytes()
}

func checkGolden(t *testing.T, path string, got []byte) {
	t.Helper()
	if *update {
		if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(path, got, 0o644); err != nil {
			t.Fatal(err)
		}
		return
	}
	want, err := os.ReadFile(path)
	if err != nil {
		t.Fatalf("%v (go test ./advisor -run TestRecommendGolden -update writes it)", err)
	}
	if !bytes.Equal(got, want) {
		t.Errorf("%s differs:\n--- got\n%s\n--- want\n%s", path, got, want)
	}
}
