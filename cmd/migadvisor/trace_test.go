//go:build !noreport

package main

import (
	"bufio"
	"encoding/json"
	"flag"
	"fmt"
	"os"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/migadvisor/migadvisor/advisor/app/collect"
	"github.com/migadvisor/migadvisor/advisor/base/history"
	"github.com/migadvisor/migadvisor/catalog"
	"github.com/migadvisor/migadvisor/internal/atomicfile"
	"github.com/migadvisor/migadvisor/slurm/sacctgen"
)

var openBCSV = flag.String("openb-csv", "", "TestOpenBTrace: first rewrite "+openBDump+
	" from this copy of cluster-trace-gpu-v2023/csv/openb_pod_list_default.csv (alibaba/clusterdata)")

// openBDump is the real trace's GPU pods as a sacct dump: see its README.
const openBDump = "../../testdata/traces/alibaba-openb/sacct.psv"

// The fixture's window, in days of the trace: two weeks from the day its
// GPU pods start arriving by the hundred a day (day 115; 25 in the 115
// days before it), to keep the dump under a megabyte.
const openBFromDay, openBUntilDay = 115, 129

// openBEpoch is the trace's second 0: its times are relative, their
// origin undisclosed, so any date stands in.
var openBEpoch = time.Date(2023, 1, 1, 0, 0, 0, 0, time.UTC)

// openBConverter maps the trace onto Wulver: every GPU pod on its whole
// A100 (the full profile's GRES type), a share's grant a share of that
// GPU's memory, in the first QoS its GPU partition charges.
func openBConverter(t *testing.T, site *catalog.Site) sacctgen.OpenB {
	t.Helper()
	full, ok := site.Profile(catalog.FullGPU)
	model, okModel := site.Model()
	if !ok || !okModel || len(full.Partitions) == 0 {
		t.Fatalf("site %s has no whole-GPU profile or GPU model", site.Name)
	}
	part, ok := site.Partition(full.Partitions[0])
	if !ok || len(part.QoS) == 0 {
		t.Fatalf("site %s: partition %s lists no QoS", site.Name, full.Partitions[0])
	}
	const day = 24 * 3600
	return sacctgen.OpenB{Cluster: site.Name, Account: "openb", Partition: part.Name, QOS: part.QoS[0], GPUType: full.GRESType,
		GPUMemMiB: model.Memory.MiB(), Epoch: openBEpoch, From: openBFromDay * day, Until: openBUntilDay * day}
}

// dumpJob is a job of the fixture as its lines say, read here field by
// field rather than by the reader collect uses.
type dumpJob struct {
	state              string
	submit, start, end time.Time // end zero: still running
	gpuType            string
	gpus               int
	gpuMemMiB          float64 // -1: none written
}

func readOpenBDump(t *testing.T) map[string]*dumpJob {
	t.Helper()
	f, err := os.Open(openBDump)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	sc.Buffer(nil, 1<<20)
	sc.Scan()
	col := map[string]int{}
	for i, name := range strings.Split(sc.Text(), "|") {
		col[name] = i
	}
	epoch := func(v string) time.Time {
		if v == "Unknown" {
			return time.Time{}
		}
		n, err := strconv.ParseInt(v, 10, 64)
		if err != nil {
			t.Fatalf("time %q: %v", v, err)
		}
		return time.Unix(n, 0)
	}
	jobs := map[string]*dumpJob{}
	for sc.Scan() {
		rec := strings.Split(sc.Text(), "|")
		id, step, isStep := strings.Cut(rec[col["JobIDRaw"]], ".")
		if isStep {
			if step != "batch" || jobs[id] == nil {
				t.Fatalf("step %s.%s without its job line", id, step)
			}
			if v, ok := strings.CutPrefix(rec[col["TRESUsageInMax"]], "gres/gpumem="); ok {
				mib, err := strconv.ParseFloat(strings.TrimSuffix(v, "M"), 64)
				if err != nil {
					t.Fatalf("job %s: gres/gpumem %q", id, v)
				}
				jobs[id].gpuMemMiB = mib
			}
			continue
		}
		j := &dumpJob{state: rec[col["State"]], submit: epoch(rec[col["Submit"]]), start: epoch(rec[col["Start"]]),
			end: epoch(rec[col["End"]]), gpuMemMiB: -1}
		for _, tres := range strings.Split(rec[col["AllocTRES"]], ",") {
			if k, v, ok := strings.Cut(tres, "="); ok && strings.HasPrefix(k, "gres/gpu:") {
				j.gpuType = strings.TrimPrefix(k, "gres/gpu:")
				j.gpus, _ = strconv.Atoi(v)
			}
		}
		jobs[id] = j
	}
	if err := sc.Err(); err != nil {
		t.Fatal(err)
	}
	return jobs
}

