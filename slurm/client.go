package slurm

import (
	"bufio"
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	"github.com/migadvisor/migadvisor/internal/lazyre"
)

// Client runs Slurm's commands: always an argument vector, never a shell,
// each call under a timeout and the caller's context.
type Client struct {
	// Bin is the directory holding sbatch, squeue, ...; empty means $PATH.
	Bin string
	// Timeout bounds each command (default 60 s). Streaming sacct has none:
	// a whole cluster's accounting takes minutes.
	Timeout time.Duration
	// SacctIdle is how long Sacct waits for sacct to print more before it
	// stops it (a slurmdbd that accepts the connection and never answers,
	// a file system that hangs): DefaultSacctIdle when 0, never when
	// negative.
	SacctIdle time.Duration
	// Env is appended to the environment of every command.
	Env []string
	// Runner runs the commands; nil execs them (Bin, Env). Unit tests put
	// a fake here (slurm/slurmtest) instead of stand-in scripts.
	Runner Runner
}

// Call is one Slurm command as a Client runs it.
type Call struct {
	Name string // sbatch, squeue, sacct, scontrol
	Args []string
	Dir  string // where it runs; "" for here
}

// Runner starts a Client's commands. The caller reads stdout to its end,
// then calls wait, whose error has an ExitCode() int where the command
// exited with a status.
type Runner interface {
	Start(ctx context.Context, call Call, stderr io.Writer) (stdout io.Reader, wait func() error, err error)
}

// CommandError is a Slurm command that failed: its exit status and stderr.
type CommandError struct {
	Name   string
	Args   []string
	Status int
	Stderr string
	Err    error
}

func (e *CommandError) Error() string {
	msg := strings.TrimSpace(e.Stderr)
	if i := strings.IndexByte(msg, '\n'); i >= 0 {
		// The last line is the one that says why.
		msg = strings.TrimSpace(msg[strings.LastIndexByte(msg, '\n')+1:])
	}
	switch {
	case errors.Is(e.Err, exec.ErrNotFound) || errors.Is(e.Err, fs.ErrNotExist):
		return fmt.Sprintf("%s: not found (is Slurm installed and on PATH here?)", e.Name)
	case errors.As(e.Err, new(*IdleError)):
		return fmt.Sprintf("%v, and was stopped: is slurmdbd answering? ('sacct' by hand tells)", e.Err)
	case errors.Is(e.Err, context.DeadlineExceeded):
		return fmt.Sprintf("%s: no answer within the time limit (is slurmctld reachable?)", e.Name)
	case msg != "":
		return fmt.Sprintf("%s failed: %s", e.Name, msg)
	case e.Status > 0:
		return fmt.Sprintf("%s failed with exit status %d", e.Name, e.Status)
	default:
		return fmt.Sprintf("%s: %v", e.Name, e.Err)
	}
}

func (e *CommandError) Unwrap() error { return e.Err }

func (c *Client) runner() Runner {
	if c.Runner != nil {
		return c.Runner
	}
	return execRunner{bin: c.Bin, env: c.Env}
}

// execRunner execs Slurm's commands from bin (else PATH).
type execRunner struct {
	bin string
	env []string
}

func (r execRunner) Start(ctx context.Context, call Call, stderr io.Writer) (io.Reader, func() error, error) {
	path := call.Name
	if r.bin != "" {
		path = filepath.Join(r.bin, call.Name)
	}
	cmd := exec.CommandContext(ctx, path, call.Args...)
	// Times in ISO form whatever the user's SLURM_TIME_FORMAT says.
	cmd.Env = append(os.Environ(), "SLURM_TIME_FORMAT=standard")
	cmd.Env = append(cmd.Env, r.env...)
	cmd.WaitDelay = 2 * time.Second
	cmd.Dir = call.Dir
	cmd.Stderr = stderr
	out, err := cmd.StdoutPipe()
	if err != nil {
		return nil, nil, err
	}
	if err := cmd.Start(); err != nil {
		return nil, nil, err
	}
	return out, cmd.Wait, nil
}

