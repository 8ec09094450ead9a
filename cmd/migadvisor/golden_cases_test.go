//go:build !noreport && !slurm && !mariadb && !gpu

package main

import (
	"context"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/migadvisor/migadvisor/advisor/base/history"
	"github.com/migadvisor/migadvisor/slurm"
	"github.com/migadvisor/migadvisor/slurm/slurmtest"
)

// The commands print times in the local zone, and the files hold UTC's:
// the unit tier runs in UTC whatever the machine's zone, the binaries its
// tests start too (TZ). It is set before any test runs, as a test that set
// it would race with the goroutines of others reading the clock; the tiers
// that reach a real Slurm keep the machine's zone, which Slurm prints.
func init() {
	time.Local = time.UTC
	os.Setenv("TZ", "UTC")
}

// TestGolden is every command that prints what it found, in text and
// --json, on the captured fixtures (the dev cluster's accounting and job
// outputs, the examples, Wulver's site), its output kept under
// testdata/<command>/<case> (golden_test.go). A case's inputs written for
// it, where no fixture had them, sit beside its output.
func TestGolden(t *testing.T) {
	commands := []struct {
		name string
		test func(*testing.T)
	}{
		{"catalog", goldenCatalog},
		{"su", goldenSU},
		{"lint", goldenLint},
		{"recommend", goldenRecommend},
		{"collect", goldenCollect},
		{"history", goldenHistory},
		{"track", goldenTrack},
		{"status", goldenStatus},
		{"wait", goldenWait},
		{"sweep", goldenSweep},
		{"report", goldenReport},
		{"plan", goldenPlan},
		{"docs", goldenDocs},
		{"publish", goldenPublish},
		{"doctor", goldenDoctor},
		{"benchmark", goldenBenchmark},
		{"accuracy", goldenAccuracy},
	}
	var names []string
	for _, c := range commands {
		t.Run(c.name, c.test)
		names = append(names, c.name)
	}
	checkGoldenCases(t, names)
}

// dayAfterTheDump is when the dev cluster's jobs (2026-11-21) ended a day
// ago: the clock of the cases whose output counts back from today.
var dayAfterTheDump = time.Date(2026, 11, 22, 12, 0, 0, 0, time.UTC)

func goldenCatalog(t *testing.T) {
	g := newGolden(t)
	g.both("wulver", nil, "catalog")
	g.both("h100", nil, "--site", "../../examples/sites/h100.toml", "catalog")
	g.run("export", nil, "catalog", "export")
	g.run("export-h100", nil, "catalog", "export", "--site", "../../examples/sites/h100.toml")
}

