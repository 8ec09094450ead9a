package main

import (
	"bufio"
	"database/sql"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"sync"
	"testing"
)

// A migadvisor binary, for tests that need separate processes (concurrent
// wrappers, the jobs' monitor), and the lean one the sbatch shim runs: each
// built once per test run.
type builtBinary struct {
	once sync.Once
	dir  string
	bin  string
	err  error
	out  []byte
}

var built, builtLean builtBinary

// packageDir is where the tests start: this package's source.
var packageDir, _ = os.Getwd()

func TestMain(m *testing.M) {
	if db := os.Getenv(holdLockEnv); db != "" {
		os.Exit(holdLock(db))
	}
	code := m.Run()
	for _, b := range []*builtBinary{&built, &builtLean} {
		if b.dir != "" {
			os.RemoveAll(b.dir)
		}
	}
	os.Exit(code)
}

// migadvisorBinary builds this package into a temporary directory, as the
// Makefile does, or is $MIGADVISOR_TEST_BIN (a machine without Go).
func migadvisorBinary(t testing.TB) string {
	t.Helper()
	return buildBinary(t, &built, "MIGADVISOR_TEST_BIN", "urfave_cli_no_docs")
}

// sbatchBinary is the wrapper's own binary, which the shim runs
// (cmd/migadvisor-sbatch, without cgo, as the Makefile builds it), or
// $MIGADVISOR_TEST_SBATCH_BIN.
func sbatchBinary(t testing.TB) string {
	t.Helper()
	return buildBinary(t, &builtLean, "MIGADVISOR_TEST_SBATCH_BIN", "")
}

func buildBinary(t testing.TB, b *builtBinary, env, tags string) string {
	if bin := os.Getenv(env); bin != "" {
		return bin
	}
	b.once.Do(func() {
		if b.dir, b.err = os.MkdirTemp("", "migadvisor-bin-"); b.err != nil {
			return
		}
		b.bin = filepath.Join(b.dir, "migadvisor")
		cmd := exec.Command("go", "build", "-tags", tags, "-o", b.bin, ".")
		cmd.Dir = packageDir // a test may have moved elsewhere
		if b == &builtLean {
			cmd = exec.Command("go", "build", "-o", b.bin, "../migadvisor-sbatch")
			cmd.Dir = packageDir
			cmd.Env = append(os.Environ(), "CGO_ENABLED=0") // as the Makefile builds it
		}
		b.out, b.err = cmd.CombinedOutput()
	})
	if b.err != nil {
		t.Fatalf("build migadvisor (-tags %s): %v\n%s", tags, b.err, b.out)
	}
	return b.bin
}

// holdLockEnv makes the test binary a process that holds a history's write
// lock until its standard input closes.
const holdLockEnv = "MIGADVISOR_TEST_HOLD_LOCK"

func holdLock(db string) int {
	conn, err := sql.Open("sqlite3", db)
	if err == nil {
		conn.SetMaxOpenConns(1)
		_, err = conn.Exec("BEGIN IMMEDIATE")
	}
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	fmt.Println("locked")
	io.Copy(io.Discard, os.Stdin)
	conn.Exec("ROLLBACK")
	return 0
}

// lockHolder starts another process that holds db's write lock; release
// ends it.
func lockHolder(t *testing.T, db string) (release func()) {
	t.Helper()
	cmd := exec.Command(os.Args[0])
	cmd.Env = append(os.Environ(), holdLockEnv+"="+db)
	stdin, _ := cmd.StdinPipe()
	stdout, _ := cmd.StdoutPipe()
	cmd.Stderr = os.Stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	if line, err := bufio.NewReader(stdout).ReadString('\n'); err != nil || line != "locked\n" {
		t.Fatalf("lock holder: %q %v", line, err)
	}
	var once sync.Once
	release = func() {
		once.Do(func() {
			stdin.Close()
			if err := cmd.Wait(); err != nil {
				t.Errorf("lock holder: %v", err)
			}
		})
	}
	t.Cleanup(release)
	return release
}