// exitStatus is the status a failed command exited with, else -1.
func exitStatus(err error) int {
	var exited interface{ ExitCode() int }
	if errors.As(err, &exited) {
		return exited.ExitCode()
	}
	return -1
}

// stream runs call, giving its stdout to read while it runs; stderr keeps
// what it said. A failure is a *CommandError (read's own error first).
func (c *Client) stream(ctx context.Context, call Call, stderr interface {
	io.Writer
	fmt.Stringer
}, read func(io.Reader) error) error {
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	out, wait, err := c.runner().Start(ctx, call, stderr)
	if err != nil {
		return &CommandError{Name: call.Name, Args: call.Args, Status: -1, Err: err}
	}
	readErr := read(out)
	if readErr != nil {
		cancel()
	}
	_, _ = io.Copy(io.Discard, out)
	waitErr := wait()
	switch {
	case readErr != nil && exitStatus(waitErr) > 0:
		// The command exited failing, on its own: one the reader's error
		// stopped would have died of the signal (slurmdbd down: sacct
		// prints nothing and exits 1). Its reason, not what the reader
		// made of the output it cut short ("no header line").
		return &CommandError{Name: call.Name, Args: call.Args, Status: exitStatus(waitErr), Stderr: stderr.String(), Err: waitErr}
	case readErr != nil:
		return readErr
	case waitErr != nil && ctx.Err() != nil:
		return &CommandError{Name: call.Name, Args: call.Args, Status: -1, Stderr: stderr.String(), Err: ctx.Err()}
	case waitErr != nil:
		return &CommandError{Name: call.Name, Args: call.Args, Status: exitStatus(waitErr), Stderr: stderr.String(), Err: waitErr}
	}
	return nil
}

// run runs a command to completion, under the Client's timeout, and
// returns its stdout.
func (c *Client) run(ctx context.Context, dir, name string, args ...string) ([]byte, error) {
	timeout := c.Timeout
	if timeout <= 0 {
		timeout = 60 * time.Second
	}
	ctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	var stdout bytes.Buffer
	err := c.stream(ctx, Call{Name: name, Args: args, Dir: dir}, &strings.Builder{}, func(r io.Reader) error {
		_, err := stdout.ReadFrom(r)
		return err
	})
	return stdout.Bytes(), err
}

// JobRef is a submitted job: its id and, on a multi-cluster site, the cluster.
type JobRef struct {
	ID      string
	Cluster string
}

// ParseParsable reads what `sbatch --parsable` prints: "123" or "123;cluster".
func ParseParsable(out string) (JobRef, error) {
	line := strings.TrimSpace(out)
	if i := strings.LastIndexByte(line, '\n'); i >= 0 {
		line = strings.TrimSpace(line[i+1:])
	}
	id, cluster, _ := strings.Cut(line, ";")
	if id == "" || strings.Trim(id, "0123456789") != "" {
		return JobRef{}, fmt.Errorf("sbatch printed %q, not a job id", strings.TrimSpace(out))
	}
	return JobRef{ID: id, Cluster: cluster}, nil
}

// Submit runs `sbatch --parsable [ARGS...] SCRIPT` in dir and returns the job.
func (c *Client) Submit(ctx context.Context, dir, script string, args ...string) (JobRef, error) {
	argv := append([]string{"--parsable"}, args...)
	argv = append(argv, script)
	out, err := c.run(ctx, dir, "sbatch", argv...)
	if err != nil {
		return JobRef{}, err
	}
	return ParseParsable(string(out))
}

// QueuedJob is a job squeue still shows.
type QueuedJob struct {
	ID     string // as users see it: 123, 123_4, 123_[5-9], 123+0
	Raw    string // unique id
	State  string // PENDING, RUNNING, COMPLETING, ...
	Reason string
	GRES   string // what it asked for, as squeue's %b says it: gres:gpu:a100_20g:1
}

