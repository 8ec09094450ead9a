package main

// Slurm for the unit tests: a slurmtest.Fake behind every command's Slurm
// client (runWith), and, for the sbatch wrapper, which execs Slurm's sbatch
// itself, testdata/fakesbatch. Tests of real Slurm run on the dev cluster
// (the slurm build tag).

import (
	"bytes"
	"cmp"
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/migadvisor/migadvisor/slurm"
	"github.com/migadvisor/migadvisor/slurm/slurmtest"
)

// migadvisorWith runs the CLI in process with fake as Slurm's commands.
func migadvisorWith(t testing.TB, fake *slurmtest.Fake, args ...string) (stdout, stderr string, code int) {
	t.Helper()
	var out, errOut bytes.Buffer
	code = runWith(appDeps{Slurm: fake}, append([]string{"migadvisor"}, args...), &out, &errOut)
	return out.String(), errOut.String(), code
}

// mustRunWith is migadvisorWith that fails the test unless the CLI exits 0.
func mustRunWith(t testing.TB, fake *slurmtest.Fake, args ...string) string {
	t.Helper()
	out, errOut, code := migadvisorWith(t, fake, args...)
	if code != 0 {
		t.Fatalf("migadvisor %s: exit %d\n%s%s", strings.Join(args, " "), code, out, errOut)
	}
	return out
}

// slurmNaming is a host where only scontrol answers, and only `scontrol
// show config`, with the cluster's name; "" for a host without Slurm.
func slurmNaming(cluster string) *slurmtest.Fake {
	fake := slurmtest.New()
	if cluster == "" {
		return fake
	}
	return fake.On("scontrol", func(c slurm.Call) slurmtest.Reply {
		if len(c.Args) < 2 || c.Args[0] != "show" || c.Args[1] != "config" {
			return slurmtest.Reply{Status: 1}
		}
		return slurmtest.Reply{Stdout: "ClusterName             = " + cluster + "\n"}
	})
}

// slurmFromDump is cluster migdev with an empty queue, whose accounting
// (sacct, whatever it is asked) is the dump.
func slurmFromDump(t testing.TB, dump string) *slurmtest.Fake {
	t.Helper()
	return slurmtest.New().Cluster("migdev").Prints("squeue", "").Prints("sacct", readFile(t, dump))
}

// slurmByID is cluster migdev knowing the jobs of dump only: sacct answers
// for the ids it is asked about (--jobs), and squeue, whose queue is empty,
// refuses an id it never had as the real one does.
func slurmByID(t testing.TB, dump string) *slurmtest.Fake {
	t.Helper()
	data := readFile(t, dump)
	return slurmtest.New().Cluster("migdev").
		Fails("squeue", "slurm_load_jobs error: Invalid job id specified\n", 1).
		On("sacct", func(c slurm.Call) slurmtest.Reply {
			for _, a := range c.Args {
				if ids, ok := strings.CutPrefix(a, "--jobs="); ok {
					return slurmtest.Reply{Stdout: dumpOf(data, strings.Split(ids, ",")...)}
				}
			}
			return slurmtest.Reply{Stdout: data}
		})
}

// dumpOf is the lines of a sacct dump about the jobs ids (their steps
// too), under its header.
func dumpOf(dump string, ids ...string) string {
	var b strings.Builder
	for _, line := range strings.SplitAfter(dump, "\n") {
		id, _, _ := strings.Cut(line, "|")
		job, _, _ := strings.Cut(id, ".")
		if line != "" && (id == "JobIDRaw" || slices.Contains(ids, job)) {
			b.WriteString(line)
		}
	}
	return b.String()
}

func readFile(t testing.TB, path string) string {
	t.Helper()
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	return string(data)
}

// fakeSbatch is testdata/fakesbatch built for one test, and the directory
// where it records its calls.
type fakeSbatch struct {
	Path  string // the binary, named sbatch
	calls string
}

// sbatchCall is one call of the fake sbatch, as it recorded it.
type sbatchCall struct {
	Args  []string       `json:"args"`
	Env   []string       `json:"env"`
	Stdin string         `json:"stdin"`
	Fds   map[int]string `json:"fds"`   // descriptors 3 to 9: the file each is open on
	Reads int            `json:"reads"` // read(2) calls its process made before it started (the shim's too)
}

// newFakeSbatch builds the fake sbatch into dir (a new directory for "")
// and has it record its calls: FAKESBATCH_CALLS is set for the test, and
// reaches the fake through the wrapper and the shim, which pass the
// environment on.
func newFakeSbatch(t testing.TB, dir string) fakeSbatch {
	t.Helper()
	if dir == "" {
		dir = t.TempDir()
	}
	f := fakeSbatch{Path: filepath.Join(dir, "sbatch"), calls: t.TempDir()}
	buildTestdata(t, "fakesbatch", f.Path)
	t.Setenv("FAKESBATCH_CALLS", f.calls)
	return f
}

// onPath puts the fake first on PATH, as Slurm's sbatch.
func (f fakeSbatch) onPath(t testing.TB) fakeSbatch {
	t.Helper()
	t.Setenv("PATH", filepath.Dir(f.Path)+":"+os.Getenv("PATH"))
	return f
}

// take is the calls since the last take, oldest first.
func (f fakeSbatch) take(t testing.TB) []sbatchCall {
	t.Helper()
	files, err := filepath.Glob(filepath.Join(f.calls, "*.json"))
	if err != nil {
		t.Fatal(err)
	}
	type stamped struct {
		call sbatchCall
		at   int64
	}
	var calls []stamped
	for _, file := range files {
		info, err := os.Stat(file)
		if err != nil {
			t.Fatal(err)
		}
		var c sbatchCall
		if err := json.Unmarshal([]byte(readFile(t, file)), &c); err != nil {
			t.Fatalf("%s: %v", file, err)
		}
		calls = append(calls, stamped{c, info.ModTime().UnixNano()})
		os.Remove(file)
	}
	slices.SortStableFunc(calls, func(a, b stamped) int { return cmp.Compare(a.at, b.at) })
	out := make([]sbatchCall, len(calls))
	for i, c := range calls {
		out[i] = c.call
	}
	return out
}

// args is the one call's arguments since the last take, one a line (""
// unless exactly one call).
func (f fakeSbatch) args(t testing.TB) string {
	t.Helper()
	calls := f.take(t)
	if len(calls) != 1 {
		t.Errorf("sbatch ran %d times, want once", len(calls))
		return ""
	}
	return strings.Join(calls[0].Args, "\n") + "\n"
}

// buildTestdata builds testdata/name into out, as the wrapper is built (no cgo).
func buildTestdata(t testing.TB, name, out string) {
	t.Helper()
	cmd := exec.Command("go", "build", "-o", out, "./testdata/"+name)
	cmd.Dir = packageDir // a test may have moved elsewhere
	cmd.Env = append(os.Environ(), "CGO_ENABLED=0")
	if msg, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("build testdata/%s: %v\n%s", name, err, msg)
	}
}
