// Package emulate runs a job once per MIG profile on one whole GPU, each
// run under its own CUDA MPS daemon that gives it the profile's share of
// the SMs and caps its device memory at the profile's usable memory: an
// answer to "would my job fit a 1g.10gb, and how slow would it be" on a GPU
// that is not cut into slices.
//
// MPS partitions SMs, not the memory system: an emulated slice has the
// whole GPU's bandwidth and L2, so a bandwidth-bound job runs faster than on
// the real slice (up to 3× on an H100 at 1g). Memory is capped with
// CUDA_MPS_PINNED_DEVICE_MEM_LIMIT, which a CUDA out-of-memory error enforces
// (on an H100 a 10 GiB cap lets PyTorch allocate 10112 MiB; the CUDA
// context is outside it). Results say "emulated" and which GPU ran them.
//
// Every step fails open: no MPS control binary, a daemon that will not
// start, a daemon whose client cannot use the GPU (measured with no limits
// and not under them: a compute mode that forbids it), or a GPU that is
// already a MIG slice leaves one plain run of the job and says why. Each run is a process group that is ended when its
// leader ends, its budget runs out or the job is cancelled, and its daemon
// is stopped after it.
package emulate

import (
	"bytes"
	"cmp"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"time"

	"github.com/migadvisor/migadvisor/catalog"
	"github.com/migadvisor/migadvisor/slurm"
)

// Target is a profile to emulate.
type Target struct {
	Profile   string
	SMShare   float64 // of the whole GPU the profile is a slice of
	MemoryMiB float64 // the profile's usable memory: the cap
	Whole     bool    // the whole GPU: run with no MPS limits
}

// Targets are the named profiles of the site (all when none are named),
// smallest first.
func Targets(site *catalog.Site, names []string) ([]Target, error) {
	var out []Target
	for _, p := range site.Profiles {
		if len(names) > 0 && !slices.Contains(names, p.Name) {
			continue
		}
		out = append(out, Target{Profile: p.Name, SMShare: site.Shares(&p).SM, MemoryMiB: p.UsableMemory.MiB(), Whole: !p.IsMIG()})
	}
	for _, n := range names {
		if !slices.ContainsFunc(out, func(t Target) bool { return t.Profile == n }) {
			return nil, fmt.Errorf("site %s has no profile %q (it has %v)", site.Name, n, site.ProfileNames())
		}
	}
	slices.SortStableFunc(out, func(a, b Target) int {
		return cmp.Or(cmp.Compare(a.SMShare, b.SMShare), cmp.Compare(a.MemoryMiB, b.MemoryMiB))
	})
	return out, nil
}

// Percentage is the MPS active-thread percentage for the target's share of
// the SMs, rounded up: MPS grants whole TPCs (two SMs), rounding down, so
// 13% gives 16 of an H100's 132 SMs, an H100 1g slice's 16 (12% would give
// 14), and an A100 1g slice's 14 of 108 its share.
func (t Target) Percentage() int {
	return min(100, max(1, int(math.Ceil(100*t.SMShare-1e-9))))
}

// MemoryLimit is the CUDA_MPS_PINNED_DEVICE_MEM_LIMIT value for device 0
// of the job's visible devices.
func (t Target) MemoryLimit() string {
	return fmt.Sprintf("0=%dM", int(math.Floor(t.MemoryMiB)))
}

// Options say what to run and how.
type Options struct {
	Targets []Target
	Command []string
	// Monitor is the command that runs Command under the GPU memory monitor
	// with its summary in a file: Monitor(summary) + "--" + Command. nil:
	// Command runs alone.
	Monitor func(summary string) []string
	// Budget bounds each profile's run (0: none); a run cut short keeps what
	// it measured.
	Budget time.Duration
	// MPSControl is nvidia-cuda-mps-control ("": looked up on PATH).
	MPSControl string
	// Dir holds each profile's output and summary, and the MPS daemons'
	// pipes and logs.
	Dir    string
	Env    []string  // the job's environment (os.Environ())
	Stderr io.Writer // progress, a line per run
	// Ran, when set, is told the runs so far after each: the record is kept
	// as the emulation goes, so a job killed midway keeps what it measured.
	Ran func([]Result)
	// Measure is the command that measures the slice it runs in (prints a
	// slurm.SliceMeasure as JSON): run under each profile's limits before
	// the profile's run. nil: nothing is measured.
	Measure []string
	// Whole is the whole GPU as Measure found it with no limits (the whole
	// GPU's run is measured as that), nil when it was not measured.
	Whole *slurm.SliceMeasure
}

// Result is one profile's run, as the record holds it.
type Result = slurm.EmulatedRun

