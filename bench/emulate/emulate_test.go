package emulate

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/migadvisor/migadvisor/catalog/catalogtest"
)

func fakeControl(t *testing.T) string {
	t.Helper()
	p, err := filepath.Abs("testdata/fake-mps-control")
	if err != nil {
		t.Fatal(err)
	}
	return p
}

// The targets of Wulver's profiles, smallest first: an A100 slice's share
// of the whole GPU's SMs (14, 28, 42 of 108) and its usable memory.
func TestTargetsSmallestFirst(t *testing.T) {
	targets, err := Targets(catalogtest.Wulver(t), nil)
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, tg := range targets {
		got = append(got, tg.Profile)
		if !tg.Whole {
			got = append(got, strconv.Itoa(tg.Percentage())+" "+tg.MemoryLimit())
		}
	}
	want := "1g.10gb,13 0=9728M,2g.20gb,26 0=19968M,3g.40gb,39 0=40448M,full"
	if strings.Join(got, ",") != want {
		t.Errorf("targets %s, want %s", strings.Join(got, ","), want)
	}
	if _, err := Targets(catalogtest.Wulver(t), []string{"2g.20gb", "5g.50gb"}); err == nil || !strings.Contains(err.Error(), `no profile "5g.50gb"`) {
		t.Errorf("an unknown profile: %v", err)
	}
}

func run(t *testing.T, opt Options) ([]Result, string) {
	t.Helper()
	var stderr bytes.Buffer
	if opt.Dir == "" {
		opt.Dir = t.TempDir()
	}
	opt.Env, opt.Stderr = os.Environ(), &stderr
	if opt.Targets == nil {
		opt.Targets, _ = Targets(catalogtest.Wulver(t), []string{"1g.10gb", "3g.40gb", "full"})
	}
	results, err := Run(context.Background(), opt)
	if err != nil {
		t.Fatal(err)
	}
	return results, stderr.String()
}

// Each slice runs under its own daemon with its share and cap, the whole
// GPU with neither; every daemon is stopped; each run's output is its own.
func TestEachProfileRunsUnderItsOwnDaemon(t *testing.T) {
	dir := t.TempDir()
	var told []int // the runs so far, after each: the record is kept as it goes
	results, stderr := run(t, Options{Dir: dir, MPSControl: fakeControl(t), Ran: func(rs []Result) { told = append(told, len(rs)) },
		Command: []string{"sh", "-c", `echo "$MIGADVISOR_EMULATED_PROFILE ${CUDA_MPS_ACTIVE_THREAD_PERCENTAGE:-none} ${CUDA_MPS_PINNED_DEVICE_MEM_LIMIT:-none}"`}})
	if fmt.Sprint(told) != "[1 2 3]" {
		t.Errorf("told after each run: %v", told)
	}
	want := map[string]string{"1g.10gb": "1g.10gb 13 0=9728M", "3g.40gb": "3g.40gb 39 0=40448M", "full": "full none none"}
	if len(results) != 3 {
		t.Fatalf("%d results: %+v", len(results), results)
	}
	for _, r := range results {
		out, _ := os.ReadFile(filepath.Join(dir, r.Output))
		if strings.TrimSpace(string(out)) != want[r.Profile] || r.Outcome != Completed || r.Emulated == (r.Profile == "full") {
			t.Errorf("%s: %q, %+v", r.Profile, out, r)
		}
	}
	for _, p := range []string{"1g.10gb", "3g.40gb"} {
		calls, _ := os.ReadFile(filepath.Join(dir, "mps-"+p, "log", "calls"))
		if string(calls) != "start\nquit\n" {
			t.Errorf("%s's daemon: %q", p, calls)
		}
		if _, err := os.Stat(filepath.Join(dir, "mps-"+p, "pipe", "control")); err == nil {
			t.Errorf("%s's daemon still runs", p)
		}
	}
	if !strings.Contains(stderr, "1g.10gb: 13% of the SMs, memory capped at 9728M") || !strings.Contains(stderr, "full completed in") {
		t.Errorf("stderr:\n%s", stderr)
	}
}

// A run past its budget is ended, its whole process group, and the next
// profile still runs; its daemon is stopped.
func TestBudgetEndsARun(t *testing.T) {
	killAfter = 100 * time.Millisecond
	t.Cleanup(func() { killAfter = 10 * time.Second })
	dir := t.TempDir()
	start := time.Now()
	results, _ := run(t, Options{Dir: dir, MPSControl: fakeControl(t), Budget: 300 * time.Millisecond,
		Command: []string{"sh", "-c", `if [ "$MIGADVISOR_EMULATED_PROFILE" = 1g.10gb ]; then sleep 30 & wait; fi; echo done`}})
	if time.Since(start) > 10*time.Second {
		t.Fatalf("the budget did not end the run: %v", time.Since(start))
	}
	if results[0].Outcome != Budget || results[1].Outcome != Completed {
		t.Errorf("%+v", results)
	}
	if calls, _ := os.ReadFile(filepath.Join(dir, "mps-1g.10gb", "log", "calls")); string(calls) != "start\nquit\n" {
		t.Errorf("the daemon of the run cut short: %q", calls)
	}
}

