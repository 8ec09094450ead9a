//go:build !noreport

package main

import (
	"path/filepath"
	"strings"
	"testing"
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