// su prices a request from flags, a script, or both; a case's script is
// job.sh beside its output.
func goldenSU(t *testing.T) {
	g := newGolden(t)
	job := func(name string) string { return "testdata/su/" + name + "/job.sh" }
	// From flags alone: 1 CPU and 4 GB unless given; a free QoS is 0 SU.
	g.both("profile-flags", nil, "su", "--profile", "2g.20gb", "--cpus", "1", "--mem", "4G", "--hours", "0.556")
	g.both("profile-cpus", nil, "su", "--profile", "1g.10gb", "--cpus", "4")
	g.both("profile-cpus-mem", nil, "su", "--profile", "full", "--cpus", "4", "--mem", "64G")
	g.both("profile-qos-low", nil, "su", "--profile", "full", "--cpus", "4", "--qos", "low", "--time", "2:00:00")
	g.both("profile-time", nil, "su", "--profile", "3g.40gb", "--time", "1-00:00:00")
	// A profile may be named by the GRES type that asks for it.
	g.run("profile-gres-type", nil, "su", "--profile", "a100_10g", "--hours", "1")
	// From a script: its request (1 CPU, 4000M, 30 min), with the flags'
	// hours or profile in place of its own.
	g.both("script", nil, "su", example+"pytorch_mnist.sh")
	g.both("script-hours", nil, "su", example+"full_gpu.sh", "--hours", "2")
	g.both("script-profile", nil, "su", example+"full_gpu.sh", "--profile", "1g.10gb")
	g.both("cpu-only", nil, "su", example+"no_gpu_request.sh")
	g.both("multi-gpu", nil, "su", "../../testdata/scripts/mixed_gpus_per_task.sh")
	// A CPU-only script is priced max(CPUs, RAM_GB/4) × hours: 8 CPUs,
	// 64G, 2 h are 32 SU; with no partition and no memory, the site's
	// default partition and 4000M per CPU.
	g.both("cpu-only-by-memory", nil, "su", job("cpu-only-by-memory"))
	g.both("cpu-only-defaults", nil, "su", job("cpu-only-defaults"))
	// --mem=0 is all the memory of each node (sbatch's meaning), rounded
	// once to three digits in text and JSON alike: 127 SU on a gpu node's
	// 502 GiB; without --partition the profile's partition gives the node
	// (two of them here), and a flag's partition its own nodes.
	g.both("mem-zero", nil, "su", job("mem-zero"))
	g.both("mem-zero-two-nodes", nil, "su", job("mem-zero-two-nodes"))
	g.both("mem-zero-flag-partition", nil, "su", job("mem-zero-flag-partition"), "--partition", "debug_gpu")
	// A --gres line after the first command is not part of the job: sbatch
	// ignores it, so does the price, and su says so.
	g.both("late-gres", nil, "su", job("late-gres"))
	// A request over the partition's limits is priced as written, with a
	// warning: Slurm would not start it. A flag's time over the limit has
	// no line of the script.
	g.both("over-partition-limits", nil, "su", job("over-partition-limits"))
	g.both("hours-over-the-limit", nil, "su", job("hours-over-the-limit"), "--hours", "80")
	// A launcher that starts more GPU processes than the job is priced for,
	// as lint says it; priced for the GPUs the processes use, nothing to say.
	g.both("gpu-processes", nil, "su", job("gpu-processes"))
	g.both("gpu-processes-priced", nil, "su", job("gpu-processes"), "--gpus", "4")
	// More memory than a node has, asked for or the default of too many
	// CPUs, is priced as asked, with lint's warning; figures from flags
	// have no line.
	g.both("mem-over-node", nil, "su", job("mem-over-node"))
	g.both("cpus-over-node", nil, "su", job("cpus-over-node"))
	g.run("mem-over-node-flags", nil, "su", "--profile", "none", "--mem", "600G")
	// SU rounds to three significant digits: no nonzero figure reads 0, and
	// 3 SU/h × 0.3333 h is 1 SU.
	g.both("tiny-hours", nil, "su", "--profile", "1g.10gb", "--hours", "0.0001")
	g.both("rounds-to-one", nil, "su", "--profile", "1g.10gb", "--hours", "0.3333")
	// --profile on a script that asks for no GPU prices one of the profile.
	g.both("profile-on-cpu-only", nil, "su", job("profile-on-cpu-only"), "--profile", "1g.10gb")
	// A script's --time is a limit: the charge is the most the job can be
	// charged; a run time given by --hours is priced as it is.
	g.both("at-most", nil, "su", job("at-most"))
	g.both("hours-not-at-most", nil, "su", "--hours", "0.5", job("at-most"))
}

func goldenLint(t *testing.T) {
	g := newGolden(t)
	g.both("errors", nil, "lint", example+"multi_slice_misuse.sh")
	g.both("clean", nil, "lint", example+"pytorch_mnist.sh")
	g.both("warnings", nil, "lint", example+"no_gpu_request.sh")
	g.both("multi-gpu", nil, "lint", "../../testdata/scripts/mixed_gpus_per_task.sh")
}

