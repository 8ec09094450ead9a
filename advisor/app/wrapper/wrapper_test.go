package wrapper

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"reflect"
	"regexp"
	"slices"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/migadvisor/migadvisor/advisor/app/index"
	"github.com/migadvisor/migadvisor/advisor/base/history"
	"github.com/migadvisor/migadvisor/advisor/base/history/historytest"
	"github.com/migadvisor/migadvisor/catalog"
	"github.com/migadvisor/migadvisor/slurm"
)

// fakeSbatch stands in for Slurm's sbatch: it keeps each command it is
// given, prints out on the command's stdout and exits with status.
type fakeSbatch struct {
	findErr error
	runErr  error
	status  int
	out     string
	calls   []Command
}

const sbatchPath = "/opt/slurm/bin/sbatch"

func (f *fakeSbatch) Find(func(string) string) (string, error) {
	if f.findErr != nil {
		return "", f.findErr
	}
	return sbatchPath, nil
}

func (f *fakeSbatch) Run(c Command) (int, []byte, error) {
	f.calls = append(f.calls, c)
	if f.runErr != nil {
		return 127, nil, f.runErr
	}
	c.Stdout.Write([]byte(f.out))
	return f.status, []byte(f.out), nil
}

// submitted is the one command sbatch ran.
func (f *fakeSbatch) submitted(t *testing.T) Command {
	t.Helper()
	if len(f.calls) != 1 {
		t.Fatalf("sbatch ran %d times, want once", len(f.calls))
	}
	return f.calls[0]
}

// fixture is a login node: a working directory, the user's history (none
// yet), Slurm's sbatch, a clock, and the Wulver site.
type fixture struct {
	dir, db        string
	env            []string
	sbatch         *fakeSbatch
	now            time.Time
	stdin          *strings.Reader
	stdout, stderr bytes.Buffer
	deadline       time.Duration
	openIndex      func(string) (*index.Reader, error)
	loadSite       func(string) (*catalog.Site, error)
	user           string       // Options.User
	beside         bool         // Options.Beside
	opened         atomic.Int32 // indexes opened
}

func newFixture(t *testing.T) *fixture {
	f := &fixture{dir: t.TempDir(), sbatch: &fakeSbatch{out: "Submitted batch job 4242\n"},
		now: time.Date(2026, 11, 21, 9, 30, 0, 0, time.UTC), stdin: strings.NewReader("")}
	f.db = filepath.Join(t.TempDir(), "history.db")
	f.env = []string{"PATH=/usr/bin", "HOME=/home/ab12"}
	f.openIndex = index.Open
	f.loadSite = func(choice string) (*catalog.Site, error) {
		if choice == "" { // keep the real user's and system's site files out
			return catalog.Builtin("wulver")
		}
		return catalog.Resolve(choice)
	}
	return f
}

func (f *fixture) setenv(name, value string) { f.env = append(f.env, name+"="+value) }

// run is one submission with args; the user's history is f.db by default.
func (f *fixture) run(args ...string) int {
	f.stdout.Reset()
	f.stderr.Reset()
	f.sbatch.calls = nil
	return Run(context.Background(), Options{
		Args: args, Env: f.env, Now: func() time.Time { return f.now }, WorkDir: f.dir, DefaultDB: f.db,
		Stdin: f.stdin, Stdout: &f.stdout, Stderr: &f.stderr, AdviceDeadline: f.deadline, Sbatch: f.sbatch,
		OpenIndex: func(path string) (*index.Reader, error) {
			f.opened.Add(1)
			return f.openIndex(path)
		},
		LoadSite: f.loadSite, User: f.user, Beside: f.beside,
	})
}

// script writes a job script into the working directory.
func (f *fixture) script(t *testing.T, name, text string) string {
	t.Helper()
	path := filepath.Join(f.dir, name)
	if err := os.WriteFile(path, []byte(text), 0o644); err != nil {
		t.Fatal(err)
	}
	return path
}

// spooled are the submissions waiting in the user's history's spool.
func (f *fixture) spooled(t *testing.T) []history.Submission {
	t.Helper()
	files, err := history.SpoolFor(f.db).Pending()
	if err != nil {
		t.Fatal(err)
	}
	var subs []history.Submission
	for _, file := range files {
		data, err := os.ReadFile(file)
		if err != nil {
			t.Fatal(err)
		}
		var sub history.Submission
		if err := json.Unmarshal(data, &sub); err != nil {
			t.Fatal(err)
		}
		subs = append(subs, sub)
	}
	return subs
}