// The plain flow on a public trace of real GPU jobs (Alibaba's, the FGD
// paper's): collect files every job of the dump with its times, its
// profile, its GPUs and its memory figure; report accounts for every job
// that ended in the period and says where each went, judged or not and
// why, never moving a job to a slice with less memory than it was granted.
func TestOpenBTrace(t *testing.T) {
	site, err := catalog.Builtin("wulver")
	if err != nil {
		t.Fatal(err)
	}
	if *openBCSV != "" {
		regenerateOpenB(t, openBConverter(t, site))
	}
	dump := readOpenBDump(t)
	isolate(t)
	db := t.TempDir() + "/site.db"
	t.Setenv("MIGADVISOR_DB", db)
	out := mustRunCLI(t, "collect", "--sacct-file", openBDump, "--cluster", site.Name, "--json")
	var sum collect.Summary
	if err := json.Unmarshal([]byte(out), &sum); err != nil || sum.New != len(dump) || sum.Read != len(dump) || len(sum.Skipped) != 0 {
		t.Fatalf("collect of %d jobs: %v %+v", len(dump), err, sum)
	}

	st, err := history.Open(t.Context(), db)
	if err != nil {
		t.Fatal(err)
	}
	recs, err := st.History(t.Context(), history.HistoryFilter{})
	st.Close()
	if err != nil {
		t.Fatal(err)
	}
	if len(recs) != len(dump) {
		t.Errorf("the history holds %d jobs, the dump %d", len(recs), len(dump))
	}
	same := func(p *time.Time, want time.Time) bool { return p == nil && want.IsZero() || p != nil && p.Equal(want) }
	for _, r := range recs {
		d := dump[r.JobID]
		if d == nil {
			t.Errorf("job %s is in the history, not in the dump", r.JobID)
			continue
		}
		p, ok := site.ProfileForType(d.gpuType)
		if !ok || p.Slice != catalog.FullGPU {
			t.Fatalf("job %s: GPU type %q is not the site's whole GPU", r.JobID, d.gpuType)
		}
		mem := r.AcctGPUMemMiB
		if r.Cluster != site.Name || r.State != d.state || !same(r.Submit, d.submit) || !same(r.Start, d.start) || !same(r.End, d.end) ||
			r.Profile != p.Name || r.GPUType != d.gpuType || r.GPUCount != int64(d.gpus) ||
			(mem == nil) != (d.gpuMemMiB < 0) || mem != nil && *mem != d.gpuMemMiB {
			t.Errorf("job %s in the history: %s %s %v %v %v %s %s×%d gres/gpumem %v\nthe dump's: %+v",
				r.JobID, r.Cluster, r.State, r.Submit, r.Start, r.End, r.Profile, r.GPUType, r.GPUCount, mem, *d)
		}
	}

	// Every job that ended: the last ends on the trace's last day.
	from, until := openBEpoch.AddDate(0, 0, openBFromDay), openBEpoch.AddDate(0, 0, 152)
	ended, whole := 0, 0
	for _, d := range dump {
		if !d.end.IsZero() && !d.end.Before(from) && d.end.Before(until) {
			ended++
			if d.gpuMemMiB < 0 {
				whole++
			}
		}
	}
	out = mustRunCLI(t, "report", "--json", "--since", from.Format(time.DateOnly), "--until", until.Format(time.DateOnly))
	var rep struct {
		Total struct {
			Jobs    int `json:"jobs"`
			Smaller int `json:"smaller_jobs"`
			Larger  int `json:"larger_jobs"`
			OOM     int `json:"oom_jobs"`
		} `json:"total"`
		Scripts []struct {
			User        string   `json:"user"`
			Name        string   `json:"job_name"`
			JobIDs      []string `json:"job_ids"`
			Recommended string   `json:"recommended"`
		} `json:"scripts"`
		Below struct {
			Jobs int `json:"jobs"`
		} `json:"below_thresholds"`
		Unjudged []struct {
			Reason   string   `json:"reason"`
			Jobs     int      `json:"jobs"`
			Examples []string `json:"examples"`
		} `json:"unjudged"`
		Measurements struct {
			Jobs int `json:"jobs"`
		} `json:"measurements"`
	}
	if err := json.Unmarshal([]byte(out), &rep); err != nil {
		t.Fatalf("report --json: %v\n%s", err, out)
	}
	if rep.Total.Jobs != ended {
		t.Errorf("report counts %d jobs; %d of the dump's ended in the period", rep.Total.Jobs, ended)
	}
	unjudged := 0
	var why strings.Builder
	for _, u := range rep.Unjudged {
		unjudged += u.Jobs
		fmt.Fprintf(&why, "\n  %4d %s", u.Jobs, u.Reason)
		for _, e := range u.Examples {
			fmt.Fprintf(&why, "\n       e.g. %s", e)
		}
		// A share's grant is a GPU memory figure: only whole-GPU jobs lack one.
		if strings.HasPrefix(u.Reason, "no GPU memory figure") && u.Jobs > whole {
			t.Errorf("%d jobs unjudged for want of a memory figure; only %d whole-GPU jobs have none", u.Jobs, whole)
		}
	}
	rightSized := rep.Total.Jobs - rep.Total.Smaller - rep.Total.Larger - rep.Total.OOM - unjudged - rep.Measurements.Jobs
	if rightSized < 0 || rep.Total.Jobs-unjudged <= 0 {
		t.Errorf("report: %d jobs, %d smaller, %d larger, %d OOM, %d unjudged, %d measurements: none judged, or more than all",
			rep.Total.Jobs, rep.Total.Smaller, rep.Total.Larger, rep.Total.OOM, unjudged, rep.Measurements.Jobs)
	}
	moved := map[string]int{}
	for _, s := range rep.Scripts {
		p, err := site.LookupProfile(s.Recommended)
		if err != nil {
			t.Fatalf("script %s %s: %v", s.User, s.Name, err)
		}
		for _, id := range s.JobIDs {
			d := dump[id]
			if d == nil || d.gpuMemMiB < 0 || d.gpuMemMiB > p.UsableMemory.MiB() {
				t.Errorf("job %s (%+v) moved to %s, %s usable: below what it was granted", id, d, p.Name, p.UsableMemory)
			}
			moved[p.Name]++
		}
	}
	t.Logf("%d GPU jobs of the trace ended in %s – %s: %d to a smaller slice (listed: %v; %d more under min_su_saved), %d to a larger, "+
		"%d out of memory, %d right-sized, %d measurements, %d not judged:%s",
		rep.Total.Jobs, from.Format(time.DateOnly), until.Format(time.DateOnly), rep.Total.Smaller, moved, rep.Below.Jobs, rep.Total.Larger,
		rep.Total.OOM, rightSized, rep.Measurements.Jobs, unjudged, why.String())
	planTrace(t, site, from, until, rep.Total.Jobs, rep.Total.Smaller+rep.Total.Larger+rep.Below.Jobs, unjudged)
}