// recommend on each basis: a reference benchmark's prior, nothing known,
// measured (job 2 of the dev cluster, 7 s on 1g.10gb, run by a script
// that asks for a whole A100), emulated (the H100 capture), a session
// (Open OnDemand's Jupyter), and the scripts no slice can serve.
func goldenRecommend(t *testing.T) {
	g := newGolden(t)
	db := g.path("history.db")
	t.Setenv("MIGADVISOR_DB", db)
	t.Setenv("MIGADVISOR_CLUSTER", "migdev")
	measured := "testdata/recommend/measured/job.sh"
	historyWithJob2(t, db, measured)
	emulated := emulatedJob(t, g)
	sessions := g.path("sessions")
	os.Mkdir(sessions, 0o755)
	g.mustRun(nil, "collect", "--sacct-file", sessionsDump(t, sessions, "alice", 2970), "--outputs", sessions)

	g.both("prior", nil, "recommend", example+"gromacs.sh")
	g.both("nothing-known", nil, "recommend", example+"full_gpu.sh")
	g.both("lint-first", nil, "recommend", example+"multi_slice_misuse.sh")
	g.both("cpu-only", nil, "recommend", example+"no_gpu_request.sh")
	g.both("multi-gpu", nil, "recommend", "../../testdata/scripts/mixed_gpus_per_task.sh")
	// The runs of the last 30 days count back from today, the user's own:
	// a day after the dump, root's (who ran the dev cluster's jobs); months
	// after, none.
	for _, c := range []struct {
		name string
		now  time.Time
	}{{"measured", dayAfterTheDump}, {"measured-months-later", dayAfterTheDump.AddDate(0, 3, 0)}} {
		pin := func(o *recommendOptions) {
			o.now, o.user, o.waitSince = func() time.Time { return c.now }, "root", c.now.AddDate(0, 0, -30)
		}
		goldenVia(g, c.name, recommendCommand(), recommendOptionsFrom, runRecommend, pin, measured)
		goldenVia(g, c.name+"-json", recommendCommand(), recommendOptionsFrom, runRecommend, pin, "--json", measured)
	}
	g.both("emulated", nil, "recommend", emulated)
	alice := func(o *recommendOptions) { o.user = "alice" }
	goldenVia(g, "session", recommendCommand(), recommendOptionsFrom, runRecommend, alice, "--session", "sys/dashboard/sys/jupyter")
	goldenVia(g, "session-json", recommendCommand(), recommendOptionsFrom, runRecommend, alice, "--session", "sys/dashboard/sys/jupyter", "--json")
	goldenVia(g, "session-none", recommendCommand(), recommendOptionsFrom, runRecommend, alice, "--session", "sys/dashboard/sys/rstudio")
	goldenVia(g, "session-none-json", recommendCommand(), recommendOptionsFrom, runRecommend, alice, "--session", "sys/dashboard/sys/rstudio", "--json")
	g.run("unknown-gpu", nil, "recommend", "testdata/recommend/unknown-gpu/job.sh")
	g.run("bad-objective", nil, "recommend", example+"gromacs.sh", "--objective", "cheap")
}