const fullA100 = "#!/bin/bash\n#SBATCH -p gpu\n#SBATCH --gres=gpu:a100:1\n#SBATCH --time=5\npython train.py\n"

// withJob2 fills the user's history from the dev cluster's accounting dump
// and links its job 2 (7 s, completed on 1g.10gb) to the script at path.
func (f *fixture) withJob2(t *testing.T, path string) {
	t.Helper()
	script, err := slurm.ReadScript(path)
	if err != nil {
		t.Fatal(err)
	}
	historyWithJob2(t, f.db, script.Fingerprint(), path)
	indexed(t, f.db)
}

// historyWithJob2 fills the history at db from the dev cluster's
// accounting dump and links its job 2 (root's, named fx-complete; 7 s,
// completed on 1g.10gb) to a script: its fingerprint and where it was.
func historyWithJob2(t *testing.T, db, fingerprint, source string) {
	t.Helper()
	ctx := context.Background()
	site, _ := catalog.Builtin("wulver")
	st, err := history.Open(ctx, db)
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	dump, err := os.Open("../../../testdata/sacct/devcluster-22.05.psv")
	if err != nil {
		t.Fatal(err)
	}
	defer dump.Close()
	historytest.Import(t, st, site, dump, "")
	if err := st.RecordSubmissions(ctx, []history.Submission{{Cluster: "migdev", JobID: "2", Fingerprint: fingerprint,
		Source: source, Script: source, Profile: "1g.10gb", Submitted: time.Unix(1_790_000_000, 0)}}); err != nil {
		t.Fatal(err)
	}
}

// indexed writes the user's advice index of the history at db, as the
// commands that write the history do.
func indexed(t *testing.T, db string) {
	t.Helper()
	os.Remove(index.OwnPath(db))
	if wrote, err := index.Refresh(context.Background(), db); err != nil || !wrote {
		t.Fatalf("index %s: %v %v", db, wrote, err)
	}
}