// planTrace plans the trace's two weeks on 16 whole GPUs of 8 to a node,
// which its jobs keep busy: every job the report counts is in the demand
// (or said to be left out), sized as the report sized it, and whatever
// the plan shows holds every job at no more SU; with the report moving
// next to nothing (no share pod of the trace ever completed: no runtime
// to scale), the plan says its demand is what the jobs asked for, and why.
func planTrace(t *testing.T, site *catalog.Site, from, until time.Time, jobs, moved, unjudged int) {
	t.Helper()
	out := mustRunCLI(t, "plan", "--json", "--gpus", "16", "--gpus-per-node", "8", "--since", from.Format(time.DateOnly), "--until", until.Format(time.DateOnly))
	var p struct {
		Demand struct {
			Jobs, Moved, Kept int
			Unknown           int            `json:"unknown_fit"`
			Whole             int            `json:"multi_gpu"`
			Left              map[string]int `json:"left_out"`
		} `json:"demand"`
		Current  planOutcome   `json:"current"`
		Proposed *planOutcome  `json:"proposed"`
		Others   []planOutcome `json:"others"`
	}
	if err := json.Unmarshal([]byte(out), &p); err != nil {
		t.Fatalf("plan --json: %v\n%s", err, out)
	}
	d := p.Demand
	left := 0
	for _, n := range d.Left {
		left += n
	}
	if d.Jobs+left != jobs || d.Moved != moved || d.Unknown > unjudged || d.Moved+d.Kept+d.Unknown+d.Whole != d.Jobs {
		t.Errorf("plan's demand %+v; the report: %d jobs, %d moved, %d not judged", d, jobs, moved, unjudged)
	}
	if p.Current.WaitP95S == 0 {
		t.Errorf("today's p95 wait is 0: 16 GPUs are meant to be busy with the trace")
	}
	for _, o := range append(p.Others, p.Current) {
		for i, g := range o.GPUs {
			if _, err := site.GPULayout(strings.Join(g, ",")); err != nil && strings.Join(g, ",") != catalog.WholeGPU {
				t.Errorf("GPU %d cut %v: %v", i, g, err)
			}
		}
	}
	if o := p.Proposed; o != nil && (o.WaitP95S > p.Current.WaitP95S || o.SU > p.Current.SU || o.Unplaced > p.Current.Unplaced) {
		t.Errorf("proposed %v: p95 %ds, %g SU; today p95 %ds, %g SU", o.GPUs, o.WaitP95S, o.SU, p.Current.WaitP95S, p.Current.SU)
	}
	text := mustRunCLI(t, "plan", "--gpus", "16", "--gpus-per-node", "8", "--since", from.Format(time.DateOnly), "--until", until.Format(time.DateOnly))
	if d.Unknown*5 >= d.Jobs && !strings.Contains(text, "because their fit is unknown") {
		t.Errorf("plan does not say why most jobs keep what they asked:\n%s", text)
	}
	t.Logf("plan on the trace:\n%s", text)
}

// regenerateOpenB rewrites the fixture from the trace's CSV.
func regenerateOpenB(t *testing.T, o sacctgen.OpenB) {
	t.Helper()
	in, err := os.Open(*openBCSV)
	if err != nil {
		t.Fatal(err)
	}
	defer in.Close()
	var b strings.Builder
	c, err := o.Convert(in, &b)
	if err != nil {
		t.Fatalf("convert %s: %v", *openBCSV, err)
	}
	if err := atomicfile.Write(openBDump, []byte(b.String()), 0o644); err != nil {
		t.Fatal(err)
	}
	t.Logf("wrote %s (%d bytes): %+v", openBDump, b.Len(), c)
}