// Outcomes.
const (
	Completed = slurm.EmulatedCompleted
	Failed    = slurm.EmulatedFailed
	Budget    = slurm.EmulatedBudget
)

// Run runs the command once per target, smallest first. It stops early
// only when ctx is cancelled (the job's scancel); MPS that cannot be used
// ends the emulation with one plain run of the command.
func Run(ctx context.Context, opt Options) ([]Result, error) {
	if len(opt.Command) == 0 {
		return nil, errors.New("no command to run")
	}
	if err := os.MkdirAll(opt.Dir, 0o755); err != nil {
		return nil, fmt.Errorf("emulation directory: %w", err)
	}
	control, lookErr := mpsControl(opt.MPSControl)
	if lookErr == nil {
		lookErr = notWholeGPU(opt.Env)
	}
	var results []Result
	ran := func(r Result) []Result {
		results = append(results, r)
		if opt.Ran != nil {
			opt.Ran(slices.Clone(results))
		}
		return results
	}
	for _, t := range opt.Targets {
		if ctx.Err() != nil {
			break
		}
		if t.Whole {
			r := runOne(ctx, opt, t, nil)
			if opt.Whole != nil {
				whole := *opt.Whole
				r.Measured = withClock(&whole, opt.Dir, r.Summary)
			}
			ran(r)
			continue
		}
		if lookErr != nil {
			return ran(plainFallback(ctx, opt, lookErr)), nil
		}
		d := daemon{control: control, dir: filepath.Join(opt.Dir, "mps-"+t.Profile), env: opt.Env}
		if err := d.start(); err != nil {
			_ = d.stop() // a daemon it forked before failing
			if ctx.Err() != nil {
				break
			}
			return ran(plainFallback(ctx, opt, err)), nil
		}
		measured, why := measureIn(ctx, opt, d.clientEnv(t))
		if measured == nil && opt.Whole != nil && ctx.Err() == nil {
			// The GPU measured without MPS and not under it: a client of
			// the daemon cannot use the GPU (a compute mode that forbids
			// it, an MPS that does not work here). The job's own run would
			// fail the same way on every profile.
			_ = d.stop()
			return ran(plainFallback(ctx, opt, fmt.Errorf("a CUDA client of the MPS daemon could not use the GPU (%s)", strings.TrimPrefix(why, "the slice could not be measured: ")))), nil
		}
		r := runOne(ctx, opt, t, d.clientEnv(t))
		r.Measured, r.Note = withClock(measured, opt.Dir, r.Summary), joinNote(why, r.Note)
		if err := d.stop(); err != nil {
			r.Note = joinNote(r.Note, "the MPS daemon would not stop: "+err.Error())
		}
		ran(r)
	}
	return results, ctx.Err()
}

func joinNote(a, b string) string {
	if a == "" || b == "" {
		return a + b
	}
	return a + "; " + b
}

// Measure runs the measuring command argv with env and reads what it
// printed.
func Measure(ctx context.Context, argv, env []string) (*slurm.SliceMeasure, error) {
	ctx, cancel := context.WithTimeout(ctx, measureFor)
	defer cancel()
	cmd := exec.CommandContext(ctx, argv[0], argv[1:]...)
	cmd.Env = env
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		if msg := bytes.TrimSpace(stderr.Bytes()); len(msg) > 0 {
			return nil, fmt.Errorf("%s (%v)", msg, err)
		}
		return nil, err
	}
	var m slurm.SliceMeasure
	if err := json.Unmarshal(out, &m); err != nil || m.SMs <= 0 || m.CopyGBs <= 0 {
		return nil, fmt.Errorf("it printed no measure: %q", bytes.TrimSpace(out))
	}
	return &m, nil
}

// measureFor bounds a measurement: a CUDA context and two seconds of
// copies.
var measureFor = time.Minute

// measureIn measures the slice a profile's limits make, and says why not
// when it cannot: the run goes on without it.
func measureIn(ctx context.Context, opt Options, limits []string) (*slurm.SliceMeasure, string) {
	if opt.Measure == nil {
		return nil, ""
	}
	m, err := Measure(ctx, opt.Measure, append(slices.Clone(opt.Env), limits...))
	if err != nil {
		fmt.Fprintf(opt.Stderr, "migadvisor emulate: the slice could not be measured: %v\n", err)
		return nil, "the slice could not be measured: " + err.Error()
	}
	return m, ""
}

// withClock adds to m the mean SM clock the run's monitor saw.
func withClock(m *slurm.SliceMeasure, dir, summary string) *slurm.SliceMeasure {
	if m == nil || summary == "" {
		return m
	}
	if d, ok := slurm.FirstMonitorDevice(filepath.Join(dir, summary)); ok && d.SMClockMean != nil {
		m.ClockMHz = math.Round(*d.SMClockMean)
	}
	return m
}

