package main

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/urfave/cli/v2"

	"github.com/migadvisor/migadvisor/advisor/app/collect"
	"github.com/migadvisor/migadvisor/advisor/app/index"
	"github.com/migadvisor/migadvisor/advisor/base/history"
	"github.com/migadvisor/migadvisor/bench"
	"github.com/migadvisor/migadvisor/slurm"
	"github.com/migadvisor/migadvisor/slurm/slurmtest"
)

// migadvisor runs the CLI in-process with the given arguments.
func migadvisor(t *testing.T, args ...string) (stdout, stderr string, code int) {
	t.Helper()
	var out, errOut bytes.Buffer
	code = run(append([]string{"migadvisor"}, args...), &out, &errOut)
	return out.String(), errOut.String(), code
}

// historyWithJob2 imports the dev cluster's accounting dump into db and
// links its job 2 (7 s, completed on 1g.10gb) to script.
func historyWithJob2(tb testing.TB, db, script string) {
	tb.Helper()
	historyWithJob2From(tb, db, script, devclusterDump)
}

// devclusterDump is the dev cluster's accounting dump: its jobs ran on 2026-11-21.
const devclusterDump = "../../testdata/sacct/devcluster-22.05.psv"

// historyWithJob2From is historyWithJob2 from another copy of the dump.
func historyWithJob2From(tb testing.TB, db, script, dump string) {
	tb.Helper()
	var out, errOut bytes.Buffer
	if code := run([]string{"migadvisor", "--db", db, "collect", "--sacct-file", dump}, &out, &errOut); code != 0 {
		tb.Fatalf("collect: %s", errOut.String())
	}
	st, err := history.Open(context.Background(), db)
	if err != nil {
		tb.Fatal(err)
	}
	s, err := slurm.ReadScript(script)
	if err != nil {
		tb.Fatal(err)
	}
	if err := st.RecordSubmissions(context.Background(), []history.Submission{{Cluster: "migdev", JobID: "2", Fingerprint: s.Fingerprint(),
		Source: script, Script: script, Profile: "1g.10gb", Submitted: time.Unix(1_790_000_000, 0)}}); err != nil {
		tb.Fatal(err)
	}
	st.Close()
	// As track would: the advice index the sbatch wrapper reads.
	os.Remove(index.OwnPath(db))
	if _, err := index.Refresh(context.Background(), db); err != nil {
		tb.Fatal(err)
	}
}

// isolate keeps the user's and the system's site files out of a test.
func isolate(t *testing.T) {
	t.Helper()
	t.Setenv("XDG_CONFIG_HOME", t.TempDir())
	t.Setenv("XDG_DATA_HOME", t.TempDir())
	t.Setenv("MIGADVISOR_SITE", "")
	t.Setenv("MIGADVISOR_DB", "")
	withoutSlurm(t)
}

func TestSweepIsRecordedInTheHistory(t *testing.T) {
	isolate(t)
	db := filepath.Join(t.TempDir(), "h", "history.db")
	t.Setenv("MIGADVISOR_DB", db)
	dir := t.TempDir()
	if _, errOut, code := migadvisor(t, "sweep", example+"gromacs.sh", "--out", dir); code != 0 || errOut != "" {
		t.Fatalf("exit %d: %s", code, errOut)
	}
	st, err := history.Open(context.Background(), db)
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	script, _ := slurm.ReadScript(example + "gromacs.sh")
	sweeps, err := st.Sweeps(context.Background(), script.Fingerprint())
	if err != nil || len(sweeps) != 1 || sweeps[0].Dir != dir || len(sweeps[0].Variants) != 4 {
		t.Errorf("history: %+v, %v", sweeps, err)
	}
	// A history that cannot be written warns but does not fail the sweep.
	t.Setenv("MIGADVISOR_DB", filepath.Join(example, "gromacs.sh", "history.db"))
	_, errOut, code := migadvisor(t, "sweep", example+"gromacs.sh", "--out", t.TempDir())
	if code != 0 || !strings.HasPrefix(errOut, "migadvisor: warning: the sweep is not in the history") {
		t.Errorf("unwritable history: exit %d, %q", code, errOut)
	}
}

