//go:build !noreport

package main

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"

	"github.com/migadvisor/migadvisor/slurm"
	"github.com/migadvisor/migadvisor/slurm/slurmtest"
)

// The README's admin command with a notify_command that is not installed:
// the dry run checks what it would run and says it would send nothing
// (exit 0, a setup step); the real run refuses before sending any.
func TestReportDryRunChecksTheMailCommand(t *testing.T) {
	isolate(t)
	dir := t.TempDir()
	t.Setenv("MIGADVISOR_DB", filepath.Join(dir, "site.db"))
	mail := filepath.Join(dir, "bin", "mail") // as /usr/bin/mail where no mail package is installed
	t.Setenv("MIGADVISOR_SITE", reportSite(t, `["`+mail+`", "-s", "{subject}", "{user}"]`))
	if _, errOut, code := migadvisor(t, "collect", "--sacct-file", "testdata/jobstats/full-3gib.psv", "--all-users", "--scripts=false"); code != 0 {
		t.Fatalf("collect: exit %d: %s", code, errOut)
	}
	want := "site wulver's notify_command runs " + mail + ", which does not exist: " +
		"install a mail command (mailutils, bsd-mailx or s-nail) or name one that is installed"
	text, errOut, code := migadvisor(t, "report", "--month", "2026-11", "--min-su-saved", "0", "--notify", "--dry-run")
	if code != 0 || strings.Count(text, "not configured yet: "+want+", so --notify would send nothing\n") != 1 {
		t.Errorf("--dry-run: exit %d:\n%s%s", code, text, errOut)
	}
	_, errOut, code = migadvisor(t, "report", "--month", "2026-11", "--min-su-saved", "0", "--notify")
	if code != 1 || errOut != "migadvisor: --notify: "+want+"; nothing was sent\n" {
		t.Errorf("--notify: exit %d: %q", code, errOut)
	}
}

// collect --all-users where slurmdbd stores scripts
// (AccountingStoreFlags=job_script): of the jobs with no stored script,
// the batch job is counted apart from the salloc and srun allocations,
// which never have one (no batch step in accounting); the flag is asked
// about only for the first.
func TestCollectTellsAllocationsFromBatchJobsWithoutAScript(t *testing.T) {
	isolate(t)
	dir := t.TempDir()
	t.Setenv("MIGADVISOR_DB", filepath.Join(dir, "site.db"))
	script := "#!/bin/bash\n#SBATCH --gres=gpu:a100:1\npython train.py\n"
	dump, _ := siteAccounting(t, dir, []acctJob{
		{id: "81", user: "alice", name: "train", gpu: "a100", state: "COMPLETED", day: 3, hour: 9, seconds: 600, script: script},
		{id: "82", user: "alice", name: "old", gpu: "a100", state: "COMPLETED", day: 3, hour: 10, seconds: 600},
		{id: "83", user: "bob", name: "interactive", gpu: "a100", state: "COMPLETED", day: 3, hour: 11, seconds: 600},
		{id: "84", user: "bob", name: "bash", gpu: "a100", state: "COMPLETED", day: 3, hour: 12, seconds: 600},
	})
	batch := map[string]bool{"81": true, "82": true}
	fake := slurmtest.New().Cluster("migdev").Prints("squeue", "").On("sacct", func(c slurm.Call) slurmtest.Reply {
		var out strings.Builder
		switch {
		case slices.Contains(c.Args, "--batch-script"):
			for _, id := range strings.Split(c.Args[slices.Index(c.Args, "-j")+1], ",") {
				fmt.Fprintf(&out, "Batch Script for %s\n%s\n", id, strings.Repeat("-", 80))
				out.WriteString(map[bool]string{true: script + "\n", false: "NONE\n\n"}[id == "81"])
			}
		case slices.Contains(c.Args, "--format=JobIDRaw"):
			for _, a := range c.Args {
				ids, ok := strings.CutPrefix(a, "--jobs=")
				for _, id := range strings.Split(ids, ",") {
					if ok && batch[id] {
						fmt.Fprintf(&out, "%s\n%s.batch\n%s.extern\n", id, id, id)
					} else if ok {
						fmt.Fprintf(&out, "%s\n%s.extern\n%s.interactive\n", id, id, id)
					}
				}
			}
		}
		return slurmtest.Reply{Stdout: out.String()}
	})
	out := mustRunWith(t, fake, "collect", "--sacct-file", dump, "--all-users")
	want := "scripts: 1 job linked from slurmdbd, 1 batch job without a stored script (AccountingStoreFlags=job_script?); " +
		"2 salloc or srun allocations, which have no batch script\n"
	if !strings.Contains(out, want) {
		t.Errorf("collect:\n%s\nwant %q", out, want)
	}
}