// plainFallback is the job run once as it is, with why there was no
// emulation.
func plainFallback(ctx context.Context, opt Options, why error) Result {
	fmt.Fprintf(opt.Stderr, "migadvisor emulate: cannot emulate: %v; running the job once as it is\n", why)
	r := runOne(ctx, opt, Target{Profile: slurm.PlainProfile, Whole: true}, nil)
	r.Note = joinNote("cannot emulate: "+why.Error(), r.Note)
	return r
}

// notWholeGPU says why the job's GPU cannot host an emulation: a MIG slice
// already (its share of the SMs is not the whole GPU's).
func notWholeGPU(env []string) error {
	for _, kv := range env {
		if v, ok := strings.CutPrefix(kv, "CUDA_VISIBLE_DEVICES="); ok && strings.HasPrefix(strings.TrimSpace(v), "MIG-") {
			return fmt.Errorf("the job's GPU is a MIG slice (%s), not a whole GPU", v)
		}
	}
	return nil
}

func mpsControl(path string) (string, error) {
	if path == "" {
		path = "nvidia-cuda-mps-control"
	}
	found, err := exec.LookPath(path)
	if err != nil {
		return "", fmt.Errorf("%s not found (CUDA MPS is part of the NVIDIA driver)", path)
	}
	return found, nil
}

// runOne runs the command for one target, its output in its own file.
func runOne(ctx context.Context, opt Options, t Target, extraEnv []string) Result {
	r := Result{Profile: t.Profile, Emulated: extraEnv != nil, Output: t.Profile + ".out"}
	if r.Emulated {
		r.Percentage, r.MemoryLimit = t.Percentage(), t.MemoryLimit()
	}
	out, err := os.Create(filepath.Join(opt.Dir, r.Output))
	if err != nil {
		r.Outcome, r.Note = Failed, err.Error()
		return r
	}
	defer out.Close()
	argv := opt.Command
	if opt.Monitor != nil {
		r.Summary = t.Profile + ".json"
		argv = append(append(opt.Monitor(filepath.Join(opt.Dir, r.Summary)), "--"), opt.Command...)
	}
	runCtx, cancel := ctx, context.CancelFunc(func() {})
	if opt.Budget > 0 {
		runCtx, cancel = context.WithTimeout(ctx, opt.Budget)
	}
	defer cancel()
	cmd := exec.Command(argv[0], argv[1:]...)
	cmd.Env = append(append(slices.Clone(opt.Env), extraEnv...), slurm.EmulatedProfileEnv+"="+t.Profile)
	cmd.Stdout, cmd.Stderr = out, out
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true} // the budget ends the whole run
	if ctx.Err() != nil {
		r.Outcome, r.Note = slurm.EmulatedCancelled, "the emulation was stopped before this run"
		return r
	}
	fmt.Fprintf(opt.Stderr, "migadvisor emulate: %s%s\n", t.Profile, describe(r))
	start := time.Now()
	if err := cmd.Start(); err != nil {
		r.Outcome, r.ExitStatus, r.Note = Failed, 127, err.Error()
		return r
	}
	done := make(chan error, 1)
	go func() { done <- cmd.Wait() }()
	select {
	case err = <-done:
		err = endRest(cmd.Process.Pid, err)
	case <-runCtx.Done():
		err = endGroup(cmd.Process.Pid, done)
	}
	r.Seconds = math.Round(time.Since(start).Seconds()*1000) / 1000
	r.ExitStatus = exitStatus(err)
	switch {
	case ctx.Err() != nil:
		r.Outcome = slurm.EmulatedCancelled // cut short by scancel or the job's limit: no result
	case runCtx.Err() != nil:
		r.Outcome = Budget
	case r.ExitStatus == 0:
		r.Outcome = Completed
	default:
		r.Outcome = Failed
	}
	fmt.Fprintf(opt.Stderr, "migadvisor emulate: %s %s in %.0f s (exit %d)\n", t.Profile, r.Outcome, r.Seconds, r.ExitStatus)
	return r
}

func describe(r Result) string {
	if !r.Emulated {
		return ": the whole GPU"
	}
	return fmt.Sprintf(": %d%% of the SMs, memory capped at %s", r.Percentage, r.MemoryLimit[2:])
}

// endGroup sends SIGTERM to the run's process group, then SIGKILL to
// whatever of it is left when its leader has ended or after killAfter, and
// returns how the leader ended.
func endGroup(pid int, done <-chan error) error {
	_ = syscall.Kill(-pid, syscall.SIGTERM)
	select {
	case err := <-done:
		_ = syscall.Kill(-pid, syscall.SIGKILL)
		return err
	case <-time.After(killAfter):
		_ = syscall.Kill(-pid, syscall.SIGKILL)
		return <-done
	}
}