// GPUType is the GPU type the job asked for ("a100_20g"), "" if none or untyped.
func (q QueuedJob) GPUType() string {
	for _, e := range strings.Split(q.GRES, ",") {
		e = strings.TrimPrefix(strings.TrimPrefix(strings.TrimSpace(e), "gres:"), "gres/")
		parts := strings.Split(strings.ReplaceAll(e, "=", ":"), ":")
		if len(parts) >= 2 && parts[0] == "gpu" {
			if _, err := strconv.Atoi(parts[1]); err != nil {
				return parts[1]
			}
		}
	}
	return ""
}

// Queue lists the jobs of ids (sbatch's ids; array tasks and het components
// included) that squeue still shows. Jobs Slurm has forgotten are simply absent.
func (c *Client) Queue(ctx context.Context, ids []string) ([]QueuedJob, error) {
	if len(ids) == 0 {
		return nil, nil
	}
	out, err := c.run(ctx, "", "squeue", "--noheader", "--states=all", "--format=%i|%A|%T|%b|%r", "--jobs="+strings.Join(ids, ","))
	if err != nil {
		var ce *CommandError
		if errors.As(err, &ce) && strings.Contains(ce.Stderr, "Invalid job id") {
			return nil, nil // none of them is known any more
		}
		return nil, err
	}
	var jobs []QueuedJob
	for _, line := range strings.Split(string(out), "\n") {
		f := strings.SplitN(strings.TrimSpace(line), "|", 5)
		if len(f) == 5 {
			jobs = append(jobs, QueuedJob{ID: f[0], Raw: f[1], State: f[2], GRES: f[3], Reason: f[4]})
		}
	}
	return jobs, nil
}

// ShowJob returns `scontrol show job -o ID` as key=value pairs of its first
// record (StdOut, StdErr, WorkDir, JobState, ...). Values that hold spaces
// (Command, WorkDir) are read up to the next known key.
func (c *Client) ShowJob(ctx context.Context, id string) (map[string]string, error) {
	out, err := c.run(ctx, "", "scontrol", "--oneliner", "show", "job", id)
	if err != nil {
		return nil, err
	}
	line, _, _ := strings.Cut(string(out), "\n")
	return parseOneliner(line), nil
}

// ShownJob is what `scontrol show job` says of a job that the history keeps:
// where its output goes, where it runs, and when it was submitted.
type ShownJob struct {
	Stdout, Stderr, WorkDir string
	// Submitted is SubmitTime, read in local time (SLURM_TIME_FORMAT=standard);
	// zero when scontrol gave none that reads as a time.
	Submitted time.Time
}

// DescribeJob is ShowJob's record of the job, read: slurmctld knows it only
// until MinJobAge after it ends.
func (c *Client) DescribeJob(ctx context.Context, id string) (ShownJob, error) {
	kv, err := c.ShowJob(ctx, id)
	if err != nil {
		return ShownJob{}, err
	}
	return shownJobOf(kv), nil
}

// shownJobOf reads the fields of a `scontrol show job` record.
func shownJobOf(kv map[string]string) ShownJob {
	j := ShownJob{Stdout: kv["StdOut"], Stderr: kv["StdErr"], WorkDir: kv["WorkDir"]}
	if at, err := time.ParseInLocation("2006-01-02T15:04:05", kv["SubmitTime"], time.Local); err == nil {
		j.Submitted = at
	}
	return j
}

// parseOneliner splits "A=1 B=x y C=2" into pairs; a token without "=" belongs
// to the value before it, so paths with spaces survive.
func parseOneliner(line string) map[string]string {
	kv := map[string]string{}
	last := ""
	for _, tok := range strings.Split(strings.TrimSpace(line), " ") {
		k, v, ok := strings.Cut(tok, "=")
		if ok && k != "" && !strings.ContainsAny(k, "/.") {
			kv[k], last = v, k
			continue
		}
		if last != "" {
			kv[last] += " " + tok
		}
	}
	return kv
}

