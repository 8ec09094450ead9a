//go:build !noreport

package main

import (
	"encoding/csv"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
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

// The admin's plain flow: a site-wide collect of a dump whose jobs carry
// jobstats summaries (3 GiB on a full A100), then report, with no flag but
// the history and the site: alice's script is listed with the slice that
// would do and the SU saved, in text, JSON and CSV, and on a docs page.
func TestReportFromJobstats(t *testing.T) {
	isolate(t)
	db := filepath.Join(t.TempDir(), "site.db")
	t.Setenv("MIGADVISOR_DB", db)
	t.Setenv("MIGADVISOR_SITE", reportSite(t, ""))
	if _, errOut, code := migadvisor(t, "collect", "--sacct-file", "testdata/jobstats/full-3gib.psv", "--all-users", "--scripts=false"); code != 0 {
		t.Fatalf("collect: exit %d: %s", code, errOut)
	}
	text, errOut, code := migadvisor(t, "report", "--since", "2026-11-01", "--until", "2026-12-01")
	if code != 0 {
		t.Fatalf("report: exit %d: %s", code, errOut)
	}
	for _, want := range []string{"GPU jobs that ended in November 2026 (" + novemberZone() + "), site wulver", ": 2 jobs, 20 SU",
		"a smaller slice would have done 2 of them: 20 SU spent, about 16 SU there; saves about 4 SU (20% of what the GPU jobs spent)",
		"alice  train (by name)  2     full    2g.20gb  20        16        4      needs 3.2 GiB of the 19.5 GiB usable on 2g.20gb (jobstats)"} {
		if !strings.Contains(text, want) {
			t.Errorf("report lacks %q:\n%s", want, text)
		}
	}
	text, _, _ = migadvisor(t, "report", "--since", "2026-11-01", "--json")
	var rep struct {
		Total struct {
			Jobs        int `json:"jobs"`
			SmallerJobs int `json:"smaller_jobs"`
		} `json:"total"`
		Scripts []struct {
			User, Recommended, Basis string
			SUSaved                  float64 `json:"su_saved"`
			MeasuredBy               string  `json:"measured_by"`
		} `json:"scripts"`
		History string `json:"history"`
	}
	if err := json.Unmarshal([]byte(text), &rep); err != nil {
		t.Fatalf("%v: %s", err, text)
	}
	if rep.Total.Jobs != 2 || rep.Total.SmallerJobs != 2 || len(rep.Scripts) != 1 || rep.Scripts[0].SUSaved != 4 ||
		rep.Scripts[0].MeasuredBy != "jobstats" || rep.History != db {
		t.Errorf("--json: %+v", rep)
	}
	text, _, _ = migadvisor(t, "report", "--since", "2026-11-01", "--csv")
	rows, err := csv.NewReader(strings.NewReader(text)).ReadAll()
	if err != nil || len(rows) != 2 || rows[1][0] != "alice" || rows[1][6] != "2g.20gb" || rows[1][17] != "4" {
		t.Errorf("--csv: %v %q", err, rows)
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
	if code != 0 || !strings.Contains(text, "1 script left out: its user was told of it within notify_every_days") {
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

// A history with no GPU job in the period says so, and why, rather than
// print an empty table.
func TestReportSaysWhyItIsEmpty(t *testing.T) {
	isolate(t)
	t.Setenv("MIGADVISOR_DB", filepath.Join(t.TempDir(), "site.db"))
	if _, errOut, code := migadvisor(t, "collect", "--sacct-file", "testdata/jobstats/full-3gib.psv", "--all-users", "--scripts=false"); code != 0 {
		t.Fatalf("collect: exit %d: %s", code, errOut)
	}
	text, _, code := migadvisor(t, "report", "--since", "2026-01-01", "--until", "2026-02-01")
	if code != 0 || !strings.Contains(text, ": 0 jobs, 0 SU") ||
		!strings.Contains(text, "nothing to judge: no job ended in the period in this history, whose 2 jobs ended from 2026-11-20 to 2026-11-20; ") {
		t.Errorf("exit %d: %s", code, text)
	}
}

// The period as a calendar month, and flags that contradict each other
// or would be ignored, refused with a usage error.
func TestReportFlags(t *testing.T) {
	isolate(t)
	t.Setenv("MIGADVISOR_DB", filepath.Join(t.TempDir(), "site.db"))
	if _, errOut, code := migadvisor(t, "collect", "--sacct-file", "testdata/jobstats/full-3gib.psv", "--all-users", "--scripts=false"); code != 0 {
		t.Fatalf("collect: exit %d: %s", code, errOut)
	}
	text, errOut, code := migadvisor(t, "report", "--month", "2026-11", "--min-su-saved", "0")
	if code != 0 || !strings.Contains(text, "ended in November 2026 ("+novemberZone()+")") || !strings.Contains(text, "alice  train (by name)") {
		t.Errorf("--month: exit %d: %s%s", code, text, errOut)
	}
	text, errOut, code = migadvisor(t, "report", "--until", "2026-12-01", "--min-su-saved", "0")
	if code != 0 || !strings.Contains(text, "ended in November 2026 (") {
		t.Errorf("--until alone, the 30 days before it: exit %d: %s%s", code, text, errOut)
	}
	for _, c := range []struct {
		args []string
		want string
	}{
		{[]string{"--month", "2026-13"}, `--month "2026-13": give a month (2026-10) or last`},
		{[]string{"--month", "last", "--since", "7d"}, "--month is the period: give it without --since and --until"},
		{[]string{"--since", "2026-11-02", "--until", "2026-11-01"}, "--since (2026-11-02 00:00:00) must be before --until (2026-11-01 00:00:00)"},
		{[]string{"--format", "mkdocs"}, "--format is the --page's format: give --page DIR with it"},
		{[]string{"--page", t.TempDir(), "--user", "alice"}, "--page writes the site's docs page, of every user's jobs: give it without --user"},
		{[]string{"--min-runs", "0"}, "--min-runs 0: give 1 run or more"},
		{[]string{"--min-su-saved", "-1"}, "--min-su-saved -1: give 0 SU or more"},
		{[]string{"--json", "--csv"}, "--json and --csv both print the report: give one"},
	} {
		if _, errOut, code := migadvisor(t, append([]string{"report"}, c.args...)...); code != 2 || !strings.Contains(errOut, c.want) {
			t.Errorf("%v: exit %d: %s", c.args, code, errOut)
		}
	}
}