// endRest ends what a run left behind when its leader exited (a process it
// put in the background): it would hold the MPS daemon and skew the next
// run. SIGTERM, then SIGKILL after killAfter.
func endRest(pid int, err error) error {
	if syscall.Kill(-pid, 0) != nil {
		return err // nothing left
	}
	_ = syscall.Kill(-pid, syscall.SIGTERM)
	deadline := time.Now().Add(killAfter)
	for time.Now().Before(deadline) && syscall.Kill(-pid, 0) == nil {
		time.Sleep(50 * time.Millisecond)
	}
	_ = syscall.Kill(-pid, syscall.SIGKILL)
	return err
}

// killAfter is how long a run cut short has to end on SIGTERM.
var killAfter = 10 * time.Second

func exitStatus(err error) int {
	var ee *exec.ExitError
	switch {
	case err == nil:
		return 0
	case errors.As(err, &ee):
		if ws, ok := ee.Sys().(syscall.WaitStatus); ok && ws.Signaled() {
			return 128 + int(ws.Signal())
		}
		return ee.ExitCode()
	}
	return 1
}

// daemon is one private MPS control daemon.
type daemon struct {
	control, dir string
	env          []string
}

func (d daemon) mpsEnv() []string {
	return []string{"CUDA_MPS_PIPE_DIRECTORY=" + filepath.Join(d.dir, "pipe"), "CUDA_MPS_LOG_DIRECTORY=" + filepath.Join(d.dir, "log")}
}

func (d daemon) clientEnv(t Target) []string {
	return append(d.mpsEnv(), "CUDA_MPS_ACTIVE_THREAD_PERCENTAGE="+strconv.Itoa(t.Percentage()),
		"CUDA_MPS_PINNED_DEVICE_MEM_LIMIT="+t.MemoryLimit())
}

func (d daemon) start() error {
	for _, sub := range []string{"pipe", "log"} {
		if err := os.MkdirAll(filepath.Join(d.dir, sub), 0o700); err != nil {
			return err
		}
	}
	cmd := exec.Command(d.control, "-d") // not cut short: a daemon forked must be known, to stop it
	cmd.Env = append(slices.Clone(d.env), d.mpsEnv()...)
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	if err := cmd.Run(); err != nil {
		return fmt.Errorf("%s -d: %v %s", d.control, err, bytes.TrimSpace(stderr.Bytes()))
	}
	return nil
}

// stop asks the daemon to quit, which it does once its clients are gone,
// and waits up to stopWait for its processes to end: quit returns at once,
// and a server still exiting would hold the GPU into the next profile's run
// (seen on the H100 right after the last run).
func (d daemon) stop() error {
	cmd := exec.Command(d.control)
	cmd.Env = append(slices.Clone(d.env), d.mpsEnv()...)
	cmd.Stdin = bytes.NewBufferString("quit\n")
	var out bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &out
	if err := cmd.Run(); err != nil {
		return fmt.Errorf("%v %s", err, bytes.TrimSpace(out.Bytes()))
	}
	for deadline := time.Now().Add(stopWait); ; time.Sleep(20 * time.Millisecond) {
		left := d.processes()
		if len(left) == 0 {
			// Its sockets go with it (a results directory is copied, archived,
			// read by collect); its log stays, for whoever asks why a run went
			// as it did.
			return os.RemoveAll(filepath.Join(d.dir, "pipe"))
		}
		if time.Now().After(deadline) {
			return fmt.Errorf("its processes %v were still running %v after quit", left, stopWait)
		}
	}
}

// stopWait is how long stop waits for the daemon's processes to end.
var stopWait = 10 * time.Second

// processes are the daemon's own processes: those whose environment names
// its pipe directory (the control daemon and the server it starts inherit
// it) and no client's share of the SMs (the job's processes have both).
// Where /proc cannot be read, none are known.
func (d daemon) processes() []int {
	pipe := []byte("\x00" + d.mpsEnv()[0] + "\x00")
	entries, _ := os.ReadDir("/proc")
	var pids []int
	for _, e := range entries {
		pid, err := strconv.Atoi(e.Name())
		if err != nil {
			continue
		}
		env, err := os.ReadFile(filepath.Join("/proc", e.Name(), "environ"))
		if err != nil {
			continue
		}
		env = append(append([]byte{0}, env...), 0)
		if bytes.Contains(env, pipe) && !bytes.Contains(env, []byte("\x00CUDA_MPS_ACTIVE_THREAD_PERCENTAGE=")) {
			pids = append(pids, pid)
		}
	}
	return pids
}