// published publishes the history at db as the site's, in a directory of
// its own, and returns the snapshot's path (site_db).
func published(t *testing.T, db string) string {
	t.Helper()
	st, err := history.OpenWith(context.Background(), db, history.Options{ReadOnly: true})
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	pub, err := index.Publish(context.Background(), st, t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	return pub.Snapshot
}

func TestRunPassesThroughAndRecords(t *testing.T) {
	f := newFixture(t)
	f.setenv(slurm.ShimEnv, "/opt/migadvisor/libexec/sbatch")
	f.script(t, "my job.sh", "#!/bin/bash\n#SBATCH --gres=gpu:a100:1\n#SBATCH -t 10\npython train.py\n")
	f.sbatch.out = "4242;migdev\n"
	args := []string{"--parsable", "--export=ALL,X=1 2", "--gres=gpu:a100_20g:1", "my job.sh", "--lr", "it's"}
	if code := f.run(args...); code != 0 || f.stdout.String() != "4242;migdev\n" || f.stderr.String() != "" {
		t.Fatalf("exit %d, stdout %q, stderr %q", code, f.stdout.String(), f.stderr.String())
	}
	c := f.sbatch.submitted(t)
	if c.Path != sbatchPath || !reflect.DeepEqual(c.Args, args) || c.Stdin != f.stdin {
		t.Errorf("sbatch ran as %+v", c)
	}
	if want := []string{"PATH=/usr/bin", "HOME=/home/ab12"}; !reflect.DeepEqual(c.Env, want) {
		t.Errorf("sbatch's environment %q, want %q (the shim's note is not the job's)", c.Env, want)
	}
	want := history.Submission{Cluster: "migdev", JobID: "4242", Source: filepath.Join(f.dir, "my job.sh"),
		Script: filepath.Join(f.dir, "my job.sh"), Profile: "2g.20gb", WorkDir: f.dir, Submitted: f.now}
	subs := f.spooled(t)
	if len(subs) != 1 {
		t.Fatalf("spooled %+v", subs)
	}
	got := subs[0]
	if got.Fingerprint == "" {
		t.Error("no fingerprint")
	}
	got.Fingerprint = ""
	if !got.Submitted.Equal(want.Submitted) {
		t.Errorf("submitted at %v, want the clock's %v", got.Submitted, want.Submitted)
	}
	got.Submitted = want.Submitted
	if !reflect.DeepEqual(got, want) {
		t.Errorf("recorded %+v\nwant      %+v (the command line's --gres wins)", got, want)
	}
}

func TestRunRecordsOnlyWhatWasSubmitted(t *testing.T) {
	f := newFixture(t)
	f.script(t, "job.sh", fullA100)
	for _, tc := range []struct {
		name string
		args []string
		out  string
	}{
		{"test-only", []string{"--test-only", "job.sh"}, "sbatch: Job 4242 to start at 2026-11-21T10:00:00\n"},
		{"wrap", []string{"--wrap", "hostname"}, "Submitted batch job 4242\n"},
		{"no job id", []string{"job.sh"}, ""},
	} {
		f.sbatch.out = tc.out
		if code := f.run(tc.args...); code != 0 || f.stderr.String() != "" {
			t.Errorf("%s: exit %d, %q", tc.name, code, f.stderr.String())
		}
		if subs := f.spooled(t); len(subs) != 0 {
			t.Errorf("%s: recorded %+v", tc.name, subs)
		}
	}
	// No cluster in sbatch's answer: $MIGADVISOR_CLUSTER's.
	f.sbatch.out = "Submitted batch job 7\n"
	f.setenv(EnvCluster, "wulver")
	f.run("job.sh")
	if subs := f.spooled(t); len(subs) != 1 || subs[0].Cluster != "wulver" || subs[0].JobID != "7" {
		t.Errorf("recorded %+v", subs)
	}
}

func TestRunExitsWithSbatchsStatus(t *testing.T) {
	f := newFixture(t)
	f.script(t, "job.sh", fullA100)
	f.sbatch.status, f.sbatch.out = 1, ""
	if code := f.run("job.sh"); code != 1 || f.stderr.String() != "" || len(f.spooled(t)) != 0 {
		t.Errorf("failed submission: exit %d, %q", code, f.stderr.String())
	}
	f.sbatch.runErr = errors.New("run /opt/slurm/bin/sbatch: permission denied")
	if code := f.run("job.sh"); code != 127 || f.stderr.String() != "migadvisor: run /opt/slurm/bin/sbatch: permission denied\n" {
		t.Errorf("sbatch not run: exit %d, %q", code, f.stderr.String())
	}
	f.sbatch = &fakeSbatch{findErr: errors.New("no sbatch on PATH other than migadvisor itself")}
	if code := f.run("job.sh"); code != 127 || f.stderr.String() != "migadvisor: no sbatch on PATH other than migadvisor itself\n" ||
		len(f.sbatch.calls) != 0 {
		t.Errorf("no sbatch: exit %d, %q", code, f.stderr.String())
	}
}

// MIGADVISOR_DISABLE=1 is a pure, silent pass-through: no site, no history,
// no record, nothing on stderr (its own --mig-apply is still not sbatch's).
func TestRunDisabled(t *testing.T) {
	f := newFixture(t)
	path := f.script(t, "job.sh", fullA100)
	f.withJob2(t, path)
	f.setenv(EnvDisable, "1")
	f.loadSite = func(string) (*catalog.Site, error) { t.Error("the site was loaded"); return nil, errors.New("no") }
	if code := f.run("--mig-apply", "job.sh"); code != 0 || f.stderr.String() != "" || f.opened.Load() != 0 {
		t.Errorf("exit %d, %q, %d histories opened", code, f.stderr.String(), f.opened.Load())
	}
	if c := f.sbatch.submitted(t); !reflect.DeepEqual(c.Args, []string{"job.sh"}) {
		t.Errorf("sbatch got %q", c.Args)
	}
	if _, err := os.Stat(history.SpoolFor(f.db).Dir); err == nil {
		t.Error("recorded the job")
	}
}

var adviceLine = regexp.MustCompile(`^migadvisor: this script completed on 1g\.10gb in 1 run, at ~0\.00583 SU instead of ~[0-9.]+ SU on a full A100\. ` +
	`Next time, submit with --gres=gpu:a100_10g:1, or with --mig-apply \(or MIGADVISOR_APPLY=1\) to have it changed for you\.\n`)

// cancelLine is what follows the advice in sbatch's place, where the job's id is known.
const cancelLine = "migadvisor: to have job 4242 changed now, cancel it while it waits (scancel 4242) and submit it again with --gres=gpu:a100_10g:1.\n"

func TestRunAdvises(t *testing.T) {
	f := newFixture(t)
	f.withJob2(t, f.script(t, "job.sh", fullA100))
	code := f.run("-J", "x", "job.sh")
	lines := strings.SplitAfter(f.stderr.String(), "\n")
	if code != 0 || len(lines) != 3 || !adviceLine.MatchString(lines[0]) || lines[1] != cancelLine {
		t.Fatalf("exit %d, %q", code, f.stderr.String())
	}
	if c := f.sbatch.submitted(t); !reflect.DeepEqual(c.Args, []string{"-J", "x", "job.sh"}) {
		t.Errorf("advice alone changed the submission: %q", c.Args)
	}
	if subs := f.spooled(t); len(subs) != 1 || subs[0].Profile != "full" {
		t.Errorf("recorded %+v", subs)
	}
	// Asking for 1g.10gb already: nothing to say.
	if code := f.run("--gres=gpu:a100_10g:1", "job.sh"); code != 0 || f.stderr.String() != "" {
		t.Errorf("already on the advice: exit %d, %q", code, f.stderr.String())
	}
}

func TestRunApplies(t *testing.T) {
	applied := []string{"-J", "x", "--gres=gpu:a100_10g:1", "job.sh"}
	for _, tc := range []struct {
		name  string
		args  []string
		env   string
		want  []string // nil: the user's arguments
		apply bool
	}{
		{"--mig-apply", []string{"--mig-apply", "-J", "x", "job.sh"}, "", applied, true},
		{"MIGADVISOR_APPLY=1", []string{"-J", "x", "job.sh"}, "1", applied, true},
		{"--mig-apply after the script is the script's", []string{"-J", "x", "job.sh", "--mig-apply"}, "", nil, false},
		{"--mig-apply as an option's value", []string{"-J", "--mig-apply", "job.sh"}, "", nil, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			f := newFixture(t)
			f.withJob2(t, f.script(t, "job.sh", fullA100))
			f.setenv(EnvApply, tc.env)
			code := f.run(tc.args...)
			want := tc.want
			if want == nil {
				want = tc.args
			}
			if c := f.sbatch.submitted(t); code != 0 || !reflect.DeepEqual(c.Args, want) {
				t.Errorf("exit %d; sbatch got %q, want %q", code, c.Args, want)
			}
			submitting := strings.HasSuffix(f.stderr.String(), "migadvisor: submitting on 1g.10gb: --gres=gpu:a100:1 -> --gres=gpu:a100_10g:1\n")
			if submitting != tc.apply {
				t.Errorf("stderr %q", f.stderr.String())
			}
			if subs := f.spooled(t); tc.apply && (len(subs) != 1 || subs[0].Profile != "1g.10gb") {
				t.Errorf("recorded %+v, want the profile submitted on", subs)
			}
		})
	}
}