// Without MPS the job runs once as it is, and says why.
func TestNoMPSRunsTheJobOncePlain(t *testing.T) {
	for name, opt := range map[string]Options{
		"no binary":          {MPSControl: "/nonexistent/nvidia-cuda-mps-control"},
		"daemon won't start": {MPSControl: fakeControl(t)},
	} {
		if name == "daemon won't start" {
			t.Setenv("FAKE_MPS_FAIL", "1")
		}
		opt.Command = []string{"sh", "-c", "echo ran ${CUDA_MPS_ACTIVE_THREAD_PERCENTAGE:-plain}"}
		results, stderr := run(t, opt)
		if len(results) != 1 || results[0].Profile != "plain" || results[0].Outcome != Completed || results[0].Emulated ||
			!strings.Contains(stderr, "cannot emulate:") || !strings.Contains(stderr, "running the job once as it is") {
			t.Errorf("%s: %+v\n%s", name, results, stderr)
		}
	}
}

// A cancelled job (scancel) stops where it is and leaves no daemon.
func TestCancelStopsTheDaemon(t *testing.T) {
	dir := t.TempDir()
	targets, _ := Targets(catalogtest.Wulver(t), []string{"1g.10gb", "2g.20gb"})
	ctx, cancel := context.WithTimeout(context.Background(), 300*time.Millisecond)
	defer cancel()
	var stderr bytes.Buffer
	results, err := Run(ctx, Options{Targets: targets, Dir: dir, MPSControl: fakeControl(t), Env: os.Environ(),
		Command: []string{"sleep", "30"}, Stderr: &stderr})
	if err == nil || len(results) != 1 || results[0].Outcome != "cancelled" {
		t.Fatalf("%v, %+v", err, results)
	}
	if calls, _ := os.ReadFile(filepath.Join(dir, "mps-1g.10gb", "log", "calls")); string(calls) != "start\nquit\n" {
		t.Errorf("the daemon: %q", calls)
	}
}

// A run that left a process behind has it ended before the next run (it
// would hold the MPS daemon and the GPU); a GPU that is already a MIG
// slice is no place to emulate others.
func TestARunLeavesNothingBehind(t *testing.T) {
	killAfter = 200 * time.Millisecond
	t.Cleanup(func() { killAfter = 10 * time.Second })
	pidFile := filepath.Join(t.TempDir(), "pid")
	results, _ := run(t, Options{MPSControl: fakeControl(t),
		Command: []string{"sh", "-c", `sleep 30 & echo $! > ` + pidFile}})
	if results[0].Outcome != Completed {
		t.Fatalf("%+v", results)
	}
	data, _ := os.ReadFile(pidFile)
	pid, _ := strconv.Atoi(strings.TrimSpace(string(data)))
	time.Sleep(100 * time.Millisecond)
	if pid <= 0 || alive(pid) {
		t.Errorf("the background process %d outlived its run", pid)
	}

	t.Setenv("CUDA_VISIBLE_DEVICES", "MIG-4a3b2c1d-0000-1111-2222-333344445555")
	results, stderr := run(t, Options{MPSControl: fakeControl(t), Command: []string{"true"}})
	if len(results) != 1 || results[0].Profile != "plain" || !strings.Contains(stderr, "the job's GPU is a MIG slice") {
		t.Errorf("on a MIG slice: %+v\n%s", results, stderr)
	}
}

// alive reports whether a process runs (a zombie waiting for its reaper
// does not).
func alive(pid int) bool {
	stat, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	if err != nil {
		return false
	}
	_, rest, _ := strings.Cut(string(stat), ") ")
	return !strings.HasPrefix(rest, "Z")
}

