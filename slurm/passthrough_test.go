package slurm

import (
	"bytes"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"syscall"
	"testing"
	"time"
)

// stubSbatch writes an sbatch that logs its arguments (one per line) and its
// stdin, prints what $STUB_OUT says and exits with $STUB_EXIT.
func stubSbatch(t *testing.T, dir string) (path, argsLog string) {
	t.Helper()
	argsLog = filepath.Join(dir, "args")
	path = filepath.Join(dir, "sbatch")
	script := "#!/bin/sh\nfor a in \"$@\"; do printf '%s\\n' \"$a\"; done > " + ShellQuote(argsLog) + "\n" +
		"cat > " + ShellQuote(argsLog+".stdin") + "\nprintf '%s\\n' \"${STUB_OUT:-Submitted batch job 42}\"\necho 'sbatch: note' >&2\nexit ${STUB_EXIT:-0}\n"
	if err := os.WriteFile(path, []byte(script), 0o755); err != nil {
		t.Fatal(err)
	}
	return path, argsLog
}

func TestRunSbatchPassesEverythingThrough(t *testing.T) {
	dir := t.TempDir()
	sbatch, argsLog := stubSbatch(t, dir)
	args := []string{"--export=ALL,X=1 2", "--job-name", "it's \"quoted\"", "--wrap", "echo $(hostname) `id`", "ünï", ""}
	var out, errOut bytes.Buffer
	status, captured, err := RunSbatch(sbatch, args, nil, strings.NewReader("#!/bin/bash\necho from stdin\n"), &out, &errOut)
	if err != nil || status != 0 {
		t.Fatalf("status %d, %v", status, err)
	}
	logged, _ := os.ReadFile(argsLog)
	if got := strings.Split(strings.TrimSuffix(string(logged), "\n"), "\n"); !reflect.DeepEqual(got, args) {
		t.Errorf("sbatch got %q, want %q", got, args)
	}
	stdin, _ := os.ReadFile(argsLog + ".stdin")
	if string(stdin) != "#!/bin/bash\necho from stdin\n" || out.String() != "Submitted batch job 42\n" ||
		string(captured) != out.String() || errOut.String() != "sbatch: note\n" {
		t.Errorf("stdin %q, stdout %q, captured %q, stderr %q", stdin, out.String(), captured, errOut.String())
	}
	t.Setenv("STUB_EXIT", "1")
	t.Setenv("STUB_OUT", "sbatch: error: invalid partition")
	if status, _, _ := RunSbatch(sbatch, nil, nil, strings.NewReader(""), &out, &errOut); status != 1 {
		t.Errorf("status %d, want sbatch's 1", status)
	}
	if status, _, err := RunSbatch(filepath.Join(dir, "missing"), nil, nil, nil, &out, &errOut); status != 127 || err == nil {
		t.Errorf("missing sbatch: status %d, %v", status, err)
	}
	// An environment given is sbatch's whole environment: $STUB_EXIT is
	// not in it.
	out.Reset()
	env := []string{"PATH=" + os.Getenv("PATH"), "STUB_OUT=from env"}
	if status, _, err := RunSbatch(sbatch, nil, env, strings.NewReader(""), &out, &errOut); status != 0 || err != nil || out.String() != "from env\n" {
		t.Errorf("with env: status %d, %v, stdout %q", status, err, out.String())
	}
}