const example = "../../examples/"

func TestFlagsBeforeOrAfterArguments(t *testing.T) {
	isolate(t)
	var outputs []string
	for _, args := range [][]string{
		{"sweep", example + "pytorch_mnist.sh", "--out", "DIR", "--profiles", "1g.10gb,full", "--json"},
		{"sweep", "--out", "DIR", "--json", example + "pytorch_mnist.sh", "--profiles=1g.10gb,full"},
		{"--site", "wulver", "sweep", "--profiles", "1g.10gb,full", "--out=DIR", "--json", example + "pytorch_mnist.sh"},
		{"sweep", example + "pytorch_mnist.sh", "--site", "wulver", "--json", "--out", "DIR", "--profiles", "1g.10gb,full"},
	} {
		dir := t.TempDir()
		for i := range args {
			args[i] = strings.Replace(args[i], "DIR", dir, 1)
		}
		out, errOut, code := migadvisor(t, args...)
		if code != 0 {
			t.Fatalf("%v: exit %d: %s", args, code, errOut)
		}
		var rec struct {
			Profiles []string `json:"profiles"`
		}
		if err := json.Unmarshal([]byte(out), &rec); err != nil {
			t.Fatalf("%v: %v\n%s", args, err, out)
		}
		outputs = append(outputs, strings.Join(rec.Profiles, ","))
		if _, err := os.Stat(filepath.Join(dir, "full.sh")); err != nil {
			t.Errorf("%v: %v", args, err)
		}
	}
	for _, o := range outputs {
		if o != "1g.10gb,full" {
			t.Errorf("profiles %q, want 1g.10gb,full", o)
		}
	}
}

// lint's findings, in text and JSON, and its exit status (1 on an error,
// 0 on warnings alone) are TestGolden's (testdata/lint).

// su's prices are TestGolden's (testdata/su); here the requests it
// cannot price.
func TestSUCommand(t *testing.T) {
	isolate(t)
	if _, errOut, code := migadvisor(t, "su", "--profile", "9g.90gb"); code != 2 || !strings.Contains(errOut, "profiles: 1g.10gb") {
		t.Errorf("unknown profile: exit %d %s", code, errOut)
	}
	if _, _, code := migadvisor(t, "su"); code != 2 {
		t.Errorf("su without a profile exits %d, want 2", code)
	}
	if _, _, code := migadvisor(t, "su", "--profile", "full", "--hours", "1", "--time", "1:00:00"); code != 2 {
		t.Errorf("--hours with --time exits %d, want 2", code)
	}
}

// The site's profiles as catalog prints them, in text and JSON, and the
// exported file, are TestGolden's (testdata/catalog). export prints the
// built-in site's file with its name and title left to give: it loads once
// named, as the same profiles under that name.
func TestCatalogExportLoadsOnceNamed(t *testing.T) {
	isolate(t)
	out, _, code := migadvisor(t, "catalog", "--json")
	var rep catalogReport
	if code != 0 || json.Unmarshal([]byte(out), &rep) != nil {
		t.Fatalf("exit %d: %s", code, out)
	}
	exported, _, _ := migadvisor(t, "catalog", "export")
	file := filepath.Join(t.TempDir(), "site.toml")
	os.WriteFile(file, []byte(exported), 0o644)
	if _, errOut, code := migadvisor(t, "--site", file, "catalog"); code != 1 || errOut != "migadvisor: "+file+":6: the site needs a name\n" {
		t.Errorf("exported site, not named: exit %d %q", code, errOut)
	}
	os.WriteFile(file, []byte(strings.Replace(exported, `name = ""`, `name = "hpc2"`, 1)), 0o644)
	var named catalogReport
	if out, errOut, code := migadvisor(t, "--site", file, "catalog", "--json"); code != 0 || json.Unmarshal([]byte(out), &named) != nil ||
		named.Site != "hpc2" || named.Title != "" || len(named.Profiles) != len(rep.Profiles) || named.Profiles[1].SUPerHour != rep.Profiles[1].SUPerHour {
		t.Errorf("exported site, named: exit %d %s\n%+v", code, errOut, named)
	}
}

