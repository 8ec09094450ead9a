package main

import (
	"context"
	"encoding/json"
	"math"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/migadvisor/migadvisor/advisor"
	"github.com/migadvisor/migadvisor/advisor/base/history"
	"github.com/migadvisor/migadvisor/advisor/base/memory"
	"github.com/migadvisor/migadvisor/slurm"
	"github.com/migadvisor/migadvisor/slurm/slurmtest"
)

// What recommend prints on each basis (a prior, none, measured, a lint
// error first, the change to make and the monthly rate counted back from
// today) is TestGolden's (testdata/recommend).

func TestRecommendBadInput(t *testing.T) {
	isolate(t)
	for _, args := range [][]string{
		{"recommend", example + "gromacs.sh", "--objective", "cheap"},
		{"recommend", example + "gromacs.sh", "--max-slowdown", "0.5"},
		{"recommend", example + "gromacs.sh", "--prior", "nope"},
		{"recommend"},
	} {
		if _, errOut, code := migadvisor(t, args...); code != 2 || strings.Count(errOut, "\n") != 2 {
			t.Errorf("%v: exit %d, %q", args, code, errOut)
		}
	}
	file := filepath.Join(t.TempDir(), "job.sh")
	os.WriteFile(file, []byte("#!/bin/bash\n#SBATCH --gres=gpu:v100:1\nrun\n"), 0o644)
	if _, errOut, code := migadvisor(t, "recommend", file); code != 1 || errOut != "migadvisor: "+file+":2: GPU type \"v100\" is not a profile of site wulver\n" {
		t.Errorf("unknown GPU: exit %d, %q", code, errOut)
	}
}

func TestRecommendTurnaroundAsksTheScheduler(t *testing.T) {
	isolate(t)
	// The scheduler starts a full GPU in 2 hours, a slice at once.
	later := time.Now().Add(2 * time.Hour).Format("2006-01-02T15:04:05")
	now := time.Now().Format("2006-01-02T15:04:05")
	scheduler := slurmtest.New().On("sbatch", func(c slurm.Call) slurmtest.Reply {
		if len(c.Args) != 2 || c.Args[0] != "--test-only" {
			return slurmtest.Reply{Status: 9}
		}
		at := now
		if variant, _ := os.ReadFile(c.Args[1]); strings.Contains(string(variant), "gpu:a100:1") {
			at = later
		}
		return slurmtest.Reply{Stderr: "sbatch: Job 77 to start at " + at + " using 1 processors on nodes n1 in partition gpu\n"}
	})
	out, errOut, code := migadvisorWith(t, scheduler, "recommend", example+"gromacs.sh", "--objective", "turnaround", "--json")
	if code != 0 {
		t.Fatalf("exit %d: %s", code, errOut)
	}
	var rec struct {
		Recommended *string
		Notes       []string
		Profiles    []struct {
			Profile string   `json:"profile"`
			Wait    *float64 `json:"queue_wait_s"`
		}
	}
	if err := json.Unmarshal([]byte(out), &rec); err != nil {
		t.Fatal(err)
	}
	if full := rec.Profiles[3]; full.Profile != "full" || full.Wait == nil || *full.Wait < 7000 {
		t.Errorf("full's wait: %+v", full)
	}
	if rec.Recommended == nil || *rec.Recommended == "full" || !strings.Contains(strings.Join(rec.Notes, "\n"), "sbatch --test-only estimates") {
		t.Errorf("turnaround: %s", out)
	}
	if n := len(scheduler.Calls("sbatch")); n != len(rec.Profiles) {
		t.Errorf("sbatch --test-only ran %d times for %d profiles", n, len(rec.Profiles))
	}
}

// The lint that replaces a probe as the next step is typed too: a script
// consuming the JSON reads the kind, as recommend itself does.
func TestRecommendLintStepIsTyped(t *testing.T) {
	isolate(t)
	out, errOut, code := migadvisor(t, "recommend", "--json", example+"multi_slice_misuse.sh")
	if code != 1 {
		t.Errorf("exit %d for a script sbatch would refuse: %s", code, errOut)
	}
	var rec advisor.Recommendation
	if err := json.Unmarshal([]byte(out), &rec); err != nil {
		t.Fatal(err)
	}
	if !rec.Refused || rec.NextStep.Kind != advisor.NextLint || rec.Next != "migadvisor lint "+example+"multi_slice_misuse.sh" || rec.Next != rec.NextStep.Command() {
		t.Errorf("next %q, step %+v", rec.Next, rec.NextStep)
	}
}