// A history that does not answer within the deadline: the submission goes
// on at once, with one line (none when quiet), and is still recorded.
func TestRunAdviceDeadline(t *testing.T) {
	for _, quiet := range []string{"", "1"} {
		f := newFixture(t)
		f.script(t, "job.sh", fullA100)
		f.setenv(EnvQuiet, quiet)
		f.deadline = 20 * time.Millisecond
		release := make(chan struct{})
		f.openIndex = func(path string) (*index.Reader, error) {
			<-release // a file system that never answers, not even to a cancelled context
			return nil, errors.New("released")
		}
		start := time.Now()
		code := f.run("job.sh")
		took := time.Since(start)
		close(release)
		want := map[string]string{"": "migadvisor: no advice this time: gave up after 20ms\n", "1": ""}[quiet]
		if code != 0 || f.stderr.String() != want || len(f.sbatch.calls) != 1 {
			t.Errorf("quiet=%q: exit %d, stderr %q, want %q", quiet, code, f.stderr.String(), want)
		}
		if took > time.Second {
			t.Errorf("took %v", took)
		}
		if subs := f.spooled(t); len(subs) != 1 || subs[0].JobID != "4242" {
			t.Errorf("recorded %+v", subs)
		}
	}
}

// Whatever breaks, sbatch gets the user's exact arguments, its status is
// the wrapper's, and stderr has at most one line (none when quiet).
func TestRunFailsOpen(t *testing.T) {
	cases := []struct {
		name   string
		setup  func(t *testing.T, f *fixture)
		record bool
	}{
		{"broken site file", func(t *testing.T, f *fixture) {
			f.setenv(EnvSite, f.script(t, "site.toml", "version = 1\nname = [\n"))
		}, true},
		{"no such site file", func(t *testing.T, f *fixture) { f.setenv(EnvSite, "/nonexistent/site.toml") }, true},
		{"corrupt index", func(t *testing.T, f *fixture) {
			os.WriteFile(index.OwnPath(f.db), []byte("this is not an index, and it is long enough to have a header"), 0o600)
		}, true},
		{"history under a file", func(t *testing.T, f *fixture) {
			file := f.script(t, "file", "")
			f.setenv(EnvDB, filepath.Join(file, "history.db"))
		}, false},
		{"site index missing", func(t *testing.T, f *fixture) {
			f.loadSite = func(string) (*catalog.Site, error) {
				site, err := catalog.Builtin("wulver")
				site.History.SiteDB = "/nonexistent/site.db"
				return site, err
			}
		}, true},
		{"site fails", func(t *testing.T, f *fixture) {
			f.loadSite = func(string) (*catalog.Site, error) { return nil, errors.New("site file: boom") }
		}, true},
		{"a step panics", func(t *testing.T, f *fixture) {
			f.openIndex = func(string) (*index.Reader, error) { panic("a damaged file") }
		}, true},
	}
	for _, tc := range cases {
		for _, quiet := range []string{"", "1"} {
			t.Run(tc.name+map[string]string{"": "", "1": " quiet"}[quiet], func(t *testing.T) {
				f := newFixture(t)
				f.setenv(EnvQuiet, quiet)
				f.script(t, "job.sh", fullA100)
				tc.setup(t, f)
				args := []string{"--export=ALL,X=1 2", "-J", "a b", "job.sh", "it's"}
				code := f.run(args...)
				errOut := f.stderr.String()
				lines := strings.Count(errOut, "\n")
				if c := f.sbatch.submitted(t); code != 0 || !reflect.DeepEqual(c.Args, args) || f.stdout.String() != "Submitted batch job 4242\n" {
					t.Errorf("exit %d, stdout %q, sbatch got %q", code, f.stdout.String(), c.Args)
				}
				if lines > 1 || (lines == 1 && !strings.HasPrefix(errOut, "migadvisor: ")) || (quiet == "1" && errOut != "") || (quiet == "" && lines != 1) {
					t.Errorf("stderr %q", errOut)
				}
				if tc.record {
					if subs := f.spooled(t); len(subs) != 1 {
						t.Errorf("recorded %+v", subs)
					}
				}
			})
		}
	}
}