func TestSiteEnvTwin(t *testing.T) {
	isolate(t)
	t.Setenv("MIGADVISOR_SITE", "../../examples/sites/h100.toml")
	out, _, code := migadvisor(t, "catalog", "--json")
	if code != 0 || !strings.Contains(out, `"site": "example-h100"`) {
		t.Errorf("MIGADVISOR_SITE ignored: %s", out)
	}
	// The flag wins over the environment.
	out, _, _ = migadvisor(t, "catalog", "--json", "--site", "wulver")
	if !strings.Contains(out, `"site": "wulver"`) {
		t.Errorf("--site did not override MIGADVISOR_SITE: %s", out)
	}
}

func TestBadSiteFileNamesTheLine(t *testing.T) {
	isolate(t)
	file := filepath.Join(t.TempDir(), "site.toml")
	os.WriteFile(file, []byte("version = 1\nname = \"x\"\ncolour = 3\n"), 0o644)
	_, errOut, code := migadvisor(t, "--site", file, "catalog")
	if code != 1 || errOut != "migadvisor: "+file+":3: unknown key \"colour\" at the top level\n" {
		t.Errorf("exit %d, stderr %q", code, errOut)
	}
}

func TestUsageErrors(t *testing.T) {
	isolate(t)
	for _, args := range [][]string{
		{"frobnicate"},
		{"lint"},
		{"lint", "a.sh", "b.sh"},
		{"lint", "--no-such-flag", "a.sh"},
		{"sweep", example + "pytorch_mnist.sh"},
		{"catalog", "nonsense"},
	} {
		if _, errOut, code := migadvisor(t, args...); code != 2 || !strings.HasPrefix(errOut, "migadvisor: ") {
			t.Errorf("%v: exit %d, stderr %q; want 2 and one message", args, code, errOut)
		}
	}
	if _, errOut, code := migadvisor(t, "lint", "/no/such/job.sh"); code != 1 || !strings.Contains(errOut, "/no/such/job.sh") {
		t.Errorf("missing file: exit %d %q", code, errOut)
	}
}

// TestHelpHasExamples: every command's help shows examples.
func TestHelpHasExamples(t *testing.T) {
	isolate(t)
	var walk func(prefix []string, cmds []*cli.Command)
	walk = func(prefix []string, cmds []*cli.Command) {
		for _, c := range cmds {
			path := append(append([]string{}, prefix...), c.Name)
			out, _, code := migadvisor(t, append(path, "--help")...)
			if code != 0 || !strings.Contains(out, "Examples:") || !strings.Contains(out, "migadvisor "+strings.Join(path, " ")) {
				t.Errorf("%v --help: exit %d, no examples:\n%s", path, code, out)
			}
			walk(path, c.Subcommands)
		}
	}
	app := newApp(nil, nil)
	walk(nil, app.Commands)
	if out, _, _ := migadvisor(t, "--help"); !strings.Contains(out, "Examples:") || !strings.Contains(out, "Exit status") {
		t.Errorf("top-level help:\n%s", out)
	}
	if out, _, code := migadvisor(t, "--version"); code != 0 || !strings.Contains(out, "migadvisor version") {
		t.Errorf("--version: %d %q", code, out)
	}
}

func TestDiscoverWithoutGPUFails(t *testing.T) {
	isolate(t)
	if _, err := os.Stat("/dev/nvidiactl"); err == nil {
		t.Skip("this machine has an NVIDIA driver; the no-NVML path is covered in bench/gpu")
	}
	_, errOut, code := migadvisor(t, "catalog", "discover")
	if code != 1 || !strings.Contains(errOut, "NVML is not available") || strings.Count(errOut, "\n") != 1 {
		t.Errorf("exit %d, stderr %q: want one clear line and exit 1", code, errOut)
	}
}

