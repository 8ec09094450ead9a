// Package monitor runs a job's command and samples the GPU memory it uses
// through NVML, without ever standing in the job's way: the command gets the
// job's stdio and signals and its exit status passes through; a missing or
// failing NVML costs one warning line, never the job.
package monitor

import (
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"os/signal"
	"path/filepath"
	"strconv"
	"sync"
	"syscall"
	"time"

	"github.com/NVIDIA/go-nvml/pkg/nvml"

	"github.com/migadvisor/migadvisor/bench/gpu"
	"github.com/migadvisor/migadvisor/slurm"
)

// DefaultInterval is the sampling period: short enough to catch a peak that
// lasts a second, long enough to cost well under 1% of a core.
const DefaultInterval = 500 * time.Millisecond

// ForwardedSignals reach the command when the monitor receives them. Slurm
// sends SIGTERM at the time limit; --signal and scancel -s send others.
var ForwardedSignals = []os.Signal{syscall.SIGTERM, syscall.SIGINT, syscall.SIGHUP, syscall.SIGUSR1, syscall.SIGUSR2}

// Exit statuses of a command that could not start, as shells use them.
const (
	ExitCannotExecute = 126
	ExitNotFound      = 127
)

// StartError is a command that could not be started.
type StartError struct {
	Command string
	Status  int
	Err     error
}

func (e *StartError) Error() string { return fmt.Sprintf("cannot run %s: %v", e.Command, e.Err) }
func (e *StartError) Unwrap() error { return e.Err }

// Options says what to run and where to report.
type Options struct {
	Command  []string
	Interval time.Duration
	Stdin    io.Reader
	Stdout   io.Writer
	Stderr   io.Writer             // the command's stderr, and the monitor's lines
	NVML     func() nvml.Interface // nil: no NVML on this machine
	Env      func(string) (string, bool)
	Now      func() time.Time
	// GiveUp bounds the wait for the sampler after the command ends, should
	// an NVML call hang.
	GiveUp time.Duration
}

// Run runs the command under the monitor and returns its exit status: its
// own code, or 128+N when a signal N ended it. A command that cannot start
// is a *StartError with the status a shell would give (126 or 127).
func Run(opt Options) (int, *Summary, error) {
	opt.defaults()
	cmd, startErr := command(opt)
	if startErr != nil {
		return startErr.Status, nil, startErr
	}
	signals := make(chan os.Signal, 8)
	signal.Notify(signals, ForwardedSignals...)
	defer signal.Stop(signals)
	sum := &Summary{Version: SummaryVersion, Command: opt.Command, Started: opt.Now().UTC(),
		IntervalMS: opt.Interval.Milliseconds(), NVML: "ok"}
	sum.JobID, _ = opt.Env("SLURM_JOB_ID")
	sum.Host, _ = os.Hostname()
	if err := cmd.Start(); err != nil {
		se := &StartError{Command: opt.Command[0], Status: startStatus(err), Err: err}
		return se.Status, nil, se
	}
	s := startSampling(opt, cmd.Process.Pid, sum.JobID)
	exited := make(chan struct{})
	go forward(signals, cmd.Process, exited)
	status := exitStatus(cmd.Wait())
	close(exited)
	s.stop(opt.GiveUp, sum)
	sum.Ended, sum.ExitStatus = opt.Now().UTC(), status
	sum.Overhead = selfOverhead(sum.Ended.Sub(sum.Started))
	return status, sum, nil
}

func (o *Options) defaults() {
	if o.Interval <= 0 {
		o.Interval = DefaultInterval
	}
	if o.Env == nil {
		o.Env = os.LookupEnv
	}
	if o.Now == nil {
		o.Now = time.Now
	}
	if o.GiveUp <= 0 {
		o.GiveUp = 2 * time.Second
	}
}