// ClusterName is the cluster's name: slurm.conf's ClusterName where the
// commands it runs read one (lowercased, as Slurm maps it), else slurmctld's
// answer. slurm.conf first: scontrol waits for a controller that is not up
// (9 s here) on a host that only reads a saved dump, and the name is the
// one the file gives it all the same. A fake Runner, or commands from a
// directory of their own (Bin: unit tests' stand-ins), are asked.
func (c *Client) ClusterName(ctx context.Context) (string, error) {
	if c.Runner == nil && c.Bin == "" {
		if params, err := ReadConf(c.confPath()); err == nil && params["clustername"] != "" {
			return strings.ToLower(params["clustername"]), nil
		}
	}
	out, err := c.run(ctx, "", "scontrol", "show", "config")
	if err != nil {
		return "", err
	}
	sc := bufio.NewScanner(bytes.NewReader(out))
	for sc.Scan() {
		k, v, ok := strings.Cut(sc.Text(), "=")
		if ok && strings.TrimSpace(k) == "ClusterName" {
			return strings.TrimSpace(v), nil
		}
	}
	return "", errors.New("scontrol show config: no ClusterName")
}

// confPath is the slurm.conf the Client's commands read: SLURM_CONF from
// its Env, else ConfPath's.
func (c *Client) confPath() string {
	for i := len(c.Env) - 1; i >= 0; i-- {
		if v, ok := strings.CutPrefix(c.Env[i], "SLURM_CONF="); ok && v != "" {
			return v
		}
	}
	return ConfPath(os.Getenv)
}

// SacctQuery selects jobs for sacct.
type SacctQuery struct {
	Jobs     []string  // job ids; empty selects by time
	Users    []string  // empty: the caller's own jobs (or all with AllUsers)
	AllUsers bool      // -a
	Since    time.Time // -S; zero: sacct's default (midnight), or the epoch with Jobs
	Until    time.Time // -E
	Clusters []string  // -M
}

// Args is the sacct argument vector for q: migadvisor's fields, parsable, its delimiter.
func (q SacctQuery) Args() []string {
	args := []string{"--parsable2", "--delimiter=" + SacctDelimiter, "--format=" + strings.Join(SacctFields, ",")}
	if len(q.Jobs) > 0 {
		args = append(args, "--jobs="+strings.Join(q.Jobs, ","))
	}
	if q.AllUsers {
		args = append(args, "--allusers")
	} else if len(q.Users) > 0 {
		args = append(args, "--user="+strings.Join(q.Users, ","))
	}
	if !q.Since.IsZero() {
		args = append(args, "--starttime="+q.Since.Format("2006-01-02T15:04:05"))
	} else if len(q.Jobs) == 0 {
		args = append(args, "--starttime=now-7days")
	}
	if !q.Until.IsZero() {
		args = append(args, "--endtime="+q.Until.Format("2006-01-02T15:04:05"))
	}
	if len(q.Clusters) > 0 {
		args = append(args, "--clusters="+strings.Join(q.Clusters, ","))
	}
	return args
}

// Sacct streams sacct's output for q to fn, which reads it while sacct runs,
// so a whole cluster's accounting never sits in memory. A sacct that prints
// nothing more for c.SacctIdle is stopped: a *CommandError whose Err is an
// *IdleError.
func (c *Client) Sacct(ctx context.Context, q SacctQuery, fn func(io.Reader) error) error {
	stderr := &tailBuffer{max: 64 << 10} // a whole cluster's warnings must not fill memory
	call := Call{Name: "sacct", Args: q.Args()}
	idle := c.SacctIdle
	if idle == 0 {
		idle = DefaultSacctIdle
	}
	if idle < 0 {
		return c.stream(ctx, call, stderr, fn)
	}
	ctx, cancel := context.WithCancelCause(ctx)
	defer cancel(nil)
	err := c.stream(ctx, call, stderr, func(r io.Reader) error {
		w := newIdleWatch(r, idle, func() { cancel(&IdleError{Name: call.Name, Idle: idle}) })
		defer w.stop()
		return fn(w)
	})
	if cause := context.Cause(ctx); err != nil && errors.As(cause, new(*IdleError)) {
		// What the reader made of the stream cut short says less.
		return &CommandError{Name: call.Name, Args: call.Args, Status: -1, Stderr: stderr.String(), Err: cause}
	}
	return err
}