func TestSUScriptWithUnknownGPUType(t *testing.T) {
	isolate(t)
	file := filepath.Join(t.TempDir(), "job.sh")
	os.WriteFile(file, []byte("#!/bin/bash\n#SBATCH -t 10\n#SBATCH --gres=gpu:v100:1\nrun\n"), 0o644)
	_, errOut, code := migadvisor(t, "su", file)
	if code != 1 || errOut != "migadvisor: "+file+":3: GPU type \"v100\" is not a profile of site wulver\n" {
		t.Errorf("exit %d, stderr %q", code, errOut)
	}
}

// A dump's collect, the same again, and the jobs history lists from it
// (their JSON's keys, a host OOM, an array's task) are TestGolden's
// (testdata/collect, testdata/history).

func TestCollectReportsDamagedDump(t *testing.T) {
	isolate(t)
	t.Setenv("MIGADVISOR_DB", filepath.Join(t.TempDir(), "history.db"))
	data, err := os.ReadFile("../../testdata/sacct/devcluster-22.05.psv")
	if err != nil {
		t.Fatal(err)
	}
	lines := strings.Split(string(data), "\n")
	lines[4] = lines[4][:30] // a truncated record on line 5
	damaged := filepath.Join(t.TempDir(), "dump.txt")
	os.WriteFile(damaged, []byte(strings.Join(lines, "\n")), 0o600)
	_, errOut, code := migadvisor(t, "collect", "--sacct-file", damaged)
	if code != 0 || !strings.HasPrefix(errOut, damaged+":5: skipped: ") {
		t.Errorf("one bad record: exit %d, %q", code, errOut)
	}
	if _, _, code := migadvisor(t, "collect", "--sacct-file", damaged, "--strict"); code != 1 {
		t.Errorf("--strict with a skipped record: exit %d", code)
	}
	garbage := filepath.Join(t.TempDir(), "notes.txt")
	os.WriteFile(garbage, []byte("JobID|State\nx\ny\n"), 0o600)
	if _, errOut, code := migadvisor(t, "collect", "--sacct-file", garbage); code != 1 || !strings.Contains(errOut, "no record could be imported") {
		t.Errorf("nothing importable: exit %d, %q", code, errOut)
	}
	noHeader := filepath.Join(t.TempDir(), "noheader.txt")
	os.WriteFile(noHeader, []byte(strings.Join(lines[1:], "\n")), 0o600)
	if _, errOut, code := migadvisor(t, "collect", "--sacct-file", noHeader); code != 1 || !strings.HasPrefix(errOut, "migadvisor: "+noHeader+":1: ") {
		t.Errorf("no header: exit %d, %q", code, errOut)
	}
}

func TestParseSince(t *testing.T) {
	now := time.Date(2026, 11, 21, 12, 0, 0, 0, time.Local)
	for in, want := range map[string]time.Time{
		"2026-11-01":          time.Date(2026, 11, 1, 0, 0, 0, 0, time.Local),
		"2026-11-01T08:30":    time.Date(2026, 11, 1, 8, 30, 0, 0, time.Local),
		"30m":                 now.Add(-30 * time.Minute),
		"36h":                 now.Add(-36 * time.Hour),
		"7d":                  now.Add(-7 * 24 * time.Hour),
		"2w":                  now.Add(-14 * 24 * time.Hour),
		"2026-11-01T08:30:05": time.Date(2026, 11, 1, 8, 30, 5, 0, time.Local),
	} {
		if got, err := parseSince(in, now); err != nil || !got.Equal(want) {
			t.Errorf("parseSince(%q) = %v, %v", in, got, err)
		}
	}
	for _, bad := range []string{"yesterday", "7x", "-3d", "d"} {
		if _, err := parseSince(bad, now); err == nil {
			t.Errorf("parseSince(%q) accepted", bad)
		}
	}
}

