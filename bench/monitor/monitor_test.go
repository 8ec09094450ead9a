package monitor

import (
	"bytes"
	"errors"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/NVIDIA/go-nvml/pkg/nvml"

	"github.com/migadvisor/migadvisor/bench/gpu"
	"github.com/migadvisor/migadvisor/internal/fakenvml"
	"github.com/migadvisor/migadvisor/slurm"
)

// slice is a node with one MIG-enabled A100 whose only MIG device is a 1g.10gb.
func slice() *fakenvml.Server {
	return &fakenvml.Server{GPUs: []*fakenvml.Device{{
		Name: "NVIDIA A100-SXM4-80GB", UUID: "GPU-aaaa1111-0000-0000-0000-000000000000", TotalMiB: 81920,
		MIG: []*fakenvml.Device{{Name: "NVIDIA A100-SXM4-80GB MIG 1g.10gb", UUID: "MIG-1111aaaa-0000-0000-0000-000000000000", TotalMiB: 9728, GI: 9}},
	}}}
}

type run struct {
	status int
	sum    *Summary
	err    error
	stderr string
}

func runMonitor(t *testing.T, srv *fakenvml.Server, env map[string]string, cmd ...string) run {
	t.Helper()
	var stdout, stderr bytes.Buffer
	opt := Options{Command: cmd, Interval: 20 * time.Millisecond, Stdout: &stdout, Stderr: &stderr,
		Env: func(k string) (string, bool) { v, ok := env[k]; return v, ok }}
	if srv != nil {
		opt.NVML = srv.Lib
	}
	status, sum, err := Run(opt)
	return run{status, sum, err, stderr.String()}
}

func TestExitStatusPassesThrough(t *testing.T) {
	for _, c := range []struct {
		script string
		want   int
	}{
		{"exit 0", 0},
		{"exit 7", 7},
		{"exit 255", 255},
		{"kill -KILL $$", 128 + 9},
		{"kill -SEGV $$", 128 + 11},
	} {
		r := runMonitor(t, nil, nil, "sh", "-c", c.script)
		if r.err != nil || r.status != c.want {
			t.Errorf("%q: status %d err %v, want %d", c.script, r.status, r.err, c.want)
		}
		if r.sum == nil || r.sum.ExitStatus != c.want {
			t.Errorf("%q: summary exit status %+v", c.script, r.sum)
		}
	}
}