// The wrapper says, before a submission, what would change the job from
// what its script reads: a GPU request after the first command leaves the
// job without its GPU (seen: silent), and more GPU processes than GPUs.
func TestRunSaysWhatTheJobWillNotGet(t *testing.T) {
	f := newFixture(t)
	f.script(t, "late.sh", "#!/bin/bash\n#SBATCH -t 10\nmodule load cuda\n#SBATCH --gres=gpu:a100:1   # too late\npython train.py\n")
	code := f.run("late.sh")
	want := "migadvisor: late.sh:4: sbatch ignores #SBATCH lines after the first command (line 3), so the job runs without --gres=gpu:a100:1; move this line above it (late-directive)\n"
	if code != 0 || !strings.HasPrefix(f.stderr.String(), want) || len(f.sbatch.calls) != 1 {
		t.Errorf("late GPU request: exit %d\n%q\nwant %q", code, f.stderr.String(), want)
	}
	f.script(t, "ddp.sh", "#!/bin/bash\n#SBATCH --gres=gpu:a100_10g:1\n#SBATCH -t 10\ntorchrun --nproc_per_node=2 train.py\n")
	if code := f.run("ddp.sh"); code != 0 || !strings.Contains(f.stderr.String(), "(gpu-processes-over-request)") {
		t.Errorf("2 processes on one slice: exit %d %q", code, f.stderr.String())
	}
	// An --output on the command line whose directory does not exist in
	// the directory sbatch runs in: the job would fail at once with exit
	// 0:53 (seen: silent).
	code = f.run("-o", "no-such-dir/%j.out", "ddp.sh")
	if want := `migadvisor: sbatch's command line: --output's directory "no-such-dir" does not exist in ` + f.dir; code != 0 || !strings.Contains(f.stderr.String(), want) {
		t.Errorf("-o into a missing directory: exit %d %q", code, f.stderr.String())
	}
	if c := f.sbatch.submitted(t); !reflect.DeepEqual(c.Args, []string{"-o", "no-such-dir/%j.out", "ddp.sh"}) {
		t.Errorf("the job was not submitted as asked: %q", c.Args)
	}
}

