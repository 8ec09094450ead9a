//go:build !noreport

package main

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// The admin's plain flow over a script whose runs its owner cancelled
// each time, an hour in: no profile can be advised, and the report says
// why in what is true of those runs (cancelled before they completed),
// not in another run's story (a time limit, a failure, host memory).
func TestReportSaysWhatTheUnjudgedRunsDid(t *testing.T) {
	isolate(t)
	dir := t.TempDir()
	t.Setenv("MIGADVISOR_DB", filepath.Join(dir, "site.db"))
	t.Setenv("MIGADVISOR_SITE", reportSite(t, ""))
	var b strings.Builder
	b.WriteString("JobIDRaw|JobID|Cluster|User|State|ExitCode|Submit|Start|End|ElapsedRaw|TimelimitRaw|AllocCPUS|ReqMem|AllocTRES|TRESUsageInMax|JobName|WorkDir\n")
	for i := range 3 {
		id := 9001 + i
		start := time.Date(2026, 11, 3+i, 1, 0, 0, 0, time.Local)
		end := start.Add(time.Hour)
		stamp := func(t time.Time) string { return t.Format("2006-01-02T15:04:05") }
		fmt.Fprintf(&b, "%d|%d|wulver|carol|CANCELLED by 1234|0:0|%s|%s|%s|3600|600|4|16G|cpu=4,gres/gpu:a100=1,gres/gpu=1,mem=16G,node=1||sweep|%s\n",
			id, id, stamp(start), stamp(start), stamp(end), dir)
		fmt.Fprintf(&b, "%d.batch|%d.batch|wulver|carol|CANCELLED|0:15|%s|%s|%s|3600||4|||gres/gpumem=2048M,gres/gpuutil=40|batch|%s\n",
			id, id, stamp(start), stamp(start), stamp(end), dir)
	}
	dump := filepath.Join(dir, "sacct.psv")
	if err := os.WriteFile(dump, []byte(b.String()), 0o644); err != nil {
		t.Fatal(err)
	}
	mustRunCLI(t, "collect", "--sacct-file", dump, "--all-users", "--scripts=false")
	out, errOut, code := migadvisor(t, "report", "--json", "--month", "2026-11")
	var rep struct {
		Unjudged []struct {
			Reason string `json:"reason"`
			Jobs   int    `json:"jobs"`
		} `json:"unjudged"`
	}
	if err := json.Unmarshal([]byte(out), &rep); code != 0 || err != nil {
		t.Fatalf("report --json: exit %d, %v: %s%s", code, err, out, errOut)
	}
	if len(rep.Unjudged) != 1 || rep.Unjudged[0].Jobs != 3 {
		t.Fatalf("unjudged: %+v, want the 3 cancelled jobs: %s", rep.Unjudged, out)
	}
	why := rep.Unjudged[0].Reason
	if !strings.Contains(why, "cancelled before they completed") || strings.Contains(why, "time limit") || strings.Contains(why, "failed") || strings.Contains(why, "host memory") {
		t.Errorf("the cancelled runs' reason: %q", why)
	}
}