func command(opt Options) (*exec.Cmd, *StartError) {
	if len(opt.Command) == 0 {
		return nil, &StartError{Status: ExitNotFound, Err: errors.New("no command given")}
	}
	path, err := exec.LookPath(opt.Command[0])
	if err != nil {
		return nil, &StartError{Command: opt.Command[0], Status: startStatus(err), Err: err}
	}
	cmd := exec.Command(path, opt.Command[1:]...)
	cmd.Args[0] = opt.Command[0]
	cmd.Stdin, cmd.Stdout, cmd.Stderr = opt.Stdin, opt.Stdout, opt.Stderr
	cmd.Env = append(os.Environ(), slurm.MonitoredEnv+"=1")
	return cmd, nil
}

// selfOverhead reads the monitor's own CPU time and peak memory.
func selfOverhead(wall time.Duration) *Overhead {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		return nil
	}
	cpu := time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
	o := &Overhead{CPUSeconds: cpu.Seconds(), MaxRSSMiB: float64(ru.Maxrss) / 1024} // Linux: KiB
	if wall > 0 {
		o.CPUPercent = 100 * cpu.Seconds() / wall.Seconds()
	}
	return o
}

// startStatus is 127 for a command not found, 126 for one found but not
// executable, as in sh.
func startStatus(err error) int {
	if errors.Is(err, exec.ErrNotFound) || errors.Is(err, os.ErrNotExist) {
		return ExitNotFound
	}
	return ExitCannotExecute
}

// forward passes each signal to the command until it has exited.
func forward(signals <-chan os.Signal, p *os.Process, exited <-chan struct{}) {
	for {
		select {
		case sig := <-signals:
			_ = p.Signal(sig) // the process may just have exited
		case <-exited:
			return
		}
	}
}

// exitStatus turns Wait's result into a shell-style status.
func exitStatus(err error) int {
	var ee *exec.ExitError
	if err == nil {
		return 0
	}
	if errors.As(err, &ee) {
		if ws, ok := ee.Sys().(syscall.WaitStatus); ok && ws.Signaled() {
			return 128 + int(ws.Signal())
		}
		return ee.ExitCode()
	}
	return 1
}

// sampling is the sampler goroutine of one run. It samples without the lock
// and publishes a copy after each sample, so a sampler stuck in an NVML call
// never holds up the end of the job.
type sampling struct {
	mu      sync.Mutex // guards the fields below
	snap    []gpu.DeviceStats
	samples int
	nvml    string
	notes   []string

	stopped chan struct{}
	done    chan struct{}
}

func startSampling(opt Options, pid int, job string) *sampling {
	s := &sampling{nvml: "ok", stopped: make(chan struct{}), done: make(chan struct{})}
	go func() {
		defer close(s.done)
		s.run(opt, newProcTree(pid, job))
	}()
	return s
}

