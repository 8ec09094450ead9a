package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// The rule these tests hold the commands to: an empty answer is never
// silent. In text, the sentence that says why there is nothing stands where
// the table would; with --json, stdout holds the data alone (an empty
// array, valid JSON) and the sentence goes to stderr.

// assertOneLine fails the test unless s is exactly one line.
func assertOneLine(t *testing.T, what, s string) {
	t.Helper()
	if !strings.HasSuffix(s, "\n") || strings.Count(s, "\n") != 1 {
		t.Errorf("%s: not one line: %q", what, s)
	}
}

func assertMentions(t *testing.T, what, s string, words ...string) {
	t.Helper()
	for _, w := range words {
		if !strings.Contains(s, w) {
			t.Errorf("%s: no %q in %q", what, w, s)
		}
	}
}

// history JOB.sh for a script with no runs says so, naming the history it
// read and what would give it runs: track for jobs sbatch submitted,
// recommend --probe to measure it.
func TestHistoryOfAScriptWithNoRunsSaysWhy(t *testing.T) {
	isolate(t)
	db := filepath.Join(t.TempDir(), "history.db")
	t.Setenv("MIGADVISOR_DB", db)
	script := jobScript(t, completeScript)

	out, errOut, code := migadvisor(t, "history", script)
	if code != 0 || errOut != "" {
		t.Fatalf("history: exit %d, stderr %q", code, errOut)
	}
	assertOneLine(t, "history", out)
	assertMentions(t, "history", out, "no runs of "+script, "earlier versions", db,
		"migadvisor track "+script+" JOBID", "migadvisor recommend --probe "+script)

	out, errOut, code = migadvisor(t, "history", script, "--json")
	if code != 0 || out != "[]\n" {
		t.Fatalf("history --json: exit %d, stdout %q", code, out)
	}
	assertOneLine(t, "history --json stderr", errOut)
	assertMentions(t, "history --json stderr", errOut, "migadvisor: no runs of "+script, db, "migadvisor track ")
}

// A script whose tracked jobs have no accounting record yet: history says
// how many, which, and that collect reads them once they end.
func TestHistoryOfAScriptWithUncollectedJobsSaysCollect(t *testing.T) {
	isolate(t)
	fake := slurmNaming("migdev")
	db := filepath.Join(t.TempDir(), "history.db")
	t.Setenv("MIGADVISOR_DB", db)
	script := jobScript(t, completeScript)
	mustRunWith(t, fake, "track", script, "4242", "4243")

	out, errOut, code := migadvisorWith(t, fake, "history", script)
	if code != 0 || errOut != "" {
		t.Fatalf("history: exit %d, stderr %q", code, errOut)
	}
	assertOneLine(t, "history", out)
	assertMentions(t, "history", out, "no runs of "+script, db,
		"2 tracked jobs of this script (4242, 4243) have no final accounting record", "run 'migadvisor collect' after they end")
	if strings.Contains(out, "recommend --probe") {
		t.Errorf("history: probing is not the next step while its jobs wait for collect: %q", out)
	}

	out, errOut, _ = migadvisorWith(t, fake, "history", script, "--json")
	if out != "[]\n" {
		t.Errorf("history --json: stdout %q", out)
	}
	assertMentions(t, "history --json stderr", errOut, "migadvisor: ", "2 tracked jobs of this script", "'migadvisor collect'")
}

// With the site file's site_db, the sentence names both histories read.
func TestHistoryOfAScriptWithNoRunsNamesBothHistories(t *testing.T) {
	isolate(t)
	fake := slurmNaming("migdev")
	work := t.TempDir()
	siteDB := filepath.Join(work, "site.db")
	historyWithJob2(t, siteDB, jobScript(t, completeScript))
	wulver, err := os.ReadFile("../../catalog/sites/wulver.toml")
	if err != nil {
		t.Fatal(err)
	}
	siteFile := filepath.Join(work, "site.toml")
	os.WriteFile(siteFile, append(wulver, "\n[history]\nsite_db = \""+siteDB+"\"\n"...), 0o644)
	t.Setenv("MIGADVISOR_SITE", siteFile)
	mine := filepath.Join(work, "mine.db")
	t.Setenv("MIGADVISOR_DB", mine)
	other := writeTestScript(t, t.TempDir(), "other.sh", "#!/bin/bash\n#SBATCH --gres=gpu:a100_10g:1\n#SBATCH --mem=1G -t 5\npython other.py\n")
	out, errOut, code := migadvisorWith(t, fake, "history", other)
	if code != 0 || errOut != "" {
		t.Fatalf("history: exit %d, stderr %q", code, errOut)
	}
	assertOneLine(t, "history", out)
	assertMentions(t, "history", out, "no runs of "+other, "your history at "+mine, "the site-wide history at "+siteDB)
}