// A runtime that is only a bound makes SU per work a bound too, and the
// table says so in both columns (seen: "≥0.0567  0.944").
func TestABoundIsMarkedInEveryColumnItReaches(t *testing.T) {
	su, perWork, sec := 0.0567, 0.944, 68.0
	rec := &advisor.Recommendation{Script: "tjob.sh", Site: "wulver", Basis: advisor.BasisNone, Runs: 1,
		Profiles: []advisor.ProfileAdvice{{Profile: "1g.10gb", Runs: 1, TimedOut: 1, OOMRisk: memory.RiskLow, UsableMiB: 9728,
			RuntimeS: &sec, RuntimeAtLeast: true, RuntimeSource: advisor.BasisPredicted, SU: &su, SUPerWork: &perWork, WorkUnit: "1M samples"}}}
	var b strings.Builder
	rec.WriteText(&b)
	if !strings.Contains(b.String(), "≥0.0567") || !strings.Contains(b.String(), "≥0.944") {
		t.Errorf("a bound without its ≥:\n%s", b.String())
	}
}

// A script measured on one profile is scaled like its peers, the plain
// flow: the jobs linked to their scripts (as track does), collect, then
// recommend. sweep.sh ran 771 s on 1g.10gb and 100 s on the whole GPU, in
// the ratio of their SMs; once.sh ran 200 s on the whole GPU alone, so it
// is predicted 1542 s on 1g.10gb, where Wulver's reference benchmarks
// alone would say far less.
func TestRecommendScalesLikeItsPeers(t *testing.T) {
	isolate(t)
	dir := t.TempDir()
	db := filepath.Join(dir, "history.db")
	t.Setenv("MIGADVISOR_DB", db)
	dump := filepath.Join(dir, "sacct.psv")
	os.WriteFile(dump, []byte(`JobIDRaw|JobID|Cluster|User|Account|State|ExitCode|Submit|Start|End|ElapsedRaw|NNodes|AllocCPUS|ReqMem|AllocTRES|JobName
31|31|migdev|carol|physics|COMPLETED|0:0|2026-11-20T01:00:00|2026-11-20T01:00:05|2026-11-20T01:12:56|771|1|1|4G|cpu=1,gres/gpu:a100_10g=1,gres/gpu=1,mem=4G,node=1|sweep
32|32|migdev|carol|physics|COMPLETED|0:0|2026-11-20T02:00:00|2026-11-20T02:00:05|2026-11-20T02:01:45|100|1|1|4G|cpu=1,gres/gpu:a100=1,gres/gpu=1,mem=4G,node=1|sweep
33|33|migdev|carol|physics|COMPLETED|0:0|2026-11-20T03:00:00|2026-11-20T03:00:05|2026-11-20T03:03:25|200|1|1|4G|cpu=1,gres/gpu:a100=1,gres/gpu=1,mem=4G,node=1|once
`), 0o644)
	collect := func() {
		if _, errOut, code := migadvisor(t, "collect", "--sacct-file", dump); code != 0 {
			t.Fatalf("collect: %s", errOut)
		}
	}
	write := func(name, body string) string {
		path := filepath.Join(dir, name)
		os.WriteFile(path, []byte("#!/bin/bash\n#SBATCH --gres=gpu:a100:1\n#SBATCH --mem=4G\n"+body), 0o644)
		return path
	}
	sweep, once := write("sweep.sh", "python sweep.py\n"), write("once.sh", "python once.py\n")
	link := func(script string, ids ...string) {
		st, err := history.Open(context.Background(), db)
		if err != nil {
			t.Fatal(err)
		}
		defer st.Close()
		s, _ := slurm.ReadScript(script)
		var subs []history.Submission
		for _, id := range ids {
			subs = append(subs, history.Submission{Cluster: "migdev", JobID: id, Fingerprint: s.Fingerprint(), Source: script, Script: script, Submitted: time.Unix(1_790_000_000, 0)})
		}
		if err := st.RecordSubmissions(context.Background(), subs); err != nil {
			t.Fatal(err)
		}
	}
	onSmallest := func() (float64, string) {
		runtimes, why := recommendedRuntimes(t, once)
		if _, ok := runtimes["1g.10gb"]; !ok {
			t.Fatalf("no runtime on 1g.10gb: %v (%s)", runtimes, why)
		}
		return runtimes["1g.10gb"], why
	}
	link(once, "33")
	collect()
	alone, why := onSmallest()
	if !strings.Contains(why, "no other script known to have run on two profiles or more") {
		t.Errorf("with no peer: %s", why)
	}
	link(sweep, "31", "32")
	collect()
	scaled, why := onSmallest()
	if math.Abs(scaled-1542) > 2 || !strings.Contains(why, "scaled like the one other script measured on two profiles or more") || alone > 0.6*scaled {
		t.Errorf("1g.10gb: %.0f s with sweep.sh as its peer (%s), want 1542 s; %.0f s without", scaled, why, alone)
	}
}

