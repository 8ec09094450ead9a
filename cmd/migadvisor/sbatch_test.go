package main

import (
	"context"
	"database/sql"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/migadvisor/migadvisor/advisor/store"
)

// fakeSbatch puts an sbatch on PATH that logs its argv and prints a job id
// (or fails with $STUB_EXIT).
func fakeSbatch(t *testing.T) (argsLog string) {
	t.Helper()
	bin := t.TempDir()
	argsLog = filepath.Join(bin, "args")
	stub := "#!/bin/sh\nfor a in \"$@\"; do printf '%s\\n' \"$a\"; done > '" + argsLog + "'\n" +
		"[ -n \"$STUB_EXIT\" ] && { echo 'sbatch: error: Batch job submission failed' >&2; exit $STUB_EXIT; }\n" +
		"case \" $* \" in *' --parsable '*) echo '4242;migdev' ;; *) echo 'Submitted batch job 4242' ;; esac\n"
	if err := os.WriteFile(filepath.Join(bin, "sbatch"), []byte(stub), 0o755); err != nil {
		t.Fatal(err)
	}
	t.Setenv("PATH", bin+":"+os.Getenv("PATH"))
	return argsLog
}

func wrapperScript(t *testing.T) string {
	file := filepath.Join(t.TempDir(), "my job.sh")
	os.WriteFile(file, []byte("#!/bin/bash\n#SBATCH --gres=gpu:a100:1\n#SBATCH -t 10\npython train.py\n"), 0o644)
	return file
}

func TestSbatchWrapperPassesThroughAndRecords(t *testing.T) {
	isolate(t)
	db := filepath.Join(t.TempDir(), "history.db")
	t.Setenv("MIGADVISOR_DB", db)
	argsLog := fakeSbatch(t)
	file := wrapperScript(t)
	args := []string{"--parsable", "--export=ALL,X=1 2", "--gres=gpu:a100_20g:1", file, "--lr", "it's"}
	out, errOut, code := migadvisor(t, append([]string{"sbatch"}, args...)...)
	if code != 0 || out != "4242;migdev\n" || errOut != "" {
		t.Fatalf("exit %d, stdout %q, stderr %q", code, out, errOut)
	}
	logged, _ := os.ReadFile(argsLog)
	if string(logged) != strings.Join(args, "\n")+"\n" {
		t.Errorf("sbatch got:\n%s", logged)
	}
	st, err := store.Open(context.Background(), db)
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	tr, err := st.Tracked(context.Background(), store.TrackedFilter{})
	if err != nil || len(tr) != 1 || tr[0].JobID != "4242" || tr[0].Cluster != "migdev" || tr[0].Profile != "2g.20gb" || tr[0].Source != file {
		t.Errorf("recorded %+v, %v (want job 4242 on 2g.20gb: the command line's --gres wins)", tr, err)
	}
}

func TestSbatchWrapperExitStatusAndDisable(t *testing.T) {
	isolate(t)
	db := filepath.Join(t.TempDir(), "history.db")
	t.Setenv("MIGADVISOR_DB", db)
	fakeSbatch(t)
	file := wrapperScript(t)
	t.Setenv("STUB_EXIT", "1")
	if _, errOut, code := migadvisor(t, "sbatch", file); code != 1 || errOut != "sbatch: error: Batch job submission failed\n" {
		t.Errorf("failed submission: exit %d, %q", code, errOut)
	}
	t.Setenv("STUB_EXIT", "")
	t.Setenv("MIGADVISOR_DISABLE", "1")
	if out, errOut, code := migadvisor(t, "sbatch", file); code != 0 || out != "Submitted batch job 4242\n" || errOut != "" {
		t.Errorf("disabled: exit %d, %q %q", code, out, errOut)
	}
	if _, err := os.Stat(db); err == nil {
		t.Error("MIGADVISOR_DISABLE=1 still touched the history")
	}
}

func TestSbatchWrapperFailsOpenOnALockedHistory(t *testing.T) {
	isolate(t)
	db := filepath.Join(t.TempDir(), "history.db")
	t.Setenv("MIGADVISOR_DB", db)
	st, err := store.Open(context.Background(), db)
	if err != nil {
		t.Fatal(err)
	}
	st.Close()
	lock, err := sql.Open("sqlite3", db)
	if err != nil {
		t.Fatal(err)
	}
	defer lock.Close()
	conn, err := lock.Conn(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	if _, err := conn.ExecContext(context.Background(), "BEGIN EXCLUSIVE"); err != nil {
		t.Fatal(err)
	}
	fakeSbatch(t)
	start := time.Now()
	out, errOut, code := migadvisor(t, "sbatch", wrapperScript(t))
	if code != 0 || out != "Submitted batch job 4242\n" || !strings.HasPrefix(errOut, "migadvisor: the job is submitted but not in the history") ||
		strings.Count(errOut, "\n") != 1 {
		t.Errorf("locked history: exit %d, %q, %q", code, out, errOut)
	}
	if waited := time.Since(start); waited > 2*time.Second {
		t.Errorf("the wrapper waited %v for a locked history", waited)
	}
	t.Setenv("MIGADVISOR_QUIET", "1")
	if _, errOut, code := migadvisor(t, "sbatch", wrapperScript(t)); code != 0 || errOut != "" {
		t.Errorf("quiet: exit %d, %q", code, errOut)
	}
}