// A Slurm command that fails reaches the user as one line with Slurm's
// message; track then files the jobs under the fallback cluster name, and
// says so.
func TestFailedSlurmCommandIsOneLine(t *testing.T) {
	isolate(t)
	down := slurmtest.New().Fails("scontrol", "slurm_load_ctl_conf error: Unable to contact slurm controller (connect failure)\n", 1)
	_, errOut, code := migadvisorWith(t, down, "track", example+"gromacs.sh", "42")
	want := "migadvisor: scontrol failed: slurm_load_ctl_conf error: Unable to contact slurm controller (connect failure); filing the jobs under cluster \"local\" (name it with --cluster)\n" +
		"migadvisor: job 42 is not in the history yet: run 'migadvisor collect' after it ends\n"
	if code != 0 || errOut != want {
		t.Errorf("exit %d, %q", code, errOut)
	}
	none := slurmtest.New() // no commands at all
	_, errOut, code = migadvisorWith(t, none, "status", "1")
	if code != 0 || errOut != "" {
		t.Errorf("status with nothing tracked should not need Slurm: exit %d %q", code, errOut)
	}
	t.Setenv("MIGADVISOR_DB", filepath.Join(t.TempDir(), "h.db"))
	migadvisorWith(t, none, "track", "--cluster", "c", example+"gromacs.sh", "42")
	_, errOut, code = migadvisorWith(t, none, "status")
	if code != 0 || !strings.Contains(errOut, "squeue: not found") {
		t.Errorf("status without squeue: exit %d %q", code, errOut)
	}
}

// sweep --submit against a fake Slurm: job ids reach sweep.json and
// the history, and sbatch gets the variant's path as one argument.
func TestSweepSubmitRecordsJobs(t *testing.T) {
	isolate(t)
	t.Setenv("MIGADVISOR_DB", filepath.Join(t.TempDir(), "history.db"))
	fake := slurmtest.New()
	fake.On("sbatch", func(slurm.Call) slurmtest.Reply {
		return slurmtest.Reply{Stdout: fmt.Sprintf("%d;wulver\n", 4000+2*len(fake.Calls("sbatch")))} // 4002, 4004
	})
	fake.On("scontrol", func(c slurm.Call) slurmtest.Reply { // --oneliner show job ID; no name for show config
		id := ""
		if len(c.Args) == 4 {
			id = c.Args[3]
		}
		return slurmtest.Reply{Stdout: "JobId=" + id + " JobName=x StdOut=/out/slurm-" + id + ".out StdErr=/out/slurm-" + id + ".out\n"}
	})
	dir := filepath.Join(t.TempDir(), "my sweep")
	out, errOut, code := migadvisorWith(t, fake, "sweep", example+"gromacs.sh", "--out", dir, "--submit", "--profiles", "1g.10gb,full")
	if code != 0 {
		t.Fatalf("exit %d: %s", code, errOut)
	}
	if !strings.HasPrefix(out, "JOB ID") || !strings.Contains(out, "4002") {
		t.Errorf("table: %q", out)
	}
	var argv []string
	for _, c := range fake.Calls("sbatch") {
		argv = append(argv, strings.Join(c.Args, "\n"))
	}
	want := []string{"--parsable\n" + filepath.Join(dir, "1g.10gb.sh"), "--parsable\n" + filepath.Join(dir, "full.sh")}
	if !slices.Equal(argv, want) {
		t.Errorf("sbatch argv:\n%q\nwant\n%q", argv, want)
	}
	sw, err := bench.ReadSweep(dir)
	if err != nil || sw.Variants["full"].JobID != "4004" || sw.Variants["full"].Cluster != "wulver" || sw.Variants["full"].Stdout != "/out/slurm-4004.out" {
		t.Fatalf("sweep.json: %v %+v", err, sw.Variants["full"])
	}
	out, _, _ = migadvisorWith(t, fake, "status", "--json")
	var st []jobStatus
	if err := json.Unmarshal([]byte(out), &st); err != nil || len(st) != 2 || st[1].Profile != "full" || st[1].JobID != "4004" {
		t.Fatalf("status: %v %s", err, out)
	}
}

