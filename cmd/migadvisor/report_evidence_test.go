//go:build !noreport

package main

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// evidenceDump is a month of three users' jobs whose output files sit in
// dir (slurm-ID.out, as collect finds them): quick's, the quick start's,
// completed on 1g.10gb and on the whole GPU with no GPU memory figure;
// llm's ran out of memory on 1g.10gb (PyTorch: 8.4 GiB in use and 2 GiB
// more asked for) and completed on the whole GPU; torch's held 6 GiB of
// the whole GPU in PyTorch's cache.
func evidenceDump(t *testing.T, dir string) string {
	t.Helper()
	const header = "JobIDRaw|JobID|Cluster|User|Account|Partition|QOS|State|ExitCode|Submit|Start|End|ElapsedRaw|TimelimitRaw|AllocCPUS|ReqMem|AllocTRES|WorkDir|AdminComment|JobName\n"
	oom := "torch.OutOfMemoryError: CUDA out of memory. Tried to allocate 2.00 GiB. GPU 0 has a total capacity of 9.50 GiB " +
		"of which 1.10 GiB is free. Including non-PyTorch memory, this process has 8.40 GiB memory in use.\n"
	cache := "MIGADVISOR_VERSION torch 2.11\n" +
		"MIGADVISOR_GPU peak_mib=6144 used_peak_mib=6144 total_mib=81559 samples=120 scope=tree util=mean:20,max:40 device=NVIDIA A100-SXM4-80GB\n"
	jobs := []struct {
		user, gpu, state string
		seconds          int
		output           string
	}{
		{"quick", "a100_10g", "COMPLETED", 4800, ""}, {"quick", "a100_10g", "COMPLETED", 4900, ""},
		{"quick", "a100", "COMPLETED", 3600, ""}, {"quick", "a100", "COMPLETED", 3650, ""},
		{"llm", "a100_10g", "FAILED", 600, oom}, {"llm", "a100", "COMPLETED", 3600, ""}, {"llm", "a100", "COMPLETED", 3640, ""},
		{"torch", "a100", "COMPLETED", 3600, cache}, {"torch", "a100", "COMPLETED", 3630, cache},
	}
	var b strings.Builder
	b.WriteString(header)
	for i, j := range jobs {
		id := 3001 + i
		end := time.Date(2026, 11, 2+i, 10, 0, 0, 0, time.Local)
		start := end.Add(-time.Duration(j.seconds) * time.Second)
		exit := "0:0"
		if j.state == "FAILED" {
			exit = "1:0"
		}
		fmt.Fprintf(&b, "%d|%d|wulver|%s|abc123|gpu|standard|%s|%s|%s|%s|%s|%d|180|4|16G|cpu=4,gres/gpu:%s=1,gres/gpu=1,mem=16G,node=1|%s||%s\n",
			id, id, j.user, j.state, exit, start.Format("2006-01-02T15:04:05"), start.Format("2006-01-02T15:04:05"),
			end.Format("2006-01-02T15:04:05"), j.seconds, j.gpu, dir, j.user)
		if j.output != "" {
			if err := os.WriteFile(filepath.Join(dir, fmt.Sprintf("slurm-%d.out", id)), []byte(j.output), 0o644); err != nil {
				t.Fatal(err)
			}
		}
	}
	return b.String()
}

// The admin's plain flow over jobs recommend judges without a GPU memory
// need: a site-wide collect, then report. The quick start's jobs on the
// whole GPU count as ones 1g.10gb would have done, since it completed
// there (not "not judged: no GPU memory figure"); llm's need is at least
// the out-of-memory error's figure, and torch's at most what PyTorch's
// cache held, in the report and in the users' notices.
func TestReportSaysWhatTheEvidenceProves(t *testing.T) {
	isolate(t)
	dir := t.TempDir()
	t.Setenv("MIGADVISOR_DB", filepath.Join(dir, "site.db"))
	t.Setenv("MIGADVISOR_SITE", reportSite(t, ""))
	dump := filepath.Join(dir, "november.psv")
	if err := os.WriteFile(dump, []byte(evidenceDump(t, dir)), 0o644); err != nil {
		t.Fatal(err)
	}
	if _, errOut, code := migadvisor(t, "collect", "--sacct-file", dump, "--all-users", "--scripts=false", "--outputs", dir); code != 0 {
		t.Fatalf("collect: exit %d: %s", code, errOut)
	}
	text, errOut, code := migadvisor(t, "report", "--month", "2026-11")
	if code != 0 {
		t.Fatalf("report: exit %d: %s", code, errOut)
	}
	row := func(user string) string {
		for _, line := range strings.Split(text, "\n") {
			if strings.HasPrefix(line, user+" ") && strings.Contains(line, "(by name)") {
				return line
			}
		}
		return ""
	}
	for user, want := range map[string][]string{
		"quick": {"full", "1g.10gb", "completed on 1g.10gb in 2 runs"},
		"llm":   {"full", "needs at least 10.4 GiB of the"},
		"torch": {"full", "needs at most 6.0 GiB of the", "held by PyTorch's cache"},
	} {
		line := row(user)
		for _, w := range want {
			if !strings.Contains(line, w) {
				t.Errorf("the report's row for %s's jobs does not say %q:\n%s", user, w, text)
			}
		}
	}
	if strings.Contains(text, "no GPU memory figure (neither") {
		t.Errorf("the report leaves jobs unjudged for want of a GPU memory figure that recommend does not need:\n%s", text)
	}
	text, errOut, code = migadvisor(t, "report", "--month", "2026-11", "--notify-dir", t.TempDir(), "--dry-run")
	if code != 0 {
		t.Fatalf("report --notify --dry-run: exit %d: %s", code, errOut)
	}
	for _, want := range []string{"GPU memory: they need at least 10.4 GiB (an out-of-memory message's figure)",
		"GPU memory: they need at most 6.0 GiB (measured by monitor: the peak PyTorch's cache held, more than the jobs use)",
		"GPU memory: not measured, but they completed on 1g.10gb in 2 runs"} {
		if !strings.Contains(text, want) {
			t.Errorf("the notices do not say %q:\n%s", want, text)
		}
	}
	if strings.Contains(text, "used at most 10.4 GiB") || strings.Contains(text, "used at most 6.0 GiB") {
		t.Errorf("a notice says the jobs used at most a figure that is a bound of another kind:\n%s", text)
	}
}