func TestRunAdvisesFromAnEarlierVersion(t *testing.T) {
	f := newFixture(t)
	path := f.script(t, "job.sh", strings.Replace(fullA100, "train.py", "train.py --epochs 2", 1))
	f.withJob2(t, path)
	// Its output had the monitor's line: 1.5 GiB on 1g.10gb.
	ev, err := slurm.ScanOutput(strings.NewReader("MIGADVISOR_GPU peak_mib=1536 total_mib=9728 samples=4 device=A100 MIG 1g.10gb\n"), slurm.ScanOptions{})
	if err != nil {
		t.Fatal(err)
	}
	st, err := history.Open(context.Background(), f.db)
	if err != nil {
		t.Fatal(err)
	}
	if err := st.RecordOutput(context.Background(), "migdev", "2", "/tmp/fx/slurm-2.out", 100, f.now, ev); err != nil {
		t.Fatal(err)
	}
	st.Close()
	indexed(t, f.db)
	// The user edits the body: a new fingerprint, the same path.
	f.script(t, "job.sh", strings.Replace(fullA100, "train.py", "train.py --epochs 3", 1))
	code := f.run("job.sh")
	if want := "migadvisor: an earlier version of this script peaked at 1.5 GiB of GPU memory in 1 run on 1g.10gb, at ~"; code != 0 || !strings.HasPrefix(f.stderr.String(), want) {
		t.Errorf("advice after an edit: exit %d, %q", code, f.stderr.String())
	}
}

// A site's index that cannot be read is said in the one line, and the
// advice goes on from the user's own.
func TestRunAdvisesWithoutAnUnreadableSiteHistory(t *testing.T) {
	f := newFixture(t)
	f.withJob2(t, f.script(t, "job.sh", fullA100))
	f.loadSite = func(string) (*catalog.Site, error) {
		site, err := catalog.Builtin("wulver")
		site.History.SiteDB = filepath.Join(f.dir, "gone", "site.db")
		return site, err
	}
	code := f.run("job.sh")
	warning, advice, _ := strings.Cut(f.stderr.String(), "\n")
	if code != 0 || !strings.HasPrefix(warning, "migadvisor: the site's advice index is not readable, so only your runs are used: ") || !adviceLine.MatchString(advice) {
		t.Errorf("exit %d, %q", code, f.stderr.String())
	}
}