// mustRunCLI runs the CLI in process and fails the test unless it exits 0.
func mustRunCLI(t *testing.T, args ...string) string {
	t.Helper()
	out, errOut, code := migadvisor(t, args...)
	if code != 0 {
		t.Fatalf("migadvisor %s: exit %d\n%s%s", strings.Join(args, " "), code, out, errOut)
	}
	return out
}

// A mistyped command, subcommand or flag is a usage error (exit 2) that
// names the closest one, a flag given no value says what it needs (with
// two dashes, as flags are typed), and every usage error points at its
// command's --help.
func TestUsageErrorsSuggestAndPointAtTheCommandsHelp(t *testing.T) {
	isolate(t)
	t.Setenv("MIGADVISOR_DB", filepath.Join(t.TempDir(), "h.db"))
	for args, want := range map[string]string{
		"recomend job.sh":                "migadvisor: unknown command \"recomend\" (did you mean \"recommend\"?)\nRun 'migadvisor --help' for usage.\n",
		"benchmark lst":                  "migadvisor: unknown benchmark command \"lst\" (did you mean \"list\"?)\nRun 'migadvisor benchmark --help' for usage.\n",
		"benchmark foo":                  "migadvisor: unknown benchmark command \"foo\" (one of: list, write, run)\nRun 'migadvisor benchmark --help' for usage.\n",
		"bench foo":                      "migadvisor: unknown benchmark command \"foo\" (one of: list, write, run)\nRun 'migadvisor benchmark --help' for usage.\n",
		"benchmark run --profiles v100":  "migadvisor: --profiles: site wulver has no profile \"v100\" (profiles: 1g.10gb, 2g.20gb, 3g.40gb, full)\nRun 'migadvisor benchmark run --help' for usage.\n",
		"history --limit=-5":             "migadvisor: --limit is a number of jobs, 0 for all, not -5\nRun 'migadvisor history --help' for usage.\n",
		"collect --overlap -1m":          "migadvisor: --overlap is a duration ≥ 0, not -1m0s\nRun 'migadvisor collect --help' for usage.\n",
		"su --profile full --hours -1":   "migadvisor: --hours is a run time, a finite number ≥ 0, not -1\nRun 'migadvisor su --help' for usage.\n",
		"lint":                           "migadvisor: lint needs JOB.sh\nRun 'migadvisor lint --help' for usage.\n",
		"catalog export x":               "migadvisor: catalog export takes no arguments, not \"x\"\nRun 'migadvisor catalog export --help' for usage.\n",
		"history --limit -1":             "migadvisor: --limit is a number of jobs, 0 for all, not -1\nRun 'migadvisor history --help' for usage.\n",
		"recommend --objective x job.sh": "migadvisor: --objective must be one of su, time, turnaround, not \"x\"\nRun 'migadvisor recommend --help' for usage.\n",
		"recommend --bogus job.sh":       "migadvisor: unknown flag --bogus\nRun 'migadvisor recommend --help' for usage.\n",
		"recommend --prob job.sh":        "migadvisor: unknown flag --prob (did you mean --probe?)\nRun 'migadvisor recommend --help' for usage.\n",
		"history --lmit 3":               "migadvisor: unknown flag --lmit (did you mean --limit?)\nRun 'migadvisor history --help' for usage.\n",
		"catalog --sit x":                "migadvisor: unknown flag --sit (did you mean --site?)\nRun 'migadvisor catalog --help' for usage.\n",
		"benchmark run --profils full":   "migadvisor: unknown flag --profils (did you mean --profiles?)\nRun 'migadvisor benchmark run --help' for usage.\n",
		"measure-slice --bogus":          "migadvisor: unknown flag --bogus\nRun 'migadvisor measure-slice --help' for usage.\n",
		"recommend --session": "migadvisor: --session needs a name (the session's job name, e.g. sys/dashboard/sys/jupyter for an Open OnDemand app, " +
			"interactive for salloc; 'migadvisor history --sessions' lists yours)\nRun 'migadvisor recommend --help' for usage.\n",
		"recommend --session --json": "migadvisor: --session needs a name (the session's job name, e.g. sys/dashboard/sys/jupyter for an Open OnDemand app, " +
			"interactive for salloc; 'migadvisor history --sessions' lists yours), not the flag --json\nRun 'migadvisor recommend --help' for usage.\n",
		"history --limit":     "migadvisor: --limit needs a value\nRun 'migadvisor history --help' for usage.\n",
		"wait --timeout soon": "migadvisor: invalid value \"soon\" for flag --timeout: parse error\nRun 'migadvisor wait --help' for usage.\n",
		"wait --poll -1s":     "migadvisor: --poll is a duration such as 30s, not -1s\nRun 'migadvisor wait --help' for usage.\n",
		"su --profile bogus":  "migadvisor: --profile: site wulver has no profile \"bogus\" (profiles: 1g.10gb, 2g.20gb, 3g.40gb, full)\nRun 'migadvisor su --help' for usage.\n",
	} {
		_, errOut, code := migadvisor(t, strings.Fields(args)...)
		if code != 2 || errOut != want {
			t.Errorf("%s: exit %d, %q\nwant %q", args, code, errOut, want)
		}
	}
}

