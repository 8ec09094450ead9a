//go:build !noreport

package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/migadvisor/migadvisor/slurm/sacctgen"
)

// novemberZone is the local time zone's name at the end of November 2026,
// in which --month 2026-11 is read.
func novemberZone() string {
	zone, _ := time.Date(2026, 12, 1, 0, 0, 0, 0, time.Local).Zone()
	return zone
}

// reportSite is Wulver with the report's thresholds and notify command
// set in its site file, as an admin would.
func reportSite(t *testing.T, notify string) string {
	t.Helper()
	site, err := os.ReadFile("../../catalog/sites/wulver.toml")
	if err != nil {
		t.Fatal(err)
	}
	extra := "\n[report]\nmin_su_saved = 1\nmin_runs = 2\nnotify_contact = \"hpc@example.edu\"\n"
	if notify != "" {
		extra += "notify_command = " + notify + "\n"
	}
	file := filepath.Join(t.TempDir(), "site.toml")
	if err := os.WriteFile(file, append(site, extra...), 0o644); err != nil {
		t.Fatal(err)
	}
	return file
}

// What report prints of a month of a dump whose jobs carry jobstats
// summaries (3 GiB on a full A100), in text, JSON and CSV, of a period with
// no job, of --month and of --until alone, is TestGolden's (testdata/report);
// its period's flags are TestReportAndPlanFlagsBindThePeriod's.

// A history whose jobs have no end (a dump without End) is not empty: the
// report says what its jobs lack, not that it holds none.
func TestReportOfJobsWithNoEndSaysSo(t *testing.T) {
	isolate(t)
	t.Setenv("MIGADVISOR_DB", filepath.Join(t.TempDir(), "site.db"))
	dump, err := os.ReadFile("../../testdata/sacct/devcluster-22.05.psv")
	if err != nil {
		t.Fatal(err)
	}
	noEnd := filepath.Join(t.TempDir(), "no-end.psv")
	if err := os.WriteFile(noEnd, []byte(sacctgen.WithoutFields(string(dump), "End")), 0o644); err != nil {
		t.Fatal(err)
	}
	if _, errOut, code := migadvisor(t, "collect", "--sacct-file", noEnd); code != 0 {
		t.Fatalf("collect: exit %d: %s", code, errOut)
	}
	out, errOut, code := migadvisor(t, "report", "--month", "2026-11")
	if said := "nothing to judge: none of the 14 jobs this history holds has an end"; code != 0 || !strings.Contains(out, said) {
		t.Errorf("exit %d:\n%s%s\nwant: %s", code, out, errOut, said)
	}
}

// The admin's docs page: a --page of the month, in mkdocs, with the
// profiles' table and no user named.
func TestReportWritesThePage(t *testing.T) {
	isolate(t)
	t.Setenv("MIGADVISOR_DB", filepath.Join(t.TempDir(), "site.db"))
	t.Setenv("MIGADVISOR_SITE", reportSite(t, ""))
	if _, errOut, code := migadvisor(t, "collect", "--sacct-file", "testdata/jobstats/full-3gib.psv", "--all-users", "--scripts=false"); code != 0 {
		t.Fatalf("collect: exit %d: %s", code, errOut)
	}
	page := filepath.Join(t.TempDir(), "docs")
	if _, errOut, code := migadvisor(t, "report", "--since", "2026-11-01", "--page", page, "--format", "mkdocs"); code != 0 {
		t.Fatalf("--page: exit %d: %s", code, errOut)
	}
	md, _ := os.ReadFile(filepath.Join(page, "gpu-savings.md"))
	if !strings.Contains(string(md), "| full ") || strings.Contains(string(md), "alice") || !strings.Contains(string(md), "!!! note") {
		t.Errorf("the page:\n%s", md)
	}
	if _, err := os.Stat(filepath.Join(page, "gpu-savings.svg")); err != nil {
		t.Error(err)
	}
}

// --notify goes through the site's command (argv, message on stdin), once
// per notify_every_days; --dry-run sends nothing; without a command the
// admin is told to give --notify-dir.
func TestReportNotifies(t *testing.T) {
	isolate(t)
	dir := t.TempDir()
	t.Setenv("MIGADVISOR_DB", filepath.Join(dir, "site.db"))
	mail := filepath.Join(dir, "mail")
	os.Mkdir(mail, 0o700)
	t.Setenv("MIGADVISOR_SITE", reportSite(t, `["/usr/bin/tee", "`+mail+`/{user}"]`))
	if _, errOut, code := migadvisor(t, "collect", "--sacct-file", "testdata/jobstats/full-3gib.psv", "--all-users", "--scripts=false"); code != 0 {
		t.Fatalf("collect: exit %d: %s", code, errOut)
	}
	text, errOut, code := migadvisor(t, "report", "--since", "2026-11-01", "--notify", "--dry-run")
	if code != 0 || !strings.Contains(text, "would send to alice: /usr/bin/tee "+mail+"/alice") || !strings.Contains(text, "Hello alice,") {
		t.Fatalf("--dry-run: exit %d: %s%s", code, text, errOut)
	}
	if _, err := os.Stat(filepath.Join(mail, "alice")); !os.IsNotExist(err) {
		t.Fatalf("a dry run sent mail: %v", err)
	}
	text, errOut, code = migadvisor(t, "report", "--since", "2026-11-01", "--notify")
	if code != 0 || !strings.Contains(text, "sent to alice: ") {
		t.Fatalf("--notify: exit %d: %s%s", code, text, errOut)
	}
	body, _ := os.ReadFile(filepath.Join(mail, "alice"))
	if !strings.Contains(string(body), "2g.20gb would do") || !strings.Contains(string(body), "hpc@example.edu") {
		t.Errorf("the mail:\n%s", body)
	}
	if _, err := os.Stat(filepath.Join(dir, "notices.json")); err != nil {
		t.Errorf("the ledger beside --db: %v", err)
	}
	text, _, code = migadvisor(t, "report", "--since", "2026-11-01", "--notify")
	if code != 0 || !strings.Contains(text, "1 script left out (listed or worth measuring): its user was told of it within notify_every_days") {
		t.Errorf("again: exit %d: %s", code, text)
	}
	t.Setenv("MIGADVISOR_SITE", reportSite(t, ""))
	_, errOut, code = migadvisor(t, "report", "--notify")
	if code != 1 || !strings.Contains(errOut, "names no notify_command in its [report]; give --notify-dir DIR") {
		t.Errorf("no command: exit %d: %s", code, errOut)
	}
	_, errOut, code = migadvisor(t, "report", "--dry-run")
	if code != 2 || !strings.Contains(errOut, "--dry-run shows the notices --notify would send") {
		t.Errorf("--dry-run alone: exit %d: %s", code, errOut)
	}
}
