package main

import (
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"

	"github.com/migadvisor/migadvisor/advisor/app/index"
	"github.com/migadvisor/migadvisor/advisor/app/joblist"
)

// TestSweepRefusesADirectoryOpenToAll: job scripts are never written where
// another user could change them before they run.
func TestSweepRefusesADirectoryOpenToAll(t *testing.T) {
	isolate(t)
	t.Setenv("MIGADVISOR_DB", filepath.Join(t.TempDir(), "history.db"))
	open := filepath.Join(t.TempDir(), "shared")
	os.Mkdir(open, 0o755)
	os.Chmod(open, 0o777)
	_, errOut, code := migadvisor(t, "sweep", "../../examples/pytorch_mnist.sh", "--out", filepath.Join(open, "sweep"))
	if code != 1 || !strings.Contains(errOut, open+" is writable by every user") || strings.Count(errOut, "\n") != 1 {
		t.Errorf("exit %d: %q", code, errOut)
	}
	if entries, _ := os.ReadDir(open); len(entries) != 0 {
		t.Errorf("sweep wrote %d entries into %s", len(entries), open)
	}
}

// TestSiteHistoryIsReadOnlyForUsers: the site-wide history that root
// collects on a local disk and publishes (collect, then publish) is
// readable by all; another user's recommend and sbatch wrapper read the
// snapshot and the advice index (nothing of them changes), and that user's
// collect cannot write to the snapshot, and says so in one line.
func TestSiteHistoryIsReadOnlyForUsers(t *testing.T) {
	if os.Getuid() != 0 {
		t.Skip("runs commands as another user: needs root (make test runs as root)")
	}
	isolate(t)
	work, err := os.MkdirTemp("", "migadvisor-site-") // a place the other user can reach
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.RemoveAll(work) })
	os.Chmod(work, 0o755)
	bin := filepath.Join(work, "migadvisor")
	copyFile(t, migadvisorBinary(t), bin)
	liveDB := filepath.Join(t.TempDir(), "site.db") // the collecting host's local disk
	shared := filepath.Join(work, "site")
	os.Mkdir(shared, 0o755)
	siteDB := filepath.Join(shared, index.SnapshotName)
	siteFile := filepath.Join(work, "site.toml")
	wulver, err := os.ReadFile("../../catalog/sites/wulver.toml")
	if err != nil {
		t.Fatal(err)
	}
	os.WriteFile(siteFile, append(wulver, "\n[history]\nsite_db = \""+siteDB+"\"\n"...), 0o644)
	t.Setenv("MIGADVISOR_SITE", siteFile)
	script := filepath.Join(work, "job.sh")
	os.WriteFile(script, []byte("#!/bin/bash\n#SBATCH --gres=gpu:a100:1\n#SBATCH -t 10\npython train.py\n"), 0o644)
	historyWithJob2(t, liveDB, script) // collect as root, then a run of the script
	if _, errOut, code := migadvisor(t, "--db", liveDB, "publish", shared); code != 0 {
		t.Fatalf("publish: %s", errOut)
	}
	for file, mode := range map[string]os.FileMode{siteDB: 0o644, filepath.Join(shared, index.IndexName): 0o644, shared: 0o755} {
		if info, err := os.Stat(file); err != nil || info.Mode().Perm() != mode {
			t.Fatalf("%s: %v %v, want mode %v", file, info.Mode(), err, mode)
		}
	}
	before := snapshot(t, shared)

	home := filepath.Join(work, "home")
	os.Mkdir(home, 0o755)
	os.Chown(home, 65534, 65534)
	sbatch := newFakeSbatch(t, work) // where the other user can run it
	asNobody := func(args ...string) (string, string, int) {
		cmd := exec.Command(bin, args...)
		cmd.Dir = work
		cmd.Env = []string{"HOME=" + home, "PATH=" + os.Getenv("PATH"), "MIGADVISOR_SITE=" + siteFile,
			"MIGADVISOR_SBATCH=" + sbatch.Path, "FAKESBATCH_ID=77",
			"XDG_DATA_HOME=" + filepath.Join(home, ".local/share"), "XDG_CONFIG_HOME=" + filepath.Join(home, ".config")}
		cmd.SysProcAttr = &syscall.SysProcAttr{Credential: &syscall.Credential{Uid: 65534, Gid: 65534}}
		return runProcess(t, cmd)
	}
	out, errOut, code := asNobody("recommend", script, "--json")
	var rec struct {
		Basis string `json:"basis"`
		Runs  int    `json:"runs"`
	}
	if err := json.Unmarshal([]byte(out), &rec); code != 0 || err != nil || errOut != "" || rec.Basis != "measured" {
		t.Errorf("recommend as another user: exit %d, %v, basis %q\n%s%s", code, err, rec.Basis, out, errOut)
	}
	// history reads it as recommend does: the site's runs of the script
	// beside the user's own (none here), and with --db the site's whole
	// history, read-only, though the user cannot write it.
	out, errOut, code = asNobody("history", script, "--json")
	var hist []joblist.JobEntry
	if err := json.Unmarshal([]byte(out), &hist); code != 0 || err != nil || errOut != "" || len(hist) != 1 || hist[0].JobID != "2" || hist[0].History != "site" {
		t.Errorf("history of the script as another user: exit %d, %v\n%s%s", code, err, out, errOut)
	}
	out, errOut, code = asNobody("--db", siteDB, "history", "--json")
	if err := json.Unmarshal([]byte(out), &hist); code != 0 || err != nil || errOut != "" || len(hist) != 14 {
		t.Errorf("--db site.db history as another user: exit %d, %v, %d jobs\n%s", code, err, len(hist), errOut)
	}
	if out, errOut, code := asNobody("--db", siteDB, "recommend", script, "--json"); code != 0 || errOut != "" || !strings.Contains(out, `"basis": "measured"`) {
		t.Errorf("--db site.db recommend as another user: exit %d\n%s%s", code, out, errOut)
	}
	// The wrapper's own binary, as the shim runs it: the site's index.
	lean := filepath.Join(work, "migadvisor-sbatch")
	copyFile(t, sbatchBinary(t), lean)
	bin = lean
	out, errOut, code = asNobody("sbatch", script)
	if code != 0 || out != "Submitted batch job 77\n" || !strings.Contains(errOut, "completed on 1g.10gb in 1 run") {
		t.Errorf("the wrapper as another user: exit %d\n%s%s", code, out, errOut)
	}
	bin = filepath.Join(work, "migadvisor")
	_, errOut, code = asNobody("--db", siteDB, "collect", "--sacct-file", "../../testdata/sacct/devcluster-22.05.psv")
	if code != 1 || strings.Count(errOut, "\n") != 1 {
		t.Errorf("collect into the site's history as another user: exit %d: %q", code, errOut)
	}
	if after := snapshot(t, shared); after != before {
		t.Errorf("the site's history changed:\n%s\n->\n%s", before, after)
	}
}

// snapshot lists a directory's files with their sizes and times.
func snapshot(t *testing.T, dir string) string {
	t.Helper()
	entries, err := os.ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	var b strings.Builder
	for _, e := range entries {
		info, _ := e.Info()
		fmt.Fprintf(&b, "%s %v %v %d\n", e.Name(), info.Mode(), info.ModTime(), info.Size())
	}
	return b.String()
}