// DefaultSacctIdle is Client.SacctIdle's default: longer than slurmdbd
// takes to start answering for a month of a large site's jobs.
const DefaultSacctIdle = 10 * time.Minute

// IdleError is a command stopped for printing nothing for Idle.
type IdleError struct {
	Name string
	Idle time.Duration
}

func (e *IdleError) Error() string { return fmt.Sprintf("%s printed nothing for %v", e.Name, e.Idle) }

// idleWatch is a command's stdout that calls expire when one read waits
// longer than idle, and then closes it (where it is a pipe that can be
// closed), so that the read returns though the command's children hold the
// pipe open. Only the time spent waiting on the command counts: a reader
// that takes its time between reads (the history's lock) is not idle.
type idleWatch struct {
	r     io.Reader
	timer *time.Timer
	idle  time.Duration
}

func newIdleWatch(r io.Reader, idle time.Duration, expire func()) *idleWatch {
	w := &idleWatch{r: r, idle: idle}
	w.timer = time.AfterFunc(idle, func() {
		expire()
		if c, ok := r.(io.Closer); ok {
			_ = c.Close()
		}
	})
	w.timer.Stop()
	return w
}

func (w *idleWatch) Read(p []byte) (int, error) {
	w.timer.Reset(w.idle)
	n, err := w.r.Read(p)
	w.timer.Stop()
	return n, err
}

func (w *idleWatch) stop() { w.timer.Stop() }

// tailBuffer keeps the last max bytes written to it (the last line says
// why a command failed) in at most twice that much memory.
type tailBuffer struct {
	buf []byte
	max int
}

func (b *tailBuffer) Write(p []byte) (int, error) {
	b.buf = append(b.buf, p...)
	if len(b.buf) > 2*b.max {
		b.buf = append(b.buf[:0], b.buf[len(b.buf)-b.max:]...)
	}
	return len(p), nil
}

func (b *tailBuffer) String() string {
	if len(b.buf) > b.max {
		return string(b.buf[len(b.buf)-b.max:])
	}
	return string(b.buf)
}

// startAt is how `sbatch --test-only` reports when a job would start.
var startAt = lazyre.New(`to start at (\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d)`)

// StartEstimate asks the scheduler, without submitting, when the script
// would start (`sbatch --test-only`, run in dir). It gives up after 10 s:
// it is advice, not worth a wait.
func (c *Client) StartEstimate(ctx context.Context, dir, script string) (time.Time, error) {
	ctx, cancel := context.WithTimeout(ctx, 10*time.Second)
	defer cancel()
	var said, printed strings.Builder // sbatch says when on stderr
	call := Call{Name: "sbatch", Args: []string{"--test-only", script}, Dir: dir}
	err := c.stream(ctx, call, &said, func(r io.Reader) error {
		_, err := io.Copy(&printed, r)
		return err
	})
	if err != nil {
		return time.Time{}, err
	}
	out := []byte(said.String() + printed.String())
	m := startAt.Get().FindSubmatch(out)
	if m == nil {
		return time.Time{}, fmt.Errorf("sbatch --test-only gave no start time: %q", strings.TrimSpace(string(out)))
	}
	return time.ParseInLocation("2006-01-02T15:04:05", string(m[1]), time.Local)
}