// recommendedRuntimes are the runtimes 'recommend --json' predicts or
// measured for the script, by profile, and why.
func recommendedRuntimes(t *testing.T, script string) (map[string]float64, string) {
	t.Helper()
	out, errOut, code := migadvisor(t, "recommend", script, "--json")
	if code != 0 {
		t.Fatalf("recommend: exit %d: %s", code, errOut)
	}
	var rec struct {
		Why      string `json:"runtime_why"`
		Profiles []struct {
			P       string   `json:"profile"`
			Runtime *float64 `json:"runtime_s"`
		}
	}
	if err := json.Unmarshal([]byte(out), &rec); err != nil {
		t.Fatalf("%v: %s", err, out)
	}
	runtimes := map[string]float64{}
	for _, p := range rec.Profiles {
		if p.Runtime != nil {
			runtimes[p.P] = *p.Runtime
		}
	}
	return runtimes, rec.Why
}

// recommend's flags reach its options (argv → options), and those no
// recommendation can be made with are usage errors before any work.
func TestRecommendFlagsBindTheOptions(t *testing.T) {
	isolate(t)
	script := example + "gromacs.sh"
	type bound struct {
		path, objective, prior string
		maxSlowdown            float64
		probe, ladder, json    bool
	}
	for _, c := range []struct {
		args []string
		want bound
		err  string
	}{
		{[]string{script}, bound{path: script, objective: advisor.ObjectiveSU}, ""},
		{[]string{"--objective", "turnaround", "--max-slowdown", "2", "--prior", "gromacs", script},
			bound{path: script, objective: advisor.ObjectiveTurnaround, maxSlowdown: 2, prior: "gromacs"}, ""},
		{[]string{"--probe", "--ladder", "--json", script},
			bound{path: script, objective: advisor.ObjectiveSU, probe: true, ladder: true, json: true}, ""},
		{nil, bound{}, "recommend needs JOB.sh"},
		{[]string{"--objective", "cheap", script}, bound{}, `--objective must be one of su, time, turnaround, not "cheap"`},
		{[]string{"--max-slowdown", "0.5", script}, bound{}, "--max-slowdown is a factor of at least 1 (2: up to twice as slow), not 0.5"},
		{[]string{"--tolerance", "1", script}, bound{}, "--tolerance is a share between 0 and 1 (0.05: 5%), not 1"},
		{[]string{"--time", "1:00:00", script}, bound{},
			"--time sets the probe's variants: use it with --probe (the change to make shows the script's --time)"},
	} {
		o, err := optionsOf(t, recommendCommand(), recommendOptionsFrom, c.args...)
		if c.err != "" {
			if _, usage := err.(usageError); !usage || err.Error() != c.err {
				t.Errorf("%q: error %v, want the usage error %q", c.args, err, c.err)
			}
			continue
		}
		got := bound{path: o.path, objective: o.advice.Objective, prior: o.prior, maxSlowdown: o.advice.MaxSlowdown,
			probe: o.probe.enabled, ladder: o.probe.ladder, json: o.json}
		if err != nil || got != c.want {
			t.Errorf("%q:\n got %+v, %v\nwant %+v", c.args, got, err, c.want)
		}
	}
}

// A flag only the probe reads is refused without --probe, as --time and
// --emulate are, where recommend went on as if it were not there; with
// --probe it binds. The monitor binary a site sets in the environment is
// no mistake.
func TestRecommendRefusesProbeFlagsWithoutProbe(t *testing.T) {
	isolate(t)
	script := example + "gromacs.sh"
	t.Setenv("MIGADVISOR_MONITOR_BIN", "/opt/migadvisor-monitor")
	for _, args := range [][]string{
		{"--ladder"}, {"--profiles", "full"}, {"--out", "probe/"}, {"-o", "probe/"}, {"--timeout", "3s"}, {"--as-one-gpu"},
		{"--workload", "md"}, {"--no-prealloc"}, {"--poll", "5s"}, {"--no-monitor"}, {"--outputs", "logs/"},
	} {
		flag := "--" + strings.TrimLeft(args[0], "-")
		if flag == "--o" {
			flag = "--out"
		}
		_, err := optionsOf(t, recommendCommand(), recommendOptionsFrom, append(args, script)...)
		if _, usage := err.(usageError); !usage || !strings.Contains(err.Error(), flag) || !strings.Contains(err.Error(), "--probe") {
			t.Errorf("%q without --probe: %v", args, err)
		}
		if _, err := optionsOf(t, recommendCommand(), recommendOptionsFrom, append(args, "--probe", script)...); err != nil {
			t.Errorf("%q --probe: %v", args, err)
		}
		_, err = optionsOf(t, recommendCommand(), recommendOptionsFrom, append(args, "--session", "interactive")...)
		if _, usage := err.(usageError); !usage || !strings.Contains(err.Error(), flag) {
			t.Errorf("%q --session: %v", args, err)
		}
	}
	if _, err := optionsOf(t, recommendCommand(), recommendOptionsFrom, script); err != nil {
		t.Errorf("MIGADVISOR_MONITOR_BIN without --probe: %v", err)
	}
	if _, errOut, code := migadvisor(t, "recommend", "--ladder", script); code != exitUsage {
		t.Errorf("recommend --ladder: exit %d, %q", code, errOut)
	}
}
