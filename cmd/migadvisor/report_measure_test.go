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

	"github.com/migadvisor/migadvisor/advisor/app/savings"
)

// measureDump is a month of two users' jobs, 4 CPUs and 16G each, output
// files in dir: slow's ran on 1g.10gb in 2 hours and, the month before,
// on 2g.20gb in 50 minutes (the model puts the whole GPU cheaper still) (a monitor's 6 GiB peak on both); jax's ran on
// the whole GPU holding 60 GiB of it, JAX's preallocation.
func measureDump(t *testing.T, dir string) string {
	t.Helper()
	const header = "JobIDRaw|JobID|Cluster|User|Account|Partition|QOS|State|ExitCode|Submit|Start|End|ElapsedRaw|TimelimitRaw|AllocCPUS|ReqMem|AllocTRES|WorkDir|JobName\n"
	monitor := func(mib, total int) string {
		return fmt.Sprintf("MIGADVISOR_GPU peak_mib=%d used_peak_mib=%d total_mib=%d samples=100 scope=tree util=unsupported device=NVIDIA A100-SXM4-80GB\n", mib, mib, total)
	}
	jax := "jax devices: [CudaDevice(id=0)]\nTraceback (most recent call last):\n  File \"/apps/lib/python3.11/site-packages/jax/_src/api.py\", line 1, in <module>\nwarning only\n" + monitor(61440, 81920)
	jobs := []struct {
		user, gpu, day string
		seconds        int
		output         string
	}{
		{"slow", "a100_20g", "2026-10-20", 3000, monitor(6144, 20480)}, {"slow", "a100_20g", "2026-10-21", 3050, monitor(6144, 20480)},
		{"slow", "a100_10g", "2026-11-02", 7200, monitor(6144, 9728)}, {"slow", "a100_10g", "2026-11-03", 7300, monitor(6144, 9728)},
		{"slow", "a100_10g", "2026-11-04", 7250, monitor(6144, 9728)},
		{"jax", "a100", "2026-11-05", 14400, jax}, {"jax", "a100", "2026-11-06", 14500, jax}, {"jax", "a100", "2026-11-07", 14300, jax},
	}
	var b strings.Builder
	b.WriteString(header)
	for i, j := range jobs {
		id := 5001 + i
		day, _ := time.ParseInLocation(time.DateOnly, j.day, time.Local)
		end := day.Add(20 * time.Hour)
		start := end.Add(-time.Duration(j.seconds) * time.Second)
		f := func(t time.Time) string { return t.Format("2006-01-02T15:04:05") }
		fmt.Fprintf(&b, "%d|%d|wulver|%s|abc123|gpu|standard|COMPLETED|0:0|%s|%s|%s|%d|600|4|16G|cpu=4,gres/gpu:%s=1,gres/gpu=1,mem=16G,node=1|%s|train-%s\n",
			id, id, j.user, f(start), f(start), f(end), j.seconds, j.gpu, dir, j.user)
		if err := os.WriteFile(filepath.Join(dir, fmt.Sprintf("slurm-%d.out", id)), []byte(j.output), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	return b.String()
}

// The report right-sizes both ways and turns an unknown into a next step,
// in the admin's plain flow: slow's jobs on 1g.10gb, which ran 2.4 times
// as long there as on 2g.20gb, would have cost less on a larger profile; jax's
// fit on a slice is not known (its peak is JAX's preallocation), so its
// script is listed to measure on the slice predicted to save the most,
// with what that would save and the command, in text, --json and the
// notice its user gets.
func TestReportRightSizesBothWaysAndListsWhatToMeasure(t *testing.T) {
	isolate(t)
	dir := t.TempDir()
	t.Setenv("MIGADVISOR_DB", filepath.Join(dir, "site.db"))
	t.Setenv("MIGADVISOR_SITE", reportSite(t, ""))
	dump := filepath.Join(dir, "november.psv")
	if err := os.WriteFile(dump, []byte(measureDump(t, dir)), 0o644); err != nil {
		t.Fatal(err)
	}
	if _, errOut, code := migadvisor(t, "collect", "--sacct-file", dump, "--outputs", dir); code != 0 {
		t.Fatalf("collect: exit %d: %s", code, errOut)
	}
	out, errOut, code := migadvisor(t, "report", "--month", "2026-11", "--json")
	if code != 0 {
		t.Fatalf("report --json: exit %d: %s", code, errOut)
	}
	var rep savings.Report
	if err := json.Unmarshal([]byte(out), &rep); err != nil {
		t.Fatal(err)
	}
	var slow *savings.Script
	for i := range rep.Scripts {
		if rep.Scripts[i].User == "slow" {
			slow = &rep.Scripts[i]
		}
	}
	if slow == nil || slow.Recommended == "1g.10gb" || slow.Direction != savings.DirectionLarger || slow.Jobs != 3 || slow.SUSaved <= 0 ||
		rep.Total.Larger != 3 || rep.Total.Smaller != 0 {
		t.Fatalf("slow's jobs on 1g.10gb are not listed for a larger profile, where they cost less: %+v, total %+v", slow, rep.Total)
	}
	if len(rep.ToMeasure) != 1 {
		t.Fatalf("to_measure %+v, want jax's script alone", rep.ToMeasure)
	}
	m := rep.ToMeasure[0]
	if m.User != "jax" || m.Name != "train-jax" || m.Jobs != 3 || len(m.JobIDs) != 3 || m.Profile == "full" || m.SUPossible <= 0 || m.SUPossible >= m.SUSpent ||
		!strings.Contains(m.Command, "recommend --probe --profiles "+m.Profile) || !strings.Contains(m.Why, "JAX") {
		t.Errorf("to_measure %+v", m)
	}
	text, errOut, code := migadvisor(t, "report", "--month", "2026-11")
	if code != 0 {
		t.Fatalf("report: exit %d: %s", code, errOut)
	}
	for _, want := range []string{"a larger slice would have cost less for 3 jobs", "together they save about", "worth measuring: 1 script", m.Command} {
		if !strings.Contains(text, want) {
			t.Errorf("the report does not say %q:\n%s", want, text)
		}
	}
	text, errOut, code = migadvisor(t, "report", "--month", "2026-11", "--notify-dir", t.TempDir(), "--dry-run")
	if code != 0 {
		t.Fatalf("report --notify --dry-run: exit %d: %s", code, errOut)
	}
	if !strings.Contains(text, "may fit a smaller GPU slice") || !strings.Contains(text, m.Command) {
		t.Errorf("jax's notice does not say what to measure:\n%s", text)
	}
	// slow's jobs went larger: its notice says they cost more than
	// another slice would have, never that they asked for too big a GPU.
	if !strings.Contains(text, "could use a GPU slice that costs less") || strings.Contains(text, "asked for a bigger GPU") {
		t.Errorf("slow's notice reads as if its jobs asked for too big a GPU:\n%s", text)
	}
}