// emulatedJob is hog.sh's job 5, which ran migadvisor emulate on an H100
// (testdata/nvml/h100-emulate), collected and tracked.
func emulatedJob(t *testing.T, g *golden) string {
	t.Helper()
	dir := g.path("emulated")
	if err := os.Mkdir(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	script := filepath.Join(dir, "hog.sh")
	os.WriteFile(script, []byte("#!/bin/bash\n#SBATCH --gres=gpu:a100:1\n#SBATCH --time=10\npython3 hog.py\n"), 0o644)
	dump := filepath.Join(dir, "sacct.psv")
	os.WriteFile(dump, []byte("JobIDRaw|JobID|State|ElapsedRaw|AllocTRES|JobName|WorkDir\n5|5|COMPLETED|30|cpu=1,mem=4G,gres/gpu:a100=1|hog|"+dir+"\n"), 0o644)
	emulationOf(t, dir, "5")
	os.WriteFile(filepath.Join(dir, "slurm-5.out"), []byte("done\n"), 0o644)
	g.mustRun(nil, "collect", "--cluster", "emu", "--sacct-file", dump)
	g.mustRun(nil, "track", "--cluster", "emu", script, "5")
	return script
}

// collect of the dev cluster's dumps: a first import, the same again, the
// failures with their outputs (tracked), and a site's dump with jobstats
// summaries; each into a history of its own.
func goldenCollect(t *testing.T) {
	g := newGolden(t)
	t.Setenv("MIGADVISOR_DB", g.path("history.db"))
	g.run("dump", nil, "collect", "--sacct-file", devclusterDump)
	g.run("dump-again", nil, "collect", "--sacct-file", devclusterDump)
	g.run("dump-json", nil, "--db", g.path("json.db"), "collect", "--sacct-file", devclusterDump, "--json")
	trackFailures(t, g.path("failures.db"))
	g.both("failures", nil, "--db", g.path("failures.db"), "collect", "--sacct-file", "../../testdata/sacct/devcluster-failures.psv")
	g.run("jobstats", nil, "--db", g.path("site.db"), "collect", "--sacct-file", "testdata/jobstats/full-3gib.psv", "--all-users", "--scripts=false")
	g.run("jobstats-json", nil, "--db", g.path("site-json.db"), "collect", "--sacct-file", "testdata/jobstats/full-3gib.psv", "--all-users", "--scripts=false", "--json")
	// jobstats' own sacct fields, the GPU types spelled every way: the H100
	// type the site does not name said with its jobs, and the one summary
	// of five that held GPU figures.
	g.run("spellings", nil, "--db", g.path("spellings.db"), "collect", "--sacct-file", spellingsDump)
	g.run("spellings-json", nil, "--db", g.path("spellings-json.db"), "collect", "--sacct-file", spellingsDump, "--json")
}

// history of the dev cluster's jobs: all, a few, a script's (job 2 is
// measured's), one with none; the scripts and the sessions of a user.
func goldenHistory(t *testing.T) {
	g := newGolden(t)
	db := g.path("history.db")
	t.Setenv("MIGADVISOR_DB", db)
	t.Setenv("MIGADVISOR_CLUSTER", "migdev")
	historyWithJob2(t, db, "testdata/recommend/measured/job.sh")
	sessions := g.path("sessions")
	os.Mkdir(sessions, 0o755)
	g.mustRun(nil, "collect", "--sacct-file", sessionsDump(t, sessions, "root", 2970), "--outputs", sessions)
	g.both("all", nil, "history")
	g.run("limit", nil, "history", "--limit", "3")
	g.both("script", nil, "history", "testdata/recommend/measured/job.sh")
	g.both("script-no-runs", nil, "history", example+"gromacs.sh")
	// The lists are the asking user's: root ran the dev cluster's jobs.
	root := func(o *historyOptions) { o.User = "root" }
	for _, list := range []string{"scripts", "sessions"} {
		goldenVia(g, list, historyCommand(), historyOptionsFrom, runHistory, root, "--"+list)
		goldenVia(g, list+"-json", historyCommand(), historyOptionsFrom, runHistory, root, "--"+list, "--json")
	}
	bob := func(o *historyOptions) { o.User = "bob" }
	goldenVia(g, "scripts-none", historyCommand(), historyOptionsFrom, runHistory, bob, "--scripts")
	goldenVia(g, "scripts-none-json", historyCommand(), historyOptionsFrom, runHistory, bob, "--scripts", "--json")
	// Who held a peak that is only a ceiling: JAX preallocating on the H100
	// (testdata/nvml/h100-memory-holders), beside a plain monitor's peak.
	held := g.path("held")
	os.Mkdir(held, 0o755)
	dump := filepath.Join(held, "sacct.psv")
	os.WriteFile(dump, []byte("JobIDRaw|JobID|State|ElapsedRaw|AllocTRES|JobName\n"+
		"50|50|COMPLETED|600|cpu=1,mem=8G,gres/gpu:a100=1|jaxjob\n51|51|COMPLETED|600|cpu=1,mem=8G,gres/gpu:a100=1|solver\n"), 0o644)
	copyFile(t, "../../testdata/nvml/h100-memory-holders/prealloc/full.out", filepath.Join(held, "slurm-50.out"))
	os.WriteFile(filepath.Join(held, "slurm-51.out"), []byte("MIGADVISOR_GPU peak_mib=30000 used_peak_mib=30100 total_mib=81559 samples=9 device=NVIDIA A100-SXM4-80GB\n"), 0o644)
	g.mustRun(nil, "--db", g.path("held.db"), "collect", "--sacct-file", dump, "--outputs", held)
	g.both("held-by", nil, "--db", g.path("held.db"), "history")
}

func goldenTrack(t *testing.T) {
	g := newGolden(t)
	t.Setenv("MIGADVISOR_DB", g.path("history.db"))
	fake := slurmByID(t, devclusterDump)
	g.mustRun(nil, "collect", "--sacct-file", devclusterDump)
	g.run("in-the-history", fake, "track", example+"pytorch_mnist.sh", "2", "3")
	g.run("not-in-slurm", fake, "track", example+"pytorch_mnist.sh", "99999")
	g.run("workload", fake, "track", "--workload", "mnist", example+"pytorch_mnist.sh", "5")
}

// status of jobs of the dev cluster, linked to a script on the day they
// ran, and a probe's job (its sweep named, no time recorded): weeks after
// they ended (the recent ones listed), a day after, by id, and a job Slurm
// never had; the failures' after wait collected them, each with its why.
func goldenStatus(t *testing.T) {
	g := newGolden(t)
	db := g.path("history.db")
	t.Setenv("MIGADVISOR_DB", db)
	fake := slurmByID(t, devclusterDump)
	linkJobs(t, db, example+"pytorch_mnist.sh", "2", "3", "4", "99999")
	st, err := history.Open(context.Background(), db)
	if err != nil {
		t.Fatal(err)
	}
	// No time: as a sweep.json without one gives.
	err = st.RecordSubmissions(context.Background(), []history.Submission{{Cluster: "migdev", JobID: "77", Fingerprint: "fp77",
		Source: example + "pytorch_mnist.sh", Script: "/home/alice/probe-1/1g.10gb.sh", Profile: "1g.10gb", SweepDir: "/home/alice/probe-1"}})
	st.Close()
	if err != nil {
		t.Fatal(err)
	}
	g.mustRun(fake, "collect")
	at := func(now time.Time) func(*statusOptions) {
		return func(o *statusOptions) { o.now, o.Slurm.Runner = now, fake }
	}
	weeksLater := dayAfterTheDump.AddDate(0, 0, 30)
	goldenVia(g, "weeks-later", statusCommand(), statusOptionsFrom, runStatus, at(weeksLater))
	goldenVia(g, "all", statusCommand(), statusOptionsFrom, runStatus, at(weeksLater), "--all")
	goldenVia(g, "day-after", statusCommand(), statusOptionsFrom, runStatus, at(dayAfterTheDump))
	goldenVia(g, "day-after-json", statusCommand(), statusOptionsFrom, runStatus, at(dayAfterTheDump), "--json")
	goldenVia(g, "ids", statusCommand(), statusOptionsFrom, runStatus, at(weeksLater), "2", "99999")
	g.both("nothing-tracked", nil, "--db", g.path("none.db"), "status")
	failures := g.path("failures.db")
	trackFailures(t, failures)
	ended := slurmFromDump(t, "../../testdata/sacct/devcluster-failures.psv")
	g.mustRun(ended, "--db", failures, "wait")
	g.run("after-wait", ended, "--db", failures, "status", "--all")
}

// linkJobs links jobs of the dev cluster to script, as track does, but on
// the day they were submitted (track's time is the clock's).
func linkJobs(t *testing.T, db, script string, ids ...string) {
	t.Helper()
	st, err := history.Open(context.Background(), db)
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	s, err := slurm.ReadScript(script)
	if err != nil {
		t.Fatal(err)
	}
	var subs []history.Submission
	for _, id := range ids {
		subs = append(subs, history.Submission{Cluster: "migdev", JobID: id, Fingerprint: s.Fingerprint(), Source: script, Script: script,
			Submitted: time.Date(2026, 11, 21, 2, 12, 0, 0, time.UTC)})
	}
	if err := st.RecordSubmissions(context.Background(), subs); err != nil {
		t.Fatal(err)
	}
}

// wait for the dev cluster's failed jobs, which say why each ended; for
// jobs whose profile only accounting knows; for an id Slurm never had; for
// nothing.
func goldenWait(t *testing.T) {
	g := newGolden(t)
	db := g.path("history.db")
	t.Setenv("MIGADVISOR_DB", db)
	trackFailures(t, db)
	fake := slurmFromDump(t, "../../testdata/sacct/devcluster-failures.psv")
	g.run("failures", fake, "wait")
	g.run("failures-json", fake, "wait", "--json", "1", "2", "3", "4")
	profiles := g.path("profiles.db")
	linkJobs(t, profiles, example+"pytorch_mnist.sh", "2", "3")
	dev := slurmFromDump(t, devclusterDump)
	g.run("profiles", dev, "--db", profiles, "wait", "2", "3")
	g.run("profiles-json", dev, "--db", profiles, "wait", "--json", "2", "3")
	g.both("never-in-slurm", slurmByID(t, devclusterDump), "--db", g.path("unknown.db"), "wait", "--timeout", "20s", "99999")
	g.both("nothing-to-wait-for", nil, "--db", g.path("none.db"), "wait")
}

// sweep's variants, written and submitted, in a directory named as a user
// would name it (its path is a column of the table).
func goldenSweep(t *testing.T) {
	g := newGolden(t)
	t.Setenv("MIGADVISOR_DB", g.path("history.db"))
	gromacs, mnist, misuse := absolute(t, example+"gromacs.sh"), absolute(t, example+"pytorch_mnist.sh"), absolute(t, example+"multi_slice_misuse.sh")
	t.Chdir(g.dir)
	g.run("write", nil, "sweep", gromacs, "--out", "gromacs")
	g.run("write-json", nil, "sweep", mnist, "--out", "mnist", "--profiles", "1g.10gb,full", "--json")
	fake := slurmtest.New().Cluster("wulver")
	next := 4000
	fake.On("sbatch", func(slurm.Call) slurmtest.Reply {
		next += 2
		return slurmtest.Reply{Stdout: strconv.Itoa(next) + ";wulver\n"}
	})
	g.run("submit", fake, "sweep", gromacs, "--out", "submitted", "--submit", "--profiles", "1g.10gb,full")
	g.run("lint-errors", nil, "sweep", misuse, "--out", "misuse")
}

func absolute(t *testing.T, path string) string {
	t.Helper()
	abs, err := filepath.Abs(path)
	if err != nil {
		t.Fatal(err)
	}
	return abs
}

// report of a month of the jobstats dump: alice's script would do on
// 2g.20gb; text, JSON, CSV, the notices, a month with no job.
func goldenReport(t *testing.T) {
	g := newGolden(t)
	t.Setenv("MIGADVISOR_DB", g.path("site.db"))
	mail := g.path("mail")
	os.Mkdir(mail, 0o700)
	t.Setenv("MIGADVISOR_SITE", reportSite(t, `["/usr/bin/tee", "`+mail+`/{user}"]`))
	g.mustRun(nil, "collect", "--sacct-file", "testdata/jobstats/full-3gib.psv", "--all-users", "--scripts=false")
	november := []string{"report", "--since", "2026-11-01", "--until", "2026-12-01"}
	g.both("month", nil, november...)
	g.run("month-csv", nil, append(november, "--csv")...)
	g.run("month-flag", nil, "report", "--month", "2026-11", "--min-su-saved", "0")
	// --until alone: the 30 days before it, not before today.
	g.run("until-alone", nil, "report", "--until", "2026-12-01", "--min-su-saved", "0")
	g.run("notify-dry-run", nil, append(november, "--notify", "--dry-run")...)
	g.both("no-job", nil, "report", "--since", "2026-01-01", "--until", "2026-02-01")
}

// plan of the jobstats month on a small fleet: two whole GPUs, one node
// each, and today's cut given.
func goldenPlan(t *testing.T) {
	g := newGolden(t)
	t.Setenv("MIGADVISOR_DB", g.path("site.db"))
	g.mustRun(nil, "collect", "--sacct-file", "testdata/jobstats/full-3gib.psv", "--all-users", "--scripts=false")
	november := []string{"plan", "--since", "2026-11-01", "--until", "2026-12-01"}
	g.both("whole-gpus", nil, append(november, "--gpus", "2", "--gpus-per-node", "1")...)
	g.both("cut-today", nil, append(november, "--gpus", "2", "--current", "3g.40gb,2g.20gb,1g.10gb,1g.10gb")...)
	g.run("no-job", nil, "plan", "--since", "2026-01-01", "--until", "2026-02-01", "--gpus", "2")
}

// docs of a workload of the user's (job 2 of the dev cluster, tagged).
func goldenDocs(t *testing.T) {
	g := newGolden(t)
	t.Setenv("MIGADVISOR_DB", g.path("history.db"))
	g.mustRun(nil, "collect", "--sacct-file", devclusterDump)
	g.mustRun(nil, "track", "--cluster", "migdev", "--workload", "my solver/v2", example+"pytorch_mnist.sh", "2")
	g.run("md", nil, "docs", "--out", g.path("md"), "--format", "md")
	g.run("mkdocs-json", nil, "docs", "--out", g.path("mkdocs"), "--format", "mkdocs", "--json")
	g.run("csv", nil, "docs", "--out", g.path("csv"), "--format", "csv")
}

// publish of the dev cluster's history: the snapshot and the index.
func goldenPublish(t *testing.T) {
	g := newGolden(t)
	t.Setenv("MIGADVISOR_DB", g.path("history.db"))
	t.Setenv("MIGADVISOR_CLUSTER", "migdev")
	g.mustRun(nil, "collect", "--sacct-file", devclusterDump)
	shared := g.path("shared")
	os.Mkdir(shared, 0o755)
	g.both("history", nil, "publish", shared)
	g.run("missing-dir", nil, "publish", g.path("typo"))
	collected := g.path("collected")
	os.Mkdir(collected, 0o755)
	g.both("collect", nil, "collect", "--sacct-file", "../../testdata/sacct/devcluster-failures.psv", "--publish", collected)
}

// doctor on a host with Slurm's config and no site file, then with a site
// file whose site history is not published.
func goldenDoctor(t *testing.T) {
	g := newGolden(t)
	conf := g.path("slurm.conf")
	os.WriteFile(conf, []byte("ClusterName=migdev\n"), 0o644)
	t.Setenv("SLURM_CONF", conf)
	g.both("no-site-file", nil, "doctor")
	site := g.path("site.toml")
	wulver := g.mustRun(nil, "catalog", "export", "--site", "wulver")
	os.WriteFile(site, []byte(strings.Replace(strings.Replace(wulver, `name = ""`, `name = "mysite"`, 1), "\n[", "\n[history]\nsite_db = \""+g.dir+"/shared/history.db\"\n\n[", 1)), 0o644)
	t.Setenv("MIGADVISOR_SITE", site)
	g.both("unpublished", nil, "doctor")
}

func goldenBenchmark(t *testing.T) {
	g := newGolden(t)
	g.both("list", nil, "benchmark", "list")
	write := []string{"benchmark", "write", "--workloads", "pytorch_cifar10_resnet,gromacs_performance", "--synthetic"}
	g.run("write", nil, append(write, "--out", g.path("bench"))...)
	g.run("write-json", nil, append(write, "--out", g.path("bench-json"), "--json")...)
}

func goldenAccuracy(t *testing.T) {
	g := newGolden(t)
	g.both("reference", nil, "accuracy")
}