// Each emulated slice is measured under its own limits before its run, the
// whole GPU's run carries the whole GPU's measure, and a measure that fails
// leaves the run as it was, with why.
func TestEachSliceIsMeasured(t *testing.T) {
	measure, _ := filepath.Abs("testdata/fake-measure-slice")
	whole, err := Measure(context.Background(), []string{measure}, os.Environ())
	if err != nil || whole.SMs != 132 || whole.CopyGBs != 2970 {
		t.Fatalf("the whole GPU: %+v, %v", whole, err)
	}
	results, _ := run(t, Options{MPSControl: fakeControl(t), Measure: []string{measure}, Whole: whole, Command: []string{"true"}})
	got := map[string]string{}
	for _, r := range results {
		if r.Measured != nil {
			got[r.Profile] = fmt.Sprintf("%d %.0f", r.Measured.SMs, r.Measured.CopyGBs)
		}
	}
	if fmt.Sprint(got) != "map[1g.10gb:16 1129 3g.40gb:50 2643 full:132 2970]" {
		t.Errorf("measured: %v", got)
	}

	t.Setenv("FAKE_MEASURE_FAIL", "1")
	results, stderr := run(t, Options{MPSControl: fakeControl(t), Measure: []string{measure}, Command: []string{"true"}})
	if r := results[0]; r.Measured != nil || r.Outcome != Completed || !strings.Contains(r.Note, "no CUDA driver") ||
		!strings.Contains(stderr, "the slice could not be measured") {
		t.Errorf("a failed measure: %+v\n%s", r, stderr)
	}
	if _, err := Measure(context.Background(), []string{"sh", "-c", "echo not json"}, nil); err == nil || !strings.Contains(err.Error(), "printed no measure") {
		t.Errorf("a measure that printed nothing to read: %v", err)
	}
}

// A GPU that measures with no limits and not under the MPS daemon cannot
// serve its clients (a compute mode that forbids them): the daemon is
// stopped and the job runs once as it is, saying why, instead of failing
// on every profile.
func TestAClientThatCannotUseTheGPUFallsBackToAPlainRun(t *testing.T) {
	measure, _ := filepath.Abs("testdata/fake-measure-slice")
	whole, err := Measure(context.Background(), []string{measure}, os.Environ())
	if err != nil {
		t.Fatal(err)
	}
	t.Setenv("FAKE_MPS_CLIENT_FAIL", "1")
	dir := t.TempDir()
	results, stderr := run(t, Options{Dir: dir, MPSControl: fakeControl(t), Measure: []string{measure}, Whole: whole,
		Command: []string{"sh", "-c", "echo ${CUDA_MPS_ACTIVE_THREAD_PERCENTAGE:-none}"}})
	if len(results) != 1 || results[0].Profile != "plain" || results[0].Outcome != Completed ||
		!strings.Contains(results[0].Note, "could not use the GPU (measure-slice: cuDevicePrimaryCtxRetain failed") {
		t.Fatalf("%+v\n%s", results, stderr)
	}
	if out, _ := os.ReadFile(filepath.Join(dir, results[0].Output)); strings.TrimSpace(string(out)) != "none" {
		t.Errorf("the plain run ran under MPS limits: %q", out)
	}
	if calls, _ := os.ReadFile(filepath.Join(dir, "mps-1g.10gb", "log", "calls")); string(calls) != "start\nquit\n" {
		t.Errorf("the daemon: %q", calls)
	}
}

// Stopping a daemon waits for its processes to end (quit returns before
// they do), and says so when they outlive the wait; the job's own
// processes, which carry a client's share, are not the daemon's.
func TestStopWaitsForTheDaemonToEnd(t *testing.T) {
	t.Setenv("FAKE_MPS_LINGER", "0.3")
	d := daemon{control: fakeControl(t), dir: t.TempDir(), env: os.Environ()}
	if err := d.start(); err != nil {
		t.Fatal(err)
	}
	client := exec.Command("sleep", "5")
	client.Env = append(os.Environ(), d.clientEnv(Target{SMShare: 0.13, MemoryMiB: 9728})...)
	if err := client.Start(); err != nil {
		t.Fatal(err)
	}
	defer func() { _ = client.Process.Kill(); _ = client.Wait() }()
	for deadline := time.Now().Add(2 * time.Second); len(d.processes()) == 0; time.Sleep(10 * time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatal("the fake daemon's process never showed")
		}
	}
	start := time.Now()
	if err := d.stop(); err != nil {
		t.Fatal(err)
	}
	if took := time.Since(start); took < 250*time.Millisecond || len(d.processes()) != 0 {
		t.Errorf("stop returned after %v with %v left; want after the daemon's 0.3 s, none left", took, d.processes())
	}
	if _, err := os.Stat(filepath.Join(d.dir, "pipe")); !os.IsNotExist(err) {
		t.Errorf("the daemon's pipe directory is left behind: %v", err)
	}
	if _, err := os.Stat(filepath.Join(d.dir, "log", "calls")); err != nil {
		t.Errorf("its log is gone: %v", err)
	}

	t.Setenv("FAKE_MPS_LINGER", "3")
	defer func(w time.Duration) { stopWait = w }(stopWait)
	stopWait = 200 * time.Millisecond
	if err := d.start(); err != nil {
		t.Fatal(err)
	}
	if err := d.stop(); err == nil || !strings.Contains(err.Error(), "still running") {
		t.Errorf("a daemon outliving the wait: %v", err)
	}
}