// stop ends sampling, waiting for it at most giveUp, and puts what it found
// in sum.
func (s *sampling) stop(giveUp time.Duration, sum *Summary) {
	close(s.stopped)
	select {
	case <-s.done:
	case <-time.After(giveUp):
		s.note("stopped: an NVML call did not return", true)
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	sum.Samples, sum.NVML, sum.Notes = s.samples, s.nvml, append(sum.Notes, s.notes...)
	for i := range s.snap {
		d := s.snap[i]
		sum.Devices = append(sum.Devices, &d)
	}
}

func (s *sampling) run(opt Options, tree gpu.ProcessTree) {
	lib, picked, notes, err := openDevices(opt)
	if err != nil {
		s.note(err.Error(), true)
		return
	}
	defer shutdown(lib)
	sampler := gpu.NewSampler(lib, picked, tree)
	s.publish(sampler, 0, notes)
	if len(picked) == 0 {
		return
	}
	ticker := time.NewTicker(opt.Interval)
	defer ticker.Stop()
	for n := 1; ; n++ {
		if err := sampler.Sample(opt.Now().UTC()); err != nil {
			s.note("stopped: "+err.Error(), true)
			return
		}
		s.publish(sampler, n, nil)
		select {
		case <-ticker.C:
		case <-s.stopped:
			return
		}
	}
}

// publish copies the sampler's figures for stop to read.
func (s *sampling) publish(sampler *gpu.Sampler, samples int, notes []string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.snap = s.snap[:0]
	for _, st := range sampler.Stats {
		s.snap = append(s.snap, *st)
	}
	s.samples = samples
	s.notes = append(s.notes, notes...)
}

func (s *sampling) note(msg string, nvmlState bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if nvmlState {
		s.nvml = msg
	}
	s.notes = append(s.notes, msg)
}

// openDevices initialises NVML and resolves CUDA_VISIBLE_DEVICES.
func openDevices(opt Options) (lib nvml.Interface, picked []gpu.Device, notes []string, err error) {
	defer func() {
		if r := recover(); r != nil {
			err = fmt.Errorf("unavailable: %v", r)
		}
	}()
	if opt.NVML == nil {
		return nil, nil, nil, errors.New("unavailable: no NVML in this build")
	}
	lib = opt.NVML()
	if ret := lib.Init(); ret != nvml.SUCCESS {
		return nil, nil, nil, fmt.Errorf("unavailable: %s", nvml.ErrorString(ret))
	}
	all, err := gpu.Enumerate(lib)
	if err != nil {
		shutdown(lib)
		return nil, nil, nil, fmt.Errorf("unavailable: %v", err)
	}
	visible, set := opt.Env("CUDA_VISIBLE_DEVICES")
	picked, notes = gpu.Resolve(all, visible, set)
	return lib, picked, notes, nil
}

func shutdown(lib nvml.Interface) {
	defer func() { _ = recover() }()
	lib.Shutdown()
}

// Finish writes the summary file (when out is set) and the stderr lines.
// Failing to write is a warning: the job's status stands.
func Finish(sum *Summary, out string, stderr io.Writer) {
	switch {
	case sum.NVML != "ok" && sum.Samples == 0:
		fmt.Fprintf(stderr, "migadvisor monitor: no GPU memory measured: NVML %s\n", sum.NVML)
	case sum.NVML != "ok":
		fmt.Fprintf(stderr, "migadvisor monitor: GPU sampling %s; the figures below cover the time before\n", sum.NVML)
	case len(sum.Devices) == 0:
		fmt.Fprintln(stderr, "migadvisor monitor: no GPU memory measured: no GPU is visible to this job")
	case sum.Samples == 0:
		fmt.Fprintln(stderr, "migadvisor monitor: no GPU memory measured: the command ended before the first sample")
	}
	for _, l := range sum.Lines() {
		fmt.Fprintln(stderr, l)
	}
	if out == "" {
		return
	}
	if err := sum.Write(out); err != nil {
		fmt.Fprintf(stderr, "migadvisor monitor: could not write the summary: %v\n", err)
	}
}

// DefaultOut is where a job's summary goes when --out is not given: beside
// the job's output file (stdout, when it is a file), named after the job; ""
// outside a Slurm job. A step of srun gets its own name.
func DefaultOut(env func(string) (string, bool), stdout string) string {
	job, ok := env("SLURM_JOB_ID")
	if !ok || job == "" {
		return ""
	}
	name := job
	if step, ok := env("SLURM_STEP_ID"); ok && step != "" && isNumber(step) {
		name += "." + step
		if proc, ok := env("SLURM_PROCID"); ok && proc != "" && proc != "0" {
			name += "." + proc
		}
	}
	dir := "."
	if info, err := os.Stat(stdout); stdout != "" && filepath.IsAbs(stdout) && err == nil && info.Mode().IsRegular() {
		dir = filepath.Dir(stdout)
	} else if submit, ok := env("SLURM_SUBMIT_DIR"); ok && submit != "" {
		dir = submit
	}
	return filepath.Join(dir, SummaryName(name))
}

// StdoutPath is the file this process's stdout is, if any.
func StdoutPath() string {
	target, _ := os.Readlink("/proc/self/fd/1")
	return target
}

func isNumber(s string) bool {
	_, err := strconv.Atoi(s)
	return err == nil
}