// The README's admin block on a fresh install: report --month last after
// a first collect says why it is empty (the history's jobs ended later,
// or there are none) and the collect that reads the month, into the
// history the report read (MIGADVISOR_DB=/var/lib/migadvisor/site.db: a
// plain collect would fill the admin's own); with the month collected,
// the same report has its jobs.
func TestAnEmptyReportSaysWhyAndWhatToRun(t *testing.T) {
	isolate(t)
	db := filepath.Join(t.TempDir(), "site.db")
	t.Setenv("MIGADVISOR_DB", db)
	fill := "to read the period's accounting into it: MIGADVISOR_DB=" + db + " migadvisor collect --all-users --since 2026-10-01 " +
		"(a collect with no --since reads the last 7 days, and then goes on from where it left off)\n"
	empty := filepath.Join(t.TempDir(), "empty.psv")
	os.WriteFile(empty, nil, 0o644)
	mustRunCLI(t, "collect", "--sacct-file", empty, "--all-users", "--cluster", "migdev") // a collect that found no job
	text, errOut, code := migadvisor(t, "report", "--month", "2026-10")
	if code != 0 || !strings.Contains(text, ": 0 jobs, 0 SU\nnothing to judge: this history holds no job yet; "+fill) {
		t.Errorf("no job: exit %d:\n%s%s", code, text, errOut)
	}
	// A first collect of November's jobs (as one with no --since would read in its first week).
	mustRunCLI(t, "collect", "--sacct-file", "testdata/jobstats/full-3gib.psv", "--all-users", "--scripts=false")
	text, errOut, code = migadvisor(t, "report", "--month", "2026-10")
	if code != 0 || !regexp.MustCompile(`nothing to judge: no job ended in the period in this history, whose \d+ jobs ended from 2026-11-\d\d to 2026-11-\d\d; `+
		regexp.QuoteMeta(fill)).MatchString(text) {
		t.Errorf("a history of later jobs: exit %d:\n%s%s", code, text, errOut)
	}
	var rep struct {
		Held struct {
			Jobs     int `json:"jobs"`
			InPeriod int `json:"ended_in_period"`
		} `json:"history_holds"`
	}
	if err := json.Unmarshal([]byte(mustRunCLI(t, "report", "--month", "2026-10", "--json")), &rep); err != nil || rep.Held.Jobs == 0 || rep.Held.InPeriod != 0 {
		t.Errorf("--json: %v %+v", err, rep)
	}
	if text := mustRunCLI(t, "report", "--month", "2026-11"); strings.Contains(text, "nothing to judge") {
		t.Errorf("November, collected:\n%s", text)
	}
	// A published snapshot is written by no collect: the hint is the live
	// history's collect and publish, not a collect into the snapshot.
	pub := t.TempDir()
	mustRunCLI(t, "publish", pub)
	text, errOut, code = migadvisor(t, "report", "--db", filepath.Join(pub, "history.db"), "--month", "2026-10")
	if code != 0 || !strings.Contains(text, "; to read the period's accounting into it: this is a published snapshot, which no collect writes: "+
		"a collect --all-users --since 2026-10-01 into the live history it is published from, with --publish, reads it\n") {
		t.Errorf("a snapshot: exit %d:\n%s%s", code, text, errOut)
	}
	// The user's own history (the default) needs no MIGADVISOR_DB.
	t.Setenv("MIGADVISOR_DB", "")
	mustRunCLI(t, "collect", "--sacct-file", "testdata/jobstats/full-3gib.psv", "--all-users", "--scripts=false")
	if text := mustRunCLI(t, "report", "--month", "2026-10"); !strings.Contains(text, "; to read the period's accounting into it: migadvisor collect --all-users --since 2026-10-01 ") {
		t.Errorf("the default history:\n%s", text)
	}
}

// A site file exported from the built-in site and named for another
// cluster (as docs/admin/site-file.md starts one) never speaks in the
// built-in site's name: its notices and report say the new site's.
func TestAnExportedSiteFileSpeaksInItsOwnName(t *testing.T) {
	isolate(t)
	dir := t.TempDir()
	t.Setenv("MIGADVISOR_DB", filepath.Join(dir, "site.db"))
	exported := mustRunCLI(t, "catalog", "export")
	if strings.Contains(strings.ToLower(exported), "wulver") || strings.Contains(exported, "NJIT") {
		t.Errorf("the export carries the built-in site's name:\n%s", exported)
	}
	site := filepath.Join(dir, "site.toml")
	named := strings.Replace(exported, `name = ""`, `name = "hpc2"`, 1) + "\n[report]\nmin_su_saved = 1\nnotify_contact = \"hpc@example.edu\"\n"
	os.WriteFile(site, []byte(named), 0o644)
	t.Setenv("MIGADVISOR_SITE", site)
	mustRunCLI(t, "collect", "--sacct-file", "testdata/jobstats/full-3gib.psv", "--all-users", "--scripts=false", "--cluster", "migdev")
	text := mustRunCLI(t, "report", "--month", "2026-11", "--min-su-saved", "0", "--notify-dir", t.TempDir(), "--dry-run")
	if !strings.Contains(text, "--- Subject: Your GPU jobs on hpc2 could use a smaller GPU slice\n") || strings.Contains(strings.ToLower(text), "wulver") {
		t.Errorf("the notice:\n%s", text)
	}
}