// The site's published index advises a user who never ran the script
// from another user's run of the same script; it finds no earlier version
// by a job's name (it holds none), and a truncated one is said in the one
// line and leaves the submission as it was.
func TestRunAdvisesFromTheSitesIndex(t *testing.T) {
	f := newFixture(t)
	path := f.script(t, "job.sh", fullA100)
	script, err := slurm.ReadScript(path)
	if err != nil {
		t.Fatal(err)
	}
	siteDB := filepath.Join(t.TempDir(), "live.db")
	historyWithJob2(t, siteDB, script.Fingerprint(), "sacct:migdev/2") // root's run, through slurmdbd's copy
	snapshot := published(t, siteDB)
	f.loadSite = func(string) (*catalog.Site, error) {
		site, err := catalog.Builtin("wulver")
		site.History.SiteDB = snapshot
		return site, err
	}
	f.env = []string{"PATH=/usr/bin", "USER=alice"}
	if code := f.run("job.sh"); code != 0 || !adviceLine.MatchString(f.stderr.String()) {
		t.Errorf("from the site's index: exit %d, %q", code, f.stderr.String())
	}
	// Edited: another fingerprint. Job 2 was named fx-complete, like this
	// script's jobs, but the site's index names no job: no advice.
	f.script(t, "job.sh", strings.Replace(fullA100, "#SBATCH -p gpu\n", "#SBATCH -p gpu\n#SBATCH -J fx-complete\n", 1)+"echo done\n")
	if code := f.run("job.sh"); code != 0 || f.stderr.String() != "" {
		t.Errorf("an edited script: exit %d, %q", code, f.stderr.String())
	}
	idx := filepath.Join(filepath.Dir(snapshot), index.IndexName)
	data, _ := os.ReadFile(idx)
	os.WriteFile(idx, data[:len(data)/2], 0o644)
	code := f.run("-J", "x", "job.sh")
	if c := f.sbatch.submitted(t); code != 0 || !reflect.DeepEqual(c.Args, []string{"-J", "x", "job.sh"}) ||
		!strings.HasPrefix(f.stderr.String(), "migadvisor: the site's advice index is not readable, so only your runs are used: ") ||
		!strings.Contains(f.stderr.String(), "truncated") || strings.Count(f.stderr.String(), "\n") != 1 {
		t.Errorf("a truncated index: exit %d, %q", code, f.stderr.String())
	}
}

// The wrapper opens no history database, ever: it records submissions in
// the spool, which the next command that opens the history moves in.
func TestRunOpensNoHistory(t *testing.T) {
	f := newFixture(t)
	f.script(t, "job.sh", fullA100)
	f.setenv(EnvCluster, "migdev")
	for i := range 40 {
		f.sbatch.out = fmt.Sprintf("Submitted batch job %d\n", 100+i)
		f.run("job.sh")
	}
	if _, err := os.Stat(f.db); err == nil {
		t.Fatal("the wrapper created the history")
	}
	if subs := f.spooled(t); len(subs) != 40 {
		t.Errorf("%d records in the spool, want 40", len(subs))
	}
	st, err := history.Open(context.Background(), f.db) // any command's open moves them in
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	if tr, err := st.Tracked(context.Background(), history.TrackedFilter{}); err != nil || len(tr) != 40 {
		t.Errorf("tracked %d jobs, %v; want 40", len(tr), err)
	}
}

func TestUserCommandLine(t *testing.T) {
	for _, tc := range []struct {
		args  []string
		want  []string
		apply bool
	}{
		{[]string{"--mig-apply", "job.sh"}, []string{"job.sh"}, true},
		{[]string{"-p", "gpu", "--mig-apply", "job.sh", "a"}, []string{"-p", "gpu", "job.sh", "a"}, true},
		{[]string{"job.sh", "--mig-apply"}, []string{"job.sh", "--mig-apply"}, false},
		{[]string{"-J", "--mig-apply", "job.sh"}, []string{"-J", "--mig-apply", "job.sh"}, false},
		{[]string{"--wrap", "hostname", "--mig-apply"}, []string{"--wrap", "hostname"}, true},
		// The script's own arguments, after it or after "--", stay the script's.
		{[]string{"job.sh", "a", "--mig-apply", "b"}, []string{"job.sh", "a", "--mig-apply", "b"}, false},
		{[]string{"--", "job.sh", "--mig-apply"}, []string{"--", "job.sh", "--mig-apply"}, false},
		{[]string{"--mig-apply", "--", "job.sh", "--mig-apply"}, []string{"--", "job.sh", "--mig-apply"}, true},
		// An option's value word, after a long option or a cluster of short ones.
		{[]string{"--job-name", "--mig-apply", "job.sh"}, []string{"--job-name", "--mig-apply", "job.sh"}, false},
		{[]string{"-vJ", "--mig-apply", "job.sh"}, []string{"-vJ", "--mig-apply", "job.sh"}, false},
		{[]string{"--mem=4G", "--mig-apply", "-p", "gpu", "job.sh", "x"}, []string{"--mem=4G", "-p", "gpu", "job.sh", "x"}, true},
	} {
		cl, apply := userCommandLine(tc.args)
		if !reflect.DeepEqual(cl.Args, tc.want) || apply != tc.apply || len(cl.Problems) != 0 {
			t.Errorf("%q: %q, apply %v, problems %v", tc.args, cl.Args, apply, cl.Problems)
		}
	}
}

