package slurm

import (
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"os/signal"
	"path/filepath"
	"strings"
	"syscall"

	"github.com/migadvisor/migadvisor/internal/fsutil"
)

// SbatchEnv names the real sbatch for a wrapper installed as `sbatch`.
const SbatchEnv = "MIGADVISOR_SBATCH"

// ShimEnv is set by the scripts/ sbatch shim to its own path, so that the
// wrapper it starts does not take the shim for Slurm's sbatch.
const ShimEnv = "MIGADVISOR_SHIM"

// FindRealSbatch is the sbatch a wrapper must run: $MIGADVISOR_SBATCH, else
// the first sbatch on PATH that is neither the wrapper itself (self, the
// running executable) nor the shim that started it ($MIGADVISOR_SHIM), so
// that a wrapper installed as sbatch never calls itself.
func FindRealSbatch(getenv func(string) string, self string) (string, error) {
	isWrapper := func(p string) bool {
		return fsutil.SameFile(p, self) || (getenv(ShimEnv) != "" && fsutil.SameFile(p, getenv(ShimEnv))) || IsShim(p)
	}
	if p := getenv(SbatchEnv); p != "" {
		if isWrapper(p) {
			return "", fmt.Errorf("%s=%s is migadvisor itself, not Slurm's sbatch", SbatchEnv, p)
		}
		return p, nil
	}
	for _, dir := range filepath.SplitList(getenv("PATH")) {
		if dir == "" {
			dir = "."
		}
		p := dir + string(filepath.Separator) + "sbatch" // "./sbatch", not "sbatch", which exec would look up on PATH
		// As the shim does: a FIFO, socket or device named sbatch is no
		// program, and a FIFO's reader (IsShim's, exec's) would wait on it.
		if st, err := os.Stat(p); err != nil || !st.Mode().IsRegular() || st.Mode()&0o111 == 0 {
			continue
		}
		if !isWrapper(p) {
			return p, nil
		}
	}
	return "", fmt.Errorf("no sbatch on PATH other than migadvisor itself; set %s to Slurm's sbatch", SbatchEnv)
}

// ShimMark begins the second line of migadvisor's sbatch shim
// (scripts/sbatch): another copy of it on PATH is no sbatch of Slurm's, and
// running it would run the wrapper again.
const ShimMark = "# sbatch: the migadvisor login-node shim"

// IsShim reports whether the file at p is a copy of the shim. Only a
// regular file is read, and its open does not wait: a FIFO named sbatch
// on PATH would hold the wrapper, and the caller's stderr, for ever.
func IsShim(p string) bool {
	f, err := os.OpenFile(p, os.O_RDONLY|syscall.O_NONBLOCK, 0)
	if err != nil {
		return false
	}
	defer f.Close()
	if st, err := f.Stat(); err != nil || !st.Mode().IsRegular() {
		return false
	}
	head := make([]byte, 256)
	n, _ := io.ReadFull(f, head)
	_, second, _ := strings.Cut(string(head[:n]), "\n")
	return strings.HasPrefix(second, ShimMark)
}

// RunSbatch runs the real sbatch with the user's exact arguments, standard
// input and output, in env ("NAME=value"; nil: this process's), and returns its exit status (128+N when signal N ended
// it) and what it wrote on stdout (which also went to stdout as it came: the
// job id is in it). The terminal sends SIGINT and SIGHUP to sbatch itself
// (one process group), so the wrapper only outlives them, to report sbatch's
// status; SIGTERM, which is sent to a process, is forwarded.
func RunSbatch(path string, args, env []string, stdin io.Reader, stdout, stderr io.Writer) (int, []byte, error) {
	var captured limitedBuffer
	cmd := exec.Command(path, args...)
	cmd.Env = env
	cmd.Stdin, cmd.Stdout, cmd.Stderr = stdin, io.MultiWriter(stdout, &captured), stderr
	signals := make(chan os.Signal, 4)
	signal.Notify(signals, syscall.SIGINT, syscall.SIGTERM, syscall.SIGHUP)
	defer signal.Stop(signals)
	if err := cmd.Start(); err != nil {
		return 127, nil, fmt.Errorf("run %s: %w", path, err)
	}
	done := make(chan struct{})
	go func() {
		for {
			select {
			case s := <-signals:
				if s == syscall.SIGTERM {
					_ = cmd.Process.Signal(s)
				}
			case <-done:
				return
			}
		}
	}()
	err := cmd.Wait()
	close(done)
	var exit *exec.ExitError
	switch {
	case err == nil:
		return 0, captured.b, nil
	case errors.As(err, &exit):
		if ws, ok := exit.Sys().(syscall.WaitStatus); ok && ws.Signaled() {
			return 128 + int(ws.Signal()), captured.b, nil
		}
		return exit.ExitCode(), captured.b, nil
	}
	return 1, captured.b, err
}

// limitedBuffer keeps the first 64 KiB written: sbatch prints one line.
type limitedBuffer struct{ b []byte }

func (l *limitedBuffer) Write(p []byte) (int, error) {
	if room := 64<<10 - len(l.b); room > 0 {
		l.b = append(l.b, p[:min(len(p), room)]...)
	}
	return len(p), nil
}

// SubmittedJobID reads the job id from sbatch's stdout: "Submitted batch job
// 123", or "123" / "123;cluster" with --parsable. "" when there is none
// (--test-only, an error).
func SubmittedJobID(out []byte) (id, cluster string) {
	for _, line := range strings.Split(strings.TrimSpace(string(out)), "\n") {
		line = strings.TrimSpace(line)
		if rest, ok := strings.CutPrefix(line, "Submitted batch job "); ok {
			id, cluster, _ = strings.Cut(strings.TrimSpace(rest), " on cluster ")
			return id, cluster
		}
		if ref, err := ParseParsable(line); err == nil {
			return ref.ID, ref.Cluster
		}
	}
	return "", ""
}