func TestCommandThatCannotStart(t *testing.T) {
	dir := t.TempDir()
	notExec := filepath.Join(dir, "job.sh")
	if err := os.WriteFile(notExec, []byte("#!/bin/sh\necho hi\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		cmd  string
		want int
	}{
		{filepath.Join(dir, "missing"), ExitNotFound},
		{"no-such-command-migadvisor", ExitNotFound},
		{notExec, ExitCannotExecute},
	} {
		r := runMonitor(t, nil, nil, c.cmd)
		var se *StartError
		if !errors.As(r.err, &se) || r.status != c.want || !strings.Contains(r.err.Error(), "cannot run") {
			t.Errorf("%s: status %d err %v, want a StartError and %d", c.cmd, r.status, r.err, c.want)
		}
	}
}

// The monitor passes SIGTERM (Slurm's time limit) and SIGUSR1 on to the
// command, which decides what to do with them.
func TestSignalsAreForwarded(t *testing.T) {
	for sig, code := range map[syscall.Signal]int{syscall.SIGTERM: 42, syscall.SIGUSR1: 43, syscall.SIGHUP: 44} {
		ready := filepath.Join(t.TempDir(), "ready")
		script := `trap 'exit 42' TERM; trap 'exit 43' USR1; trap 'exit 44' HUP; : > "$1"; while :; do sleep 0.02; done`
		done := make(chan run, 1)
		go func() { done <- runMonitor(t, nil, nil, "sh", "-c", script, "sh", ready) }()
		waitFile(t, ready)
		if err := syscall.Kill(os.Getpid(), sig); err != nil {
			t.Fatal(err)
		}
		select {
		case r := <-done:
			if r.status != code {
				t.Errorf("%v: status %d, want %d (the command's own)", sig, r.status, code)
			}
		case <-time.After(10 * time.Second):
			t.Fatalf("%v was not forwarded: the command still runs", sig)
		}
	}
}

func waitFile(t *testing.T, path string) {
	t.Helper()
	for i := 0; i < 500; i++ {
		if _, err := os.Stat(path); err == nil {
			return
		}
		time.Sleep(10 * time.Millisecond)
	}
	t.Fatalf("%s never appeared", path)
}

// The command's own process (found by PID) is what the peak counts.
func TestMeasuresTheCommandsProcesses(t *testing.T) {
	srv := slice()
	dev := srv.GPUs[0].MIG[0]
	dir := t.TempDir()
	pidFile, goOn := filepath.Join(dir, "pid"), filepath.Join(dir, "go")
	script := `echo $$ > "$1.tmp"; mv "$1.tmp" "$1"; while [ ! -e "$2" ]; do sleep 0.01; done; exit 3`
	done := make(chan run, 1)
	go func() {
		done <- runMonitor(t, srv, map[string]string{"CUDA_VISIBLE_DEVICES": "0", "SLURM_JOB_ID": "77"}, "sh", "-c", script, "sh", pidFile, goOn)
	}()
	waitFile(t, pidFile)
	data, _ := os.ReadFile(pidFile)
	pid, err := strconv.Atoi(strings.TrimSpace(string(data)))
	if err != nil {
		t.Fatal(err)
	}
	dev.SetUsed(5400)
	dev.SetProcesses(map[uint32]uint64{uint32(pid): 5120, uint32(os.Getpid()): 300})
	time.Sleep(150 * time.Millisecond)
	dev.SetUsed(900)
	dev.SetProcesses(map[uint32]uint64{uint32(pid): 600})
	time.Sleep(100 * time.Millisecond)
	os.WriteFile(goOn, nil, 0o644)
	r := <-done
	if r.status != 3 || r.err != nil {
		t.Fatalf("status %d err %v", r.status, r.err)
	}
	s := r.sum
	if s.NVML != "ok" || len(s.Devices) != 1 || s.Samples < 3 || s.JobID != "77" {
		t.Fatalf("summary %+v", s)
	}
	d := s.Devices[0]
	if d.PeakProcessMiB == nil || *d.PeakProcessMiB != 5120 || d.ProcessScope != gpu.ScopeTree || d.PeakUsedMiB != 5400 || d.Profile != "1g.10gb" {
		t.Errorf("device %+v", d)
	}
	if d.Utilization != gpu.UtilUnsupported {
		t.Errorf("utilization %q on an A100 MIG slice", d.Utilization)
	}
	var out bytes.Buffer
	path := filepath.Join(dir, SummaryName("77"))
	Finish(s, path, &out)
	want := "MIGADVISOR_GPU peak_mib=5120 used_peak_mib=5400 total_mib=9728 samples="
	if !strings.HasPrefix(out.String(), want) || !strings.HasSuffix(out.String(), " util=unsupported profile=1g.10gb device=NVIDIA A100-SXM4-80GB MIG 1g.10gb\n") {
		t.Errorf("stderr line %q", out.String())
	}
	back, err := ReadSummary(path)
	if err != nil {
		t.Fatal(err)
	}
	if peak, dev := back.PeakMiB(); peak != 5120 || dev.UUID != "MIG-1111aaaa-0000-0000-0000-000000000000" || back.ExitStatus != 3 {
		t.Errorf("read back: peak %v device %+v", peak, dev)
	}
}

func TestNoNVMLRunsTheCommand(t *testing.T) {
	srv := slice()
	srv.InitRet = nvml.ERROR_LIBRARY_NOT_FOUND
	r := runMonitor(t, srv, nil, "sh", "-c", "echo ran; exit 5")
	if r.status != 5 || r.err != nil {
		t.Fatalf("status %d err %v", r.status, r.err)
	}
	var out bytes.Buffer
	Finish(r.sum, "", &out)
	if got := out.String(); strings.Count(got, "\n") != 1 || !strings.Contains(got, "ERROR_LIBRARY_NOT_FOUND") {
		t.Errorf("want one warning line, got %q", got)
	}
}

// An NVML failure mid-run stops sampling; the command runs to its end.
func TestNVMLFailureMidRun(t *testing.T) {
	srv := slice()
	dev := srv.GPUs[0].MIG[0]
	dev.SetUsed(2000)
	go func() {
		time.Sleep(100 * time.Millisecond)
		dev.FailMemory(nvml.ERROR_GPU_IS_LOST)
	}()
	r := runMonitor(t, srv, nil, "sh", "-c", "sleep 0.4; exit 9")
	if r.status != 9 {
		t.Fatalf("status %d", r.status)
	}
	if !strings.Contains(r.sum.NVML, "stopped") || len(r.sum.Devices) != 1 || r.sum.Devices[0].PeakUsedMiB != 2000 {
		t.Errorf("summary %+v", r.sum)
	}
}

// A wedged NVML call must not hold the job past the command's end.
func TestHungNVMLDoesNotHoldTheJob(t *testing.T) {
	srv := slice()
	block := make(chan struct{})
	defer close(block)
	srv.GPUs[0].MIG[0].BlockMemory(block)
	start := time.Now()
	var stderr bytes.Buffer
	status, sum, err := Run(Options{Command: []string{"true"}, Interval: 20 * time.Millisecond, Stderr: &stderr,
		NVML: srv.Lib, GiveUp: 200 * time.Millisecond, Env: func(string) (string, bool) { return "", false }})
	if err != nil || status != 0 {
		t.Fatalf("status %d err %v", status, err)
	}
	if elapsed := time.Since(start); elapsed > 5*time.Second {
		t.Errorf("the monitor waited %v for a hung NVML", elapsed)
	}
	if !strings.Contains(sum.NVML, "did not return") {
		t.Errorf("NVML state %q", sum.NVML)
	}
}

func TestNoVisibleGPU(t *testing.T) {
	r := runMonitor(t, slice(), map[string]string{"CUDA_VISIBLE_DEVICES": ""}, "true")
	var out bytes.Buffer
	Finish(r.sum, "", &out)
	if r.status != 0 || !strings.Contains(out.String(), "no GPU is visible") {
		t.Errorf("status %d stderr %q", r.status, out.String())
	}
}

func TestDefaultOut(t *testing.T) {
	dir := t.TempDir()
	jobOut := filepath.Join(dir, "slurm-12.out")
	os.WriteFile(jobOut, nil, 0o644)
	env := func(m map[string]string) func(string) (string, bool) {
		return func(k string) (string, bool) { v, ok := m[k]; return v, ok }
	}
	cases := []struct {
		env    map[string]string
		stdout string
		want   string
	}{
		{map[string]string{}, jobOut, ""}, // not a Slurm job: no file unless --out
		{map[string]string{"SLURM_JOB_ID": "12"}, jobOut, filepath.Join(dir, "migadvisor-12.json")},
		{map[string]string{"SLURM_JOB_ID": "12", "SLURM_SUBMIT_DIR": "/sub"}, "/dev/pts/3", "/sub/migadvisor-12.json"},
		{map[string]string{"SLURM_JOB_ID": "12", "SLURM_STEP_ID": "0", "SLURM_PROCID": "3"}, jobOut, filepath.Join(dir, "migadvisor-12.0.3.json")},
	}
	for _, c := range cases {
		if got := DefaultOut(env(c.env), c.stdout); got != c.want {
			t.Errorf("DefaultOut(%v, %s) = %q, want %q", c.env, c.stdout, got, c.want)
		}
	}
}

func TestReadSummaryRefusesOtherVersions(t *testing.T) {
	path := filepath.Join(t.TempDir(), "s.json")
	os.WriteFile(path, []byte(`{"version": 9, "devices": []}`), 0o644)
	if _, err := ReadSummary(path); err == nil || !strings.Contains(err.Error(), "version 9") {
		t.Errorf("err = %v", err)
	}
}

// The summary the monitor writes is read by collect through the job-output
// protocol's own reader (slurm.ReadMonitorSummary): the same peak, device
// label and figures, whichever scope the driver gave.
func TestSummaryReadsBackThroughTheProtocol(t *testing.T) {
	process := 5120.0
	mean, peakUtil, memMean, memPeak := 41.0, 97.0, 18.5, 63.0
	for _, scope := range []string{gpu.ScopeTree, gpu.ScopeDevice, gpu.ScopeNone} {
		d := &gpu.DeviceStats{Device: gpu.Device{Name: "NVIDIA A100-SXM4-80GB", MIG: true, Profile: "1g.10gb", TotalMiB: 9728},
			Samples: 9, PeakUsedMiB: 5400, PeakProcessMiB: &process, ProcessScope: scope, Utilization: gpu.UtilSupported,
			UtilGPUMean: &mean, UtilGPUMax: &peakUtil, UtilMemMean: &memMean, UtilMemMax: &memPeak}
		path := filepath.Join(t.TempDir(), slurm.SummaryName("7"))
		if err := (&Summary{Version: SummaryVersion, Devices: []*gpu.DeviceStats{d}}).Write(path); err != nil {
			t.Fatal(err)
		}
		read, err := slurm.ReadMonitorSummary(path)
		if err != nil {
			t.Fatal(err)
		}
		peak, got := read.Peak()
		if got == nil || peak != d.PeakMiB() || got.Label() != d.Label() || got.TotalMiB != 9728 || *got.UtilGPUMean != 41 {
			t.Errorf("scope %s: peak %v (want %v), label %q (want %q)", scope, peak, d.PeakMiB(), got.Label(), d.Label())
		}
		if got != nil && (got.UtilMemMean == nil || *got.UtilMemMean != 18.5 || got.UtilMemMax == nil || *got.UtilMemMax != 63) {
			t.Errorf("scope %s: memory utilization %v %v, want 18.5 and 63", scope, got.UtilMemMean, got.UtilMemMax)
		}
	}
}

// The stderr line carries the memory utilization (mem_util) after the GPU's
// where both its figures are known, and the protocol's reader
// (slurm.ScanOutput) reads back the figures of the summary; where they are
// not known the line has no mem_util.
func TestLineCarriesMemoryUtilization(t *testing.T) {
	process := 30100.0
	mean, peakUtil, memMean, memPeak := 43.2, 98.0, 20.6, 60.0
	d := &gpu.DeviceStats{Device: gpu.Device{Name: "NVIDIA H100 80GB HBM3", TotalMiB: 81559}, Samples: 120, PeakUsedMiB: 30500,
		PeakProcessMiB: &process, ProcessScope: gpu.ScopeTree, Utilization: gpu.UtilSupported,
		UtilGPUMean: &mean, UtilGPUMax: &peakUtil, UtilMemMean: &memMean, UtilMemMax: &memPeak}
	s := &Summary{Version: SummaryVersion, Devices: []*gpu.DeviceStats{d}}
	lines := s.Lines()
	want := "MIGADVISOR_GPU peak_mib=30100 used_peak_mib=30500 total_mib=81559 samples=120 scope=tree util=mean:43,max:98 mem_util=mean:21,max:60 device=NVIDIA H100 80GB HBM3"
	if len(lines) != 1 || lines[0] != want {
		t.Fatalf("lines %q, want %q", lines, want)
	}
	ev, err := slurm.ScanOutput(strings.NewReader(lines[0]+"\n"), slurm.ScanOptions{})
	if err != nil || ev.GPUUtilMean != 43 || ev.GPUMemUtilMean != 21 || ev.GPUMemUtilMax != 60 || ev.GPUPeakMiB != 30100 {
		t.Errorf("read back: %+v %v", ev, err)
	}
	d.UtilMemMax = nil // one figure alone is not written
	if lines := s.Lines(); len(lines) != 1 || strings.Contains(lines[0], "mem_util") || !strings.Contains(lines[0], " util=mean:43,max:98 device=") {
		t.Errorf("without the memory's maximum: %q", lines)
	}
}