// An empty dump and one with its header alone both hold no job; profiles
// may be named by the GRES type that asks for them.
func TestEmptyDumpsAndGRESNamedProfiles(t *testing.T) {
	isolate(t)
	t.Setenv("MIGADVISOR_DB", filepath.Join(t.TempDir(), "h.db"))
	dir := t.TempDir()
	empty, header := filepath.Join(dir, "empty.psv"), filepath.Join(dir, "header.psv")
	os.WriteFile(empty, nil, 0o644)
	os.WriteFile(header, []byte("JobIDRaw|JobID|State|JobName\n"), 0o644)
	for _, f := range []string{empty, header} {
		out, errOut, code := migadvisor(t, "collect", "--sacct-file", f, "--cluster", "migdev")
		if code != 0 || !strings.HasPrefix(out, "accounting ("+f+"): the dump holds no job\n") {
			t.Errorf("%s: exit %d, %q %q", f, code, out, errOut)
		}
	}
	byType, _, code := migadvisor(t, "su", "--profile", "a100_10g", "--hours", "1")
	byName, _, _ := migadvisor(t, "su", "--profile", "1g.10gb", "--hours", "1")
	if code != 0 || byType != byName {
		t.Errorf("su --profile a100_10g: exit %d, %q; by name: %q", code, byType, byName)
	}
}

// The commands that only read work where the history's directory cannot
// be created (a read-only home): they read nothing and name the variable
// that points them elsewhere.
func TestReadOnlyCommandsWithoutAPlaceForTheHistory(t *testing.T) {
	isolate(t)
	blocker := filepath.Join(t.TempDir(), "file")
	os.WriteFile(blocker, nil, 0o600)
	t.Setenv("XDG_DATA_HOME", blocker) // the default history lies under a file
	script := example + "pytorch_mnist.sh"
	for _, args := range [][]string{{"history"}, {"history", script}, {"recommend", script}, {"status"},
		{"catalog"}, {"lint", script}, {"su", "--profile", "a100_10g"}} {
		out, errOut, code := migadvisor(t, args...)
		if code != 0 {
			t.Errorf("%v: exit %d\n%s%s", args, code, out, errOut)
			continue
		}
		if strings.Contains(errOut, "reading no history") && !strings.Contains(errOut, "set MIGADVISOR_DB") {
			t.Errorf("%v: %q names no way out", args, errOut)
		}
	}
	if _, errOut, _ := migadvisor(t, "history"); !strings.Contains(errOut, "migadvisor: reading no history: no history at "+blocker) {
		t.Errorf("history: stderr %q", errOut)
	}
	if _, err := os.Stat(filepath.Join(blocker, "migadvisor")); err == nil {
		t.Error("something was created under the file")
	}
}

