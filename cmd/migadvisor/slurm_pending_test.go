//go:build slurm

package main

import (
	"encoding/json"
	"fmt"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/migadvisor/migadvisor/advisor/app/joblist"
	"github.com/migadvisor/migadvisor/advisor/base/history"
)

// Two scripts of one job name, submitted from one directory through the
// installed shim at once, several times each (a parameter sweep, two
// terminals): every job is linked to its own script by collect, none to
// the other's, whatever their times say (slurmdbd's stored scripts tell
// them apart); a job of the same script submitted with Slurm's own sbatch
// just before them is linked to none, and `sbatch --test-only` and a
// refused `sbatch --bogus` through the shim leave no record to take a job.
// Neither script's runs are the other's earlier version's either: both
// are live, at their own paths.
func TestSlurmShimSameNameScriptsAtOnce(t *testing.T) {
	requireCluster(t)
	isolate(t)
	work := t.TempDir()
	db := filepath.Join(work, "history.db")
	t.Setenv("MIGADVISOR_DB", db)
	t.Chdir(work)
	realSbatch, err := exec.LookPath("sbatch")
	if err != nil {
		t.Fatal(err)
	}
	installShim(t, work)

	name := fmt.Sprintf("twin%d", time.Now().UnixNano())
	header := "#!/bin/bash\n#SBATCH --job-name=" + name + "\n#SBATCH --mem=64M\n#SBATCH --time=1\n#SBATCH --output=%x.%j.out\nsleep 1\n"
	ok := writeScript(t, work, "ok.sh", uniqueRun(header+"echo ok\n")+"exit 0\n")
	fail := writeScript(t, work, "fail.sh", uniqueRun(header+"echo fail\n")+"exit 1\n")
	var all []string
	var mu sync.Mutex
	submit := func(sbatch string, args ...string) (string, error) {
		out, err := exec.Command(sbatch, append([]string{"--parsable"}, args...)...).Output()
		id := strings.TrimSpace(string(out))
		if err == nil {
			mu.Lock()
			all = append(all, id)
			mu.Unlock()
		}
		return id, err
	}
	t.Cleanup(func() { exec.Command("scancel", all...).Run() })

	// Slurm's own sbatch, just before: no record, no link.
	before, err := submit(realSbatch, ok)
	if err != nil {
		t.Fatal(err)
	}
	// Through the shim: nothing submitted, nothing recorded.
	if out, err := exec.Command("sbatch", "--test-only", ok).CombinedOutput(); err != nil {
		t.Fatalf("sbatch --test-only: %v\n%s", err, out)
	}
	if _, err := exec.Command("sbatch", "--bogus", ok).Output(); err == nil {
		t.Fatal("sbatch --bogus was not refused")
	}
	const each = 6
	ids := map[string][]string{ok: nil, fail: nil}
	var wg sync.WaitGroup
	errs := make(chan error, 2*each)
	for range each {
		for _, script := range []string{ok, fail} {
			wg.Add(1)
			go func() {
				defer wg.Done()
				id, err := submit("sbatch", script)
				if err != nil {
					errs <- fmt.Errorf("sbatch %s: %v", script, err)
					return
				}
				mu.Lock()
				ids[script] = append(ids[script], id)
				mu.Unlock()
			}()
		}
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Fatal(err)
	}
	// The records, written in the background beside sbatch: one a submission.
	spool := db + ".spool"
	for deadline := time.Now().Add(30 * time.Second); ; time.Sleep(200 * time.Millisecond) {
		files, _ := filepath.Glob(filepath.Join(spool, "*.json"))
		if len(files) >= 2*each || time.Now().After(deadline) {
			time.Sleep(2 * time.Second) // any record of --test-only or --bogus would be there by now
			if files, _ = filepath.Glob(filepath.Join(spool, "*.json")); len(files) != 2*each {
				t.Fatalf("%d records in the spool, want %d (one a submission through the shim that made a job)", len(files), 2*each)
			}
			break
		}
	}
	// Every job ended, and slurmdbd has its final record and script.
	for deadline := time.Now().Add(3 * time.Minute); ; time.Sleep(time.Second) {
		out, _ := exec.Command("squeue", "-h", "-o", "%i", "-j", strings.Join(all, ",")).Output()
		if strings.TrimSpace(string(out)) == "" {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("jobs still queued: %s", out)
		}
	}
	historyOf := func(script string) []joblist.JobEntry {
		t.Helper()
		var hist []joblist.JobEntry
		if err := json.Unmarshal([]byte(mustRun(t, "history", script, "--json")), &hist); err != nil {
			t.Fatal(err)
		}
		return hist
	}
	var okHist, failHist []joblist.JobEntry
	for deadline := time.Now().Add(time.Minute); ; time.Sleep(2 * time.Second) {
		out := mustRun(t, "collect")
		okHist, failHist = historyOf(ok), historyOf(fail)
		if len(okHist)+len(failHist) >= 2*each || time.Now().After(deadline) {
			t.Logf("collect:\n%s", out)
			break
		}
	}
	check := func(script string, hist []joblist.JobEntry, state string) {
		t.Helper()
		var got []string
		for _, h := range hist {
			got = append(got, h.JobID)
			if h.Earlier || h.State != state || h.Script == nil || *h.Script != script {
				t.Errorf("%s: job %s %s, script %v, earlier %v: want %s, its own", filepath.Base(script), h.JobID, h.State, scriptOf(h), h.Earlier, state)
			}
		}
		slices.Sort(got)
		want := slices.Sorted(slices.Values(ids[script]))
		if !slices.Equal(got, want) {
			t.Errorf("%s: history has jobs %v, want its own %v (Slurm's own sbatch submitted %s)", filepath.Base(script), got, want, before)
		}
	}
	check(ok, okHist, "COMPLETED")
	check(fail, failHist, "FAILED")
	// Slurm's own job is in the history, linked to no script.
	var everything []joblist.JobEntry
	if err := json.Unmarshal([]byte(mustRun(t, "history", "--json", "--limit", "0")), &everything); err != nil {
		t.Fatal(err)
	}
	// The check must see its subject: a job missing from the history
	// altogether is linked to nothing too, and would pass.
	seen := false
	for _, h := range everything {
		if h.JobID != before {
			continue
		}
		seen = true
		if h.Script != nil {
			t.Errorf("job %s, submitted with Slurm's own sbatch, is linked to %s", before, *h.Script)
		}
	}
	if !seen {
		t.Errorf("job %s, submitted with Slurm's own sbatch, is not in the history: whether it is linked is not seen", before)
	}
	// Nothing waits: every record found its own job.
	st, err := history.OpenWith(t.Context(), db, history.Options{ReadOnly: true})
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	if n, err := st.PendingCount(t.Context(), time.Time{}); err != nil || n != 0 {
		t.Errorf("%d records still wait for their jobs, %v", n, err)
	}
}

// scriptOf is the script a history's job is linked to, "" for none.
func scriptOf(h joblist.JobEntry) string {
	if h.Script == nil {
		return ""
	}
	return *h.Script
}