// userCommandLine parses once what it parsed twice with --mig-apply (the
// arguments, then those without the flag): its command line is the second
// parse's, whole (options' word ranges, the script's index, problems), as
// the two parses found it, also where the rest is not sbatch's to accept.
func TestUserCommandLineReadsAsTheArgumentsWithoutTheFlag(t *testing.T) {
	reparsed := func(args []string) (*slurm.CommandLine, bool) { // as it was: a second parse
		cl := slurm.ParseCommandLine(args)
		end := len(args)
		if cl.ScriptIndex >= 0 {
			end = cl.ScriptIndex
		}
		for i := 0; i < end; i++ {
			value := false
			for _, o := range cl.Options {
				value = value || (o.Start < i && i < o.End)
			}
			if args[i] == ApplyFlag && !value {
				return slurm.ParseCommandLine(slices.Delete(slices.Clone(args), i, i+1)), true
			}
		}
		return cl, false
	}
	words := []string{ApplyFlag, "job.sh", "--", "-J", "-p", "gpu", "--gres=gpu:a100:1", "-vJ", "--bogus", "-n4",
		"--wrap", "--mem", "--time=1:00:00", "-x", "--job", "--mig-apply=1", "a"}
	// Every sequence of up to four of these words, and ApplyFlag twice.
	var cases [][]string
	var grow func(args []string)
	grow = func(args []string) {
		cases = append(cases, args)
		if len(args) == 4 {
			return
		}
		for _, w := range words {
			grow(append(args[:len(args):len(args)], w))
		}
	}
	grow(nil)
	cases = append(cases, []string{ApplyFlag, ApplyFlag, "job.sh"}, []string{"--bogus", ApplyFlag, "--bogus", ApplyFlag, "job.sh"})
	for _, args := range cases {
		got, apply := userCommandLine(slices.Clone(args))
		want, wantApply := reparsed(slices.Clone(args))
		if apply != wantApply || !reflect.DeepEqual(got, want) {
			t.Fatalf("%q: %+v, apply %v; parsed again: %+v, apply %v", args, got, apply, want, wantApply)
		}
	}
}

// A job measured on one profile reads the indexes' peers; a damaged peers'
// entry in the site's index costs one line, never the advice.
func TestRunAdvisesWithADamagedPeersEntry(t *testing.T) {
	f := newFixture(t)
	f.withJob2(t, f.script(t, "job.sh", fullA100)) // 7 s on 1g.10gb alone
	dir := t.TempDir()
	siteIndex := filepath.Join(dir, index.IndexName)
	if err := index.WriteFile(siteIndex, map[index.Key][]byte{index.KeyOf("peers", "v1"): []byte(`{"peers": [{"k": 1}]}`)}); err != nil {
		t.Fatal(err)
	}
	f.loadSite = func(string) (*catalog.Site, error) {
		site, err := catalog.Builtin("wulver")
		site.History.SiteIndex = siteIndex
		return site, err
	}
	code := f.run("-J", "x", "job.sh")
	if c := f.sbatch.submitted(t); code != 0 || !reflect.DeepEqual(c.Args, []string{"-J", "x", "job.sh"}) ||
		!strings.Contains(f.stderr.String(), "\nmigadvisor: this script completed on 1g.10gb") || !strings.Contains(f.stderr.String(), "without other scripts' runtimes") ||
		!strings.Contains(f.stderr.String(), siteIndex) {
		t.Errorf("exit %d, %q", code, f.stderr.String())
	}
}

// The user's own index that cannot be read is said in one line, which
// names what is used instead: where the site keeps no index, nothing.
// Seen in review: "so the site's runs alone are used" on a site whose
// file keeps no site history.
func TestRunSaysWhatAnUnreadableOwnIndexLeaves(t *testing.T) {
	f := newFixture(t)
	f.script(t, "job.sh", fullA100)
	if err := os.WriteFile(index.OwnPath(f.db), []byte("not an index"), 0o600); err != nil {
		t.Fatal(err)
	}
	code := f.run("job.sh")
	if code != 0 || !strings.HasPrefix(f.stderr.String(), "migadvisor: your advice index is not readable, and the site keeps none, so no runs are used") {
		t.Errorf("exit %d, %q", code, f.stderr.String())
	}
}