func TestFindRealSbatchSkipsItself(t *testing.T) {
	self := filepath.Join(t.TempDir(), "sbatch") // the wrapper, installed as sbatch
	os.WriteFile(self, []byte("#!/bin/sh\n"), 0o755)
	realDir := t.TempDir()
	real, _ := stubSbatch(t, realDir)
	env := map[string]string{"PATH": filepath.Dir(self) + ":" + realDir}
	getenv := func(k string) string { return env[k] }
	if p, err := FindRealSbatch(getenv, self); err != nil || p != real {
		t.Errorf("found %q, %v; want %q", p, err, real)
	}
	env["PATH"] = filepath.Dir(self)
	if _, err := FindRealSbatch(getenv, self); err == nil || !strings.Contains(err.Error(), SbatchEnv) {
		t.Errorf("only itself on PATH: %v", err)
	}
	env[SbatchEnv] = self
	if _, err := FindRealSbatch(getenv, self); err == nil {
		t.Error("MIGADVISOR_SBATCH naming the wrapper itself must be refused")
	}
	env[SbatchEnv] = real
	if p, _ := FindRealSbatch(getenv, self); p != real {
		t.Errorf("MIGADVISOR_SBATCH: %q", p)
	}
	// The scripts/ shim, first on PATH, starts the wrapper (elsewhere).
	delete(env, SbatchEnv)
	shim := filepath.Join(t.TempDir(), "sbatch")
	os.WriteFile(shim, []byte("#!/bin/sh\n"), 0o755)
	env["PATH"] = filepath.Dir(shim) + ":" + realDir
	env[ShimEnv] = shim
	if p, err := FindRealSbatch(getenv, "/usr/bin/migadvisor"); err != nil || p != real {
		t.Errorf("behind the shim: found %q, %v; want %q", p, err, real)
	}
}

func TestSubmittedJobID(t *testing.T) {
	for out, want := range map[string][2]string{
		"Submitted batch job 123\n":                  {"123", ""},
		"Submitted batch job 77 on cluster wulver\n": {"77", "wulver"},
		"4242\n":        {"4242", ""},
		"4242;migdev\n": {"4242", "migdev"},
		"sbatch: Job 5 to start at 2026-01-01T00:00:00": {"", ""},
		"": {"", ""},
	} {
		if id, cluster := SubmittedJobID([]byte(out)); id != want[0] || cluster != want[1] {
			t.Errorf("%q: %q %q, want %v", out, id, cluster, want)
		}
	}
}

// IsShim tells a copy of the shim from Slurm's sbatch by its second line,
// and reads nothing else: a FIFO named sbatch on PATH, which an open for
// reading would wait on, is no shim at once.
// The wrapper's search passes over what the shim's passes over: an
// executable FIFO named sbatch before Slurm's is no sbatch.
func TestFindRealSbatchSkipsWhatIsNotARegularFile(t *testing.T) {
	fifoDir, realDir := t.TempDir(), t.TempDir()
	if err := syscall.Mkfifo(filepath.Join(fifoDir, "sbatch"), 0o755); err != nil {
		t.Fatal(err)
	}
	real, _ := stubSbatch(t, realDir)
	env := map[string]string{"PATH": fifoDir + ":" + realDir}
	if p, err := FindRealSbatch(func(k string) string { return env[k] }, "/usr/bin/migadvisor"); err != nil || p != real {
		t.Errorf("found %q, %v; want %q, past the FIFO", p, err, real)
	}
}

func TestIsShimReadsOnlyRegularFiles(t *testing.T) {
	dir := t.TempDir()
	shim := filepath.Join(dir, "shim")
	os.WriteFile(shim, []byte("#!/bin/sh\n"+ShimMark+" (a copy)\n"), 0o755)
	other := filepath.Join(dir, "other")
	os.WriteFile(other, []byte("#!/bin/sh\necho sbatch\n"), 0o755)
	fifo := filepath.Join(dir, "fifo")
	if err := syscall.Mkfifo(fifo, 0o755); err != nil {
		t.Fatal(err)
	}
	if !IsShim(shim) || IsShim(other) {
		t.Errorf("IsShim: the copy %v, another script %v", IsShim(shim), IsShim(other))
	}
	done := make(chan bool, 1)
	go func() { done <- IsShim(fifo) }()
	select {
	case is := <-done:
		if is {
			t.Error("a FIFO is a shim")
		}
	case <-time.After(10 * time.Second):
		t.Fatal("IsShim waits on a FIFO")
	}
}