// history with an empty history names the file it read.
func TestHistoryWithNoJobsNamesTheFile(t *testing.T) {
	isolate(t)
	db := filepath.Join(t.TempDir(), "history.db")
	t.Setenv("MIGADVISOR_DB", db)
	out, errOut, code := migadvisor(t, "history")
	if code != 0 || errOut != "" {
		t.Fatalf("history: exit %d, stderr %q", code, errOut)
	}
	assertOneLine(t, "history", out)
	assertMentions(t, "history", out, "no history at "+db+" yet (no such file)", "migadvisor collect")

	out, errOut, _ = migadvisor(t, "history", "--json")
	if out != "[]\n" {
		t.Errorf("history --json: stdout %q", out)
	}
	assertMentions(t, "history --json stderr", errOut, "migadvisor: no history at "+db+" yet (no such file)")
}

// status with nothing tracked says so, and how jobs become tracked.
func TestStatusWithNothingTrackedSaysHowJobsBecomeTracked(t *testing.T) {
	isolate(t)
	t.Setenv("MIGADVISOR_SLURM_BIN", t.TempDir()) // nothing here needs Slurm
	db := filepath.Join(t.TempDir(), "history.db")
	t.Setenv("MIGADVISOR_DB", db)
	how := []string{"sweep JOB.sh --out DIR --submit", "recommend --probe JOB.sh", "migadvisor sbatch JOB.sh", "track JOB.sh JOBID"}

	out, errOut, code := migadvisor(t, "status")
	if code != 0 || errOut != "" {
		t.Fatalf("status: exit %d, stderr %q", code, errOut)
	}
	assertOneLine(t, "status", out)
	assertMentions(t, "status", out, append([]string{"no tracked jobs", db}, how...)...)

	out, errOut, code = migadvisor(t, "status", "--json")
	if code != 0 || out != "[]\n" {
		t.Fatalf("status --json: exit %d, stdout %q", code, out)
	}
	assertOneLine(t, "status --json stderr", errOut)
	assertMentions(t, "status --json stderr", errOut, "migadvisor: no tracked jobs", "track JOB.sh JOBID")

	// Ids that are not tracked: named, with the command that tracks them.
	out, errOut, code = migadvisor(t, "status", "7", "8")
	if code != 0 || errOut != "" {
		t.Fatalf("status 7 8: exit %d, stderr %q", code, errOut)
	}
	assertOneLine(t, "status 7 8", out)
	assertMentions(t, "status 7 8", out, "jobs 7, 8 are not tracked", db, "migadvisor track JOB.sh 7 8")

	// A sweep directory none of whose jobs is tracked.
	dir := t.TempDir()
	out, _, code = migadvisor(t, "status", "--sweep", dir)
	if code != 0 {
		t.Fatalf("status --sweep: exit %d", code)
	}
	assertOneLine(t, "status --sweep", out)
	assertMentions(t, "status --sweep", out, "tracks no jobs of the sweep in "+dir, "--submit")
}

// Once something is tracked, status and history print their tables alone.
func TestEmptyAnswerSentencesStayOutOfTables(t *testing.T) {
	isolate(t)
	fake := slurmNaming("migdev")
	t.Setenv("MIGADVISOR_DB", filepath.Join(t.TempDir(), "history.db"))
	script := jobScript(t, completeScript)
	mustRunWith(t, fake, "track", script, "4242")
	out, _, _ := migadvisorWith(t, fake, "status")
	if !strings.HasPrefix(out, "JOB ID") || strings.Contains(out, "no tracked") {
		t.Errorf("status:\n%s", out)
	}
}
