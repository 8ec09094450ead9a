//go:build !noreport

package main

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/migadvisor/migadvisor/slurm"
)

// longGROMACSDump is an sacct dump of three GROMACS jobs of 52 hours on a
// whole A100, each asking for --time=3-00:00:00 (Wulver's limit), with no
// GPU memory figure, and their output files (GROMACS's banner) in dir.
func longGROMACSDump(t *testing.T, dir string) string {
	t.Helper()
	var b strings.Builder
	b.WriteString("JobIDRaw|JobID|Cluster|User|State|ExitCode|Submit|Start|End|ElapsedRaw|TimelimitRaw|AllocCPUS|ReqMem|AllocTRES|JobName|WorkDir\n")
	const hours = 52
	for i := range 3 {
		id := 8001 + i
		start := time.Date(2026, 11, 3+5*i, 1, 0, 0, 0, time.Local)
		end := start.Add(hours * time.Hour)
		fmt.Fprintf(&b, "%d|%d|wulver|carol|COMPLETED|0:0|%s|%s|%s|%d|4320|4|16G|cpu=4,gres/gpu:a100=1,gres/gpu=1,mem=16G,node=1|longmd|%s\n",
			id, id, start.Format("2006-01-02T15:04:05"), start.Format("2006-01-02T15:04:05"), end.Format("2006-01-02T15:04:05"), hours*3600, dir)
		if err := os.WriteFile(filepath.Join(dir, fmt.Sprintf("slurm-%d.out", id)), []byte(gromacsOutput), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	dump := filepath.Join(dir, "sacct.psv")
	if err := os.WriteFile(dump, []byte(b.String()), 0o644); err != nil {
		t.Fatal(err)
	}
	return dump
}

// GROMACS jobs of 52 hours on the whole GPU, where the partition allows 72:
// on 2g.20gb (1.46×) and 1g.10gb (2.74×) even the predicted runtime is past
// the limit, and on 3g.40gb (1.03×) only the slow end of its range is. The
// report proposes no probe sbatch would refuse: none of 1g.10gb or 2g.20gb,
// whose runs cannot finish, and 3g.40gb's with the limit itself, saying a
// run may not finish. No time line anywhere passes 3-00:00:00.
func TestReportProposesNoTimePastThePartitionsLimit(t *testing.T) {
	isolate(t)
	dir := t.TempDir()
	t.Setenv("MIGADVISOR_DB", filepath.Join(dir, "site.db"))
	t.Setenv("MIGADVISOR_SITE", reportSite(t, ""))
	mustRunCLI(t, "collect", "--sacct-file", longGROMACSDump(t, dir), "--all-users", "--scripts=false", "--outputs", dir)
	out, errOut, code := migadvisor(t, "report", "--json", "--month", "2026-11")
	var rep struct {
		ToMeasure []struct {
			Profile string `json:"profile"`
			Why     string `json:"why"`
			Command string `json:"command"`
		} `json:"to_measure"`
	}
	if err := json.Unmarshal([]byte(out), &rep); code != 0 || err != nil {
		t.Fatalf("report --json: exit %d, %v: %s%s", code, err, out, errOut)
	}
	if len(rep.ToMeasure) != 1 {
		t.Fatalf("%d scripts to measure, want longmd's: %s", len(rep.ToMeasure), out)
	}
	m := rep.ToMeasure[0]
	if m.Profile != "3g.40gb" || !strings.Contains(m.Command, "--time 3-00:00:00 ") || !strings.Contains(m.Why, "may not finish") {
		t.Errorf("to measure: %s with %q (%s), want 3g.40gb's probe with --time 3-00:00:00, saying a run may not finish", m.Profile, m.Command, m.Why)
	}
	text, _, _ := migadvisor(t, "report", "--month", "2026-11")
	for _, s := range []string{out, text} {
		for _, tm := range regexp.MustCompile(`(?:--time[ =]|"time_limit": ")([\d:-]+)`).FindAllStringSubmatch(s, -1) {
			if d, err := slurm.ParseTimeLimit(tm[1]); err != nil || d.Duration > 72*time.Hour {
				t.Errorf("the report proposes %s, past the partition's 3-00:00:00 (%v):\n%s", tm[0], err, s)
			}
		}
	}
}