// A damaged history file is one sentence that names it and the way out.
func TestCorruptHistoryIsOneSentenceWithAWayOut(t *testing.T) {
	isolate(t)
	db := filepath.Join(t.TempDir(), "history.db")
	os.WriteFile(db, []byte(strings.Repeat("not a database at all ", 20)), 0o600)
	t.Setenv("MIGADVISOR_DB", db)
	for _, args := range [][]string{{"history"}, {"collect", "--sacct-file", "../../testdata/sacct/devcluster-22.05.psv"}} {
		_, errOut, code := migadvisor(t, args...)
		if code != exitFailure || strings.Count(errOut, "\n") != 1 ||
			!strings.HasPrefix(errOut, "migadvisor: the history "+db+" is damaged") || !strings.Contains(errOut, "mv "+db+" "+db+".broken") {
			t.Errorf("%v: exit %d, %q", args, code, errOut)
		}
	}
}

// "benchmark" is the command; "bench" still reaches it, unlisted.
func TestBenchmarkIsTheCommandAndBenchAHiddenAlias(t *testing.T) {
	isolate(t)
	help := mustRunCLI(t, "--help")
	if !strings.Contains(help, "   benchmark ") || strings.Contains(help, "bench,") || strings.Contains(help, "   bench ") {
		t.Errorf("the command list:\n%s", help)
	}
	if a, b := mustRunCLI(t, "bench", "list"), mustRunCLI(t, "benchmark", "list"); a != b || !strings.Contains(a, "pytorch_mnist_simplecnn") {
		t.Errorf("bench list %q, benchmark list %q", a, b)
	}
	for _, args := range [][]string{{"bench", "--help"}, {"help", "bench"}, {"bench", "run", "--help"}} {
		if out := mustRunCLI(t, args...); !strings.Contains(out, "migadvisor benchmark") {
			t.Errorf("%v: %s", args, out)
		}
	}
}

// optionsOf binds a command's options from args, as its Action would.
func optionsOf[O any](t *testing.T, cmd *cli.Command, from func(*cli.Context) (O, error), args ...string) (O, error) {
	t.Helper()
	var got O
	var err error
	cmd.Action = func(c *cli.Context) error { got, err = from(c); return nil }
	app := newApp(io.Discard, io.Discard)
	app.Commands = []*cli.Command{cmd}
	if runErr := app.Run(append([]string{"migadvisor", cmd.Name}, args...)); runErr != nil {
		t.Fatalf("%v: %v", args, runErr)
	}
	return got, err
}

// collect's flags reach its selection (whose defaults advisor/app/collect
// tests): --scripts=false is heard over --all-users' default, and the
// overlap defaults to the collector's.
func TestCollectFlagsBindTheSelection(t *testing.T) {
	isolate(t)
	o, err := optionsOf(t, collectCommand(), collectOptionsFrom)
	if err != nil || !o.Selection.TrackedOnly() || o.Overlap != collect.DefaultOverlap {
		t.Errorf("no flags: %+v %v", o, err)
	}
	if o, _ = optionsOf(t, collectCommand(), collectOptionsFrom, "--all-users", "--scripts=false"); o.Selection.Scripts || !o.Selection.Query.AllUsers {
		t.Errorf("--all-users --scripts=false: %+v", o.Selection)
	}
	if o, _ = optionsOf(t, collectCommand(), collectOptionsFrom, "--sacct-file", "d.psv", "--since", "7d"); o.Selection.Dump != "d.psv" || len(o.Selection.Query.Users) != 1 {
		t.Errorf("--sacct-file d.psv --since 7d: %+v", o.Selection)
	}
}
