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
// wrappers, the jobs' monitor): built once per test run.
var built struct {
	once sync.Once
	dir  string
	bin  string
	err  error
	out  []byte
}

// packageDir is where the tests start: this package's source.
var packageDir, _ = os.Getwd()

func TestMain(m *testing.M) {
	if db := os.Getenv(holdLockEnv); db != "" {
		os.Exit(holdLock(db))
	}
	code := m.Run()
	if built.dir != "" {
		os.RemoveAll(built.dir)
	}
	os.Exit(code)
}

// migadvisorBinary builds this package into a temporary directory, as the
// Makefile does, or is $MIGADVISOR_TEST_BIN (a machine without Go).
func migadvisorBinary(t testing.TB) string {
	t.Helper()
	if bin := os.Getenv("MIGADVISOR_TEST_BIN"); bin != "" {
		return bin
	}
	built.once.Do(func() {
		if built.dir, built.err = os.MkdirTemp("", "migadvisor-bin-"); built.err != nil {
			return
		}
		built.bin = filepath.Join(built.dir, "migadvisor")
		cmd := exec.Command("go", "build", "-tags", "urfave_cli_no_docs", "-o", built.bin, ".")
		cmd.Dir = packageDir // a test may have moved elsewhere
		built.out, built.err = cmd.CombinedOutput()
	})
	if built.err != nil {
		t.Fatalf("build migadvisor: %v\n%s", built.err, built.out)
	}
	return built.bin
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
