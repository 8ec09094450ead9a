//go:build !noreport

package main

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// The README's admin command on a fresh install (the built-in site: no
// notify_command, no notify_contact; no --notify-dir): the dry run shows
// the notice it would send and says what is not configured yet, exit 0,
// writing nothing; a real --notify still refuses to send through nothing.
func TestReportDryRunBeforeNotifyIsConfigured(t *testing.T) {
	isolate(t)
	dir := t.TempDir()
	t.Setenv("MIGADVISOR_DB", filepath.Join(dir, "site.db"))
	if _, errOut, code := migadvisor(t, "collect", "--sacct-file", "testdata/jobstats/full-3gib.psv", "--all-users", "--scripts=false"); code != 0 {
		t.Fatalf("collect: exit %d: %s", code, errOut)
	}
	text, errOut, code := migadvisor(t, "report", "--month", "2026-11", "--min-su-saved", "0", "--notify", "--dry-run")
	if code != 0 {
		t.Fatalf("--dry-run on a fresh install: exit %d: %s%s", code, text, errOut)
	}
	for _, want := range []string{"would send to alice: nowhere yet (no notify_command)", "Hello alice,", "2g.20gb would do",
		"not configured yet: site wulver names no notify_command in its [report], so --notify would send nothing; set one",
		"not configured yet: site wulver names no notify_contact in its [report]"} {
		if !strings.Contains(text, want) {
			t.Errorf("the dry run lacks %q:\n%s%s", want, text, errOut)
		}
	}
	if _, err := os.Stat(filepath.Join(dir, "notices.json")); !os.IsNotExist(err) {
		t.Errorf("a dry run wrote the ledger: %v", err)
	}
	text, _, code = migadvisor(t, "report", "--month", "2026-11", "--min-su-saved", "0", "--notify", "--dry-run", "--json")
	var out struct {
		Notify struct {
			Notices []struct{ User, To string }
			Unset   []string `json:"not_configured"`
		} `json:"notify"`
	}
	if err := json.Unmarshal([]byte(text), &out); err != nil || code != 0 || len(out.Notify.Notices) != 1 || len(out.Notify.Unset) != 2 {
		t.Errorf("--json: exit %d, %v: %s", code, err, text)
	}
	// A --notify-dir not created yet is one more thing to set up, not a failure.
	missing := filepath.Join(dir, "notices")
	text, errOut, code = migadvisor(t, "report", "--month", "2026-11", "--min-su-saved", "0", "--notify-dir", missing, "--dry-run")
	if code != 0 || !strings.Contains(text, "would send to alice: "+missing+"/alice-") ||
		!strings.Contains(text, "not configured yet: --notify-dir "+missing+" is not a directory yet") || strings.Contains(text, "notify_command") {
		t.Errorf("--notify-dir not there yet: exit %d: %s%s", code, text, errOut)
	}
	if _, err := os.Stat(missing); !os.IsNotExist(err) {
		t.Errorf("a dry run made the directory: %v", err)
	}
	_, errOut, code = migadvisor(t, "report", "--month", "2026-11", "--min-su-saved", "0", "--notify")
	if code != 1 || !strings.Contains(errOut, "names no notify_command in its [report]; give --notify-dir DIR") {
		t.Errorf("--notify with no command: exit %d: %s", code, errOut)
	}
}
