//go:build !noreport

package main

import (
	"encoding/json"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/migadvisor/migadvisor/catalog"
)

// gromacsOutput is what a gmx mdrun job prints of itself, on stderr: its
// banner and its closing figures, with nothing of a script or command line.
const gromacsOutput = "                      :-) GROMACS - gmx mdrun, 2023.3 (-:\n\n" +
	"Using 1 MPI thread\nUsing 4 OpenMP threads\n\n" +
	"               Core t (s)   Wall t (s)        (%)\n" +
	"       Time:      728.568      182.142      400.0\n" +
	"                 (ns/day)    (hour/ns)\n" +
	"Performance:      118.590        0.202\n"

// gromacsMonitorLine is the monitor's line a job's stdout ends with.
const gromacsMonitorLine = "MIGADVISOR_GPU peak_mib=1840 used_peak_mib=1900 total_mib=81559 samples=90 scope=tree device=NVIDIA A100-SXM4-80GB\n"

// gromacsDump is an sacct dump of n GROMACS jobs of user carol, named md,
// each 182 s on a whole A100 with 4 CPUs and 16G, their output files
// (slurm-ID.out) written to dir: GROMACS's lines and the monitor's, or
// with stderr set apart (md-ID.err) the monitor's alone, and GROMACS's
// lines in stderr's file.
func gromacsDump(t *testing.T, dir string, n int, stderrApart bool) string {
	t.Helper()
	var b strings.Builder
	b.WriteString("JobIDRaw|JobID|Cluster|User|Account|Partition|QOS|State|ExitCode|Submit|Start|End|ElapsedRaw|TimelimitRaw|AllocCPUS|ReqMem|AllocTRES|WorkDir|JobName\n")
	for i := range n {
		id := 7001 + i
		end := time.Date(2026, 11, 3+i, 10, 0, 0, 0, time.Local)
		start := end.Add(-182 * time.Second)
		fmt.Fprintf(&b, "%d|%d|wulver|carol|abc123|gpu|standard|COMPLETED|0:0|%s|%s|%s|182|60|4|16G|cpu=4,gres/gpu:a100=1,gres/gpu=1,mem=16G,node=1|%s|md\n",
			id, id, start.Format("2006-01-02T15:04:05"), start.Format("2006-01-02T15:04:05"), end.Format("2006-01-02T15:04:05"), dir)
		out := gromacsOutput + gromacsMonitorLine
		if stderrApart {
			out = gromacsMonitorLine
			if err := os.WriteFile(filepath.Join(dir, fmt.Sprintf("md-%d.err", id)), []byte(gromacsOutput), 0o644); err != nil {
				t.Fatal(err)
			}
		}
		if err := os.WriteFile(filepath.Join(dir, fmt.Sprintf("slurm-%d.out", id)), []byte(out), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	dump := filepath.Join(dir, "sacct.psv")
	if err := os.WriteFile(dump, []byte(b.String()), 0o644); err != nil {
		t.Fatal(err)
	}
	return dump
}

// publishedGROMACS is Wulver's published GROMACS time on a profile over
// its time on the whole GPU.
func publishedGROMACS(t *testing.T, profile string) float64 {
	t.Helper()
	site, err := catalog.Builtin("wulver")
	if err != nil {
		t.Fatal(err)
	}
	set, _ := catalog.ReferenceFor(site)
	b, _ := set.Benchmark("gromacs_performance")
	on, ok1 := b.Row(profile)
	full, ok2 := b.Row("full")
	if !ok1 || !ok2 {
		t.Fatalf("no published GROMACS time on %s or full", profile)
	}
	return on.Seconds / full.Seconds
}

// The plain flow of a GROMACS job measured on the whole GPU alone, whose
// script says nothing of GROMACS (it runs a wrapper the history does not
// hold): its banner, in the --error file, says what it is, and recommend
// scales it like Wulver's published GROMACS table (3g.40gb 1.03× the whole
// GPU's time), not like the median reference benchmark (1.35×).
func TestRecommendScalesLikeTheWorkloadItsOutputShows(t *testing.T) {
	isolate(t)
	dir := t.TempDir()
	t.Setenv("MIGADVISOR_DB", filepath.Join(dir, "history.db"))
	t.Setenv("MIGADVISOR_SITE", "wulver")
	script := filepath.Join(dir, "md.sh")
	if err := os.WriteFile(script, []byte("#!/bin/bash\n#SBATCH --gres=gpu:a100:1\n#SBATCH --cpus-per-task=4\n#SBATCH --mem=16G\n#SBATCH --error=md-%j.err\nsrun ./run-case.sh\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	dump := gromacsDump(t, dir, 1, true)
	mustRunCLI(t, "track", script, "7001")
	mustRunCLI(t, "collect", "--sacct-file", dump, "--outputs", dir)
	out, errOut, code := migadvisor(t, "recommend", "--json", script)
	var rec struct {
		RuntimeWhy string `json:"runtime_why"`
		Profiles   []struct {
			Profile  string   `json:"profile"`
			RuntimeS *float64 `json:"runtime_s"`
		} `json:"profiles"`
	}
	if err := json.Unmarshal([]byte(out), &rec); code != 0 || err != nil {
		t.Fatalf("recommend --json: exit %d, %v: %s%s", code, err, out, errOut)
	}
	runtime := map[string]float64{}
	for _, p := range rec.Profiles {
		if p.RuntimeS != nil {
			runtime[p.Profile] = *p.RuntimeS
		}
	}
	for _, profile := range []string{"1g.10gb", "2g.20gb", "3g.40gb"} {
		got, want := runtime[profile]/runtime["full"], publishedGROMACS(t, profile)
		if math.Abs(got/want-1) > 0.05 {
			t.Errorf("%s: %.2f× the whole GPU's time, Wulver's GROMACS %.2f× (%s)", profile, got, want, rec.RuntimeWhy)
		}
	}
	if !strings.Contains(rec.RuntimeWhy, "gromacs_performance") {
		t.Errorf("the runtimes do not say they rest on the GROMACS benchmark: %s", rec.RuntimeWhy)
	}
}

// The admin's plain flow over the same jobs, linked to no script: a
// site-wide collect of the dump and their output, then report --json. The
// slice it names is priced at the runtime Wulver's GROMACS table gives it
// over the whole GPU, as the output's banner says the jobs are GROMACS.
func TestReportScalesLikeTheWorkloadItsOutputShows(t *testing.T) {
	isolate(t)
	dir := t.TempDir()
	t.Setenv("MIGADVISOR_DB", filepath.Join(dir, "site.db"))
	t.Setenv("MIGADVISOR_SITE", reportSite(t, ""))
	dump := gromacsDump(t, dir, 3, false)
	if _, errOut, code := migadvisor(t, "collect", "--sacct-file", dump, "--all-users", "--scripts=false", "--outputs", dir); code != 0 {
		t.Fatalf("collect: exit %d: %s", code, errOut)
	}
	out, errOut, code := migadvisor(t, "report", "--json", "--month", "2026-11")
	var rep struct {
		Scripts []struct {
			Name         string  `json:"job_name"`
			Recommended  string  `json:"recommended"`
			RuntimeRatio float64 `json:"runtime_ratio"`
			Why          string  `json:"why"`
		} `json:"scripts"`
	}
	if err := json.Unmarshal([]byte(out), &rep); code != 0 || err != nil {
		t.Fatalf("report --json: exit %d, %v: %s%s", code, err, out, errOut)
	}
	if len(rep.Scripts) != 1 {
		t.Fatalf("%d scripts listed, want md's: %s", len(rep.Scripts), out)
	}
	s := rep.Scripts[0]
	if want := publishedGROMACS(t, s.Recommended); math.Abs(s.RuntimeRatio/want-1) > 0.05 {
		t.Errorf("%s on %s: %.2f× the whole GPU's time, Wulver's GROMACS %.2f× (%s)", s.Name, s.Recommended, s.RuntimeRatio, want, s.Why)
	}
}

// The admin's plain flow over GROMACS jobs on the whole GPU whose
// accounting has Slurm's gres/gpuutil: busy 34% of the time. Its banner
// says what it is, and Wulver's table what that does on each slice: 2g.20gb
// the cheapest (1.46× the time at 8 SU an hour against 20), 1g.10gb dearer
// (2.74× at 6). The utilization allows up to 3.3× on 1g.10gb, so the table
// stands: the report names 2g.20gb at the table's time, not 1g.10gb at the
// 1.6× that the benchmark's fitted floor, taken with the job's idle time
// once more, would give.
func TestReportKeepsTheWorkloadsTableBesideTheUtilization(t *testing.T) {
	isolate(t)
	dir := t.TempDir()
	t.Setenv("MIGADVISOR_DB", filepath.Join(dir, "site.db"))
	t.Setenv("MIGADVISOR_SITE", reportSite(t, ""))
	var dump strings.Builder
	dump.WriteString(evidenceHeader)
	for i := range 4 {
		id := strconv.Itoa(7101 + i)
		day := fmt.Sprintf("2026-11-%02d", 3+i)
		dump.WriteString(fmt.Sprintf("%s|%s|wulver|carol|COMPLETED|0:0|%sT01:00:00|%sT01:00:00|%sT05:00:00|14400|4|16G|cpu=4,gres/gpu:a100=1,gres/gpu=1,mem=16G,node=1||md|%s\n", id, id, day, day, day, dir) +
			fmt.Sprintf("%s.batch|%s.batch|wulver|carol|COMPLETED|0:0|%sT01:00:00|%sT01:00:00|%sT05:00:00|14400|4|||gres/gpumem=1200M,gres/gpuutil=34|batch|%s\n", id, id, day, day, day, dir))
		if err := os.WriteFile(filepath.Join(dir, "slurm-"+id+".out"), []byte(gromacsOutput), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	file := filepath.Join(dir, "sacct.psv")
	if err := os.WriteFile(file, []byte(dump.String()), 0o644); err != nil {
		t.Fatal(err)
	}
	mustRunCLI(t, "collect", "--sacct-file", file, "--all-users", "--scripts=false", "--outputs", dir)
	out, errOut, code := migadvisor(t, "report", "--json", "--month", "2026-11")
	var rep struct {
		Scripts []struct {
			Recommended  string  `json:"recommended"`
			RuntimeRatio float64 `json:"runtime_ratio"`
			Why          string  `json:"why"`
		} `json:"scripts"`
	}
	if err := json.Unmarshal([]byte(out), &rep); code != 0 || err != nil || len(rep.Scripts) != 1 {
		t.Fatalf("report --json: exit %d, %v: %s%s", code, err, out, errOut)
	}
	s := rep.Scripts[0]
	if want := publishedGROMACS(t, "2g.20gb"); s.Recommended != "2g.20gb" || math.Abs(s.RuntimeRatio/want-1) > 0.05 {
		t.Errorf("md: %s at %.2f× the whole GPU's time, want 2g.20gb at Wulver's GROMACS %.2f× (%s)", s.Recommended, s.RuntimeRatio, want, s.Why)
	}
}

// The admin's plain flow over QLoRA fine-tuning jobs on 1g.10gb, their
// output Hugging Face's and PEFT's: Wulver's table has that workload 0.51×
// as long on 2g.20gb (0.556 h against 1.092 h), at 5 SU an hour against 3,
// so 2g.20gb costs 15% less per run. The report names it, a larger slice,
// at the table's time; the form fitted to the table (0.56×) would have
// priced it within the noise of 1g.10gb and kept the jobs where they ran.
func TestReportTakesTheWorkloadsOwnRatios(t *testing.T) {
	isolate(t)
	dir := t.TempDir()
	t.Setenv("MIGADVISOR_DB", filepath.Join(dir, "site.db"))
	t.Setenv("MIGADVISOR_SITE", reportSite(t, ""))
	const output = "Loading checkpoint shards: 100%|██████████| 2/2 [00:03<00:00,  1.62s/it]\n" +
		"trainable params: 18,464,768 || all params: 1,562,179,072 || trainable%: 1.1820\n" +
		"{'loss': 1.6012, 'grad_norm': 0.4410, 'learning_rate': 0.0002, 'epoch': 0.33}\n"
	var dump strings.Builder
	dump.WriteString(evidenceHeader)
	for i := range 3 {
		id := strconv.Itoa(7201 + i)
		day := fmt.Sprintf("2026-11-%02d", 3+i)
		dump.WriteString(fmt.Sprintf("%s|%s|wulver|carol|COMPLETED|0:0|%sT01:00:00|%sT01:00:00|%sT11:00:00|36000|1|4G|cpu=1,gres/gpu:a100_10g=1,gres/gpu=1,mem=4G,node=1||lora|%s\n", id, id, day, day, day, dir))
		if err := os.WriteFile(filepath.Join(dir, "slurm-"+id+".out"), []byte(output), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	file := filepath.Join(dir, "sacct.psv")
	if err := os.WriteFile(file, []byte(dump.String()), 0o644); err != nil {
		t.Fatal(err)
	}
	mustRunCLI(t, "collect", "--sacct-file", file, "--all-users", "--scripts=false", "--outputs", dir)
	out, errOut, code := migadvisor(t, "report", "--json", "--month", "2026-11")
	var rep struct {
		Scripts []struct {
			Recommended  string  `json:"recommended"`
			Direction    string  `json:"direction"`
			RuntimeRatio float64 `json:"runtime_ratio"`
			Why          string  `json:"why"`
		} `json:"scripts"`
	}
	if err := json.Unmarshal([]byte(out), &rep); code != 0 || err != nil {
		t.Fatalf("report --json: exit %d, %v: %s%s", code, err, out, errOut)
	}
	if len(rep.Scripts) != 1 {
		t.Fatalf("%d scripts listed, want lora's on 2g.20gb: %s", len(rep.Scripts), out)
	}
	s := rep.Scripts[0]
	if s.Recommended != "2g.20gb" || s.Direction != "larger" || math.Abs(s.RuntimeRatio/(0.556/1.092)-1) > 0.02 {
		t.Errorf("lora: %s (%s) at %.3f× the time on 1g.10gb, want 2g.20gb at the table's 0.509× (%s)", s.Recommended, s.Direction, s.RuntimeRatio, s.Why)
	}
}
