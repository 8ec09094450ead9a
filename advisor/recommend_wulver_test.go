package advisor

import (
	"context"
	"fmt"
	"io"
	"math"
	"path/filepath"
	"testing"
	"time"

	"github.com/migadvisor/migadvisor/catalog/catalogtest"

	"github.com/migadvisor/migadvisor/advisor/base/history"
	"github.com/migadvisor/migadvisor/advisor/base/memory"
	"github.com/migadvisor/migadvisor/catalog"
	"github.com/migadvisor/migadvisor/slurm"
)

// wulverHistory stores one job per row of a published Wulver table, linked to
// one script, the way collect would have stored them: accounting (profile,
// elapsed, CPUs, memory), the monitor's peak, the framework's allocated peak,
// work done, and a GPU OOM message for an OOM row. It returns the script's runs
// as read back from the database.
func wulverHistory(t *testing.T, site *catalog.Site, b *catalog.Benchmark) []Run {
	t.Helper()
	ctx := context.Background()
	st, err := history.Open(ctx, filepath.Join(t.TempDir(), "history.db"))
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	fingerprint := "sha256:" + b.Name
	var jobs []*slurm.AcctJob
	var subs []history.Submission
	submit := time.Date(2025, 8, 14, 9, 0, 0, 0, time.UTC)
	for i, row := range b.Rows {
		p, _ := site.Profile(row.Profile)
		id := fmt.Sprint(500100 + i)
		seconds := max(row.Seconds, 60) // an OOM row has no time: say it died after a minute
		state := "COMPLETED"
		if row.OOM {
			state = "FAILED"
		}
		start := submit.Add(time.Duration(i+1) * time.Minute)
		jobs = append(jobs, &slurm.AcctJob{Key: id, ID: id, ArrayJob: id, Cluster: "wulver", User: "ab12", Partition: "gpu",
			QOS: "standard", Name: b.Name, State: state, Submit: submit, Start: start,
			End: start.Add(time.Duration(seconds * float64(time.Second))), Elapsed: time.Duration(math.Round(seconds)) * time.Second, // sacct's whole seconds
			Nodes: 1, CPUs: b.CPUs, ReqMemMiB: b.Memory.MiB(), MaxRSSMiB: slurm.Unknown, GPUType: p.GRESType, GPUCount: 1,
			GPUMemMiB: slurm.Unknown, GPUUtil: slurm.Unknown, HasJobLine: true})
		subs = append(subs, history.Submission{Cluster: "wulver", JobID: id, Fingerprint: fingerprint, Source: "/home/ab12/" + b.Name + ".sh",
			Script: "/home/ab12/" + b.Name + ".sh", Profile: row.Profile, Submitted: submit})
	}
	next := 0
	_, err = st.ImportJobs(ctx, func() (*slurm.AcctJob, error) {
		if next == len(jobs) {
			return nil, io.EOF
		}
		next++
		return jobs[next-1], nil
	}, history.ImportOptions{Cluster: "wulver", Profile: func(gpuType string, n int) string {
		p, _ := site.ProfileForType(gpuType)
		return p.Name
	}})
	if err != nil {
		t.Fatal(err)
	}
	if err := st.RecordSubmissions(ctx, subs); err != nil {
		t.Fatal(err)
	}
	for i, row := range b.Rows {
		ev := &slurm.OutputEvidence{Work: row.Work, WorkUnit: b.WorkUnit, GPUPeakMiB: row.PeakMiB, GPUUsedPeakMiB: row.PeakMiB,
			GPUTotalMiB: slurm.Unknown, GPUUtilMean: slurm.Unknown, GPUUtilMax: slurm.Unknown}
		if row.Work >= 0 {
			ev.WorkSource = "MIGADVISOR_WORK"
		}
		if row.PeakMiB >= 0 {
			ev.GPUSource = "summary"
		}
		if row.AllocatedMiB >= 0 {
			ev.Metrics = map[string]float64{slurm.AllocatedMetric: row.AllocatedMiB}
		}
		if row.OOM {
			ev.GPUOOM = &slurm.OOMEvent{Kind: slurm.OOMGPU, Source: "pytorch", Line: 40, NeedMiB: slurm.Unknown,
				Text: "torch.OutOfMemoryError: CUDA out of memory."}
		}
		if err := st.RecordOutput(ctx, "wulver", fmt.Sprint(500100+i), "/home/ab12/out.txt", 100, submit, ev); err != nil {
			t.Fatal(err)
		}
	}
	recs, err := st.History(ctx, history.HistoryFilter{Fingerprint: fingerprint})
	if err != nil {
		t.Fatal(err)
	}
	var runs []Run
	for i := range recs {
		if r, ok := RunFromRecord(&recs[i]); ok {
			runs = append(runs, r)
		}
	}
	if len(runs) != len(b.Rows) {
		t.Fatalf("%s: %d runs read back, want %d", b.Name, len(runs), len(b.Rows))
	}
	return runs
}

// scriptResources is what the benchmark's job script asked for.
func scriptResources(t *testing.T, b *catalog.Benchmark, extra string) slurm.Resources {
	t.Helper()
	text := fmt.Sprintf("#!/bin/bash\n#SBATCH --partition=gpu\n#SBATCH --gres=gpu:a100:1\n#SBATCH --ntasks=1\n#SBATCH --cpus-per-task=%d\n#SBATCH --mem=%dM\n%s\nsrun true\n",
		b.CPUs, int(b.Memory.MiB()), extra)
	return slurm.Parse("job.sh", []byte(text)).Resources
}

func TestRecommendFromWulverHistories(t *testing.T) {
	site := catalogtest.Wulver(t)
	set, _ := catalog.ReferenceFor(site)
	for name, want := range map[string]string{
		"gromacs_performance":     "2g.20gb", // by SU per ns
		"llm-finetuning":          "2g.20gb", // by SU per 1M tokens
		"pytorch_mnist_simplecnn": "1g.10gb",
		"pytorch_cifar10_deepcnn": "1g.10gb",
		"pytorch_cifar10_resnet":  "1g.10gb",
		"llm-finetuning@a5945c9":  "2g.20gb", // 1g.10gb ran out of memory
	} {
		t.Run(name, func(t *testing.T) {
			b, _ := set.Benchmark(name)
			runs := wulverHistory(t, site, b)
			rec, err := Recommend(site, Job{Script: "job.sh", Resources: scriptResources(t, b, ""), Runs: runs}, Options{})
			if err != nil {
				t.Fatal(err)
			}
			if rec.Recommended == nil || *rec.Recommended != want {
				t.Fatalf("recommended %v, want %s: %s\n%+v", rec.Recommended, want, rec.Reason, rec.Profiles)
			}
			if rec.Basis != BasisMeasured {
				t.Errorf("basis %s, want measured", rec.Basis)
			}
			if b.WorkUnit != "" && (rec.Profiles[0].SUPerWork == nil || rec.Profiles[0].WorkUnit != b.WorkUnit) {
				t.Errorf("no SU per %s: %+v", b.WorkUnit, rec.Profiles[0])
			}
		})
	}
}

// The published SU per work on each profile comes out of the history again.
func TestRecommendReproducesPublishedSUPerWork(t *testing.T) {
	site := catalogtest.Wulver(t)
	set, _ := catalog.ReferenceFor(site)
	gmx, _ := set.Benchmark("gromacs_performance")
	rec, err := Recommend(site, Job{Resources: scriptResources(t, gmx, ""), Runs: wulverHistory(t, site, gmx)}, Options{})
	if err != nil {
		t.Fatal(err)
	}
	published := map[string]float64{"1g.10gb": 3.327171904, "2g.20gb": 2.364386429, "3g.40gb": 2.493355381, "full": 4.047558816}
	for _, pa := range rec.Profiles {
		// Printed to three significant digits: within half a unit of the last.
		if pa.SUPerWork == nil || abs(*pa.SUPerWork/published[pa.Profile]-1) > 0.005 || pa.WorkUnit != "ns" {
			t.Errorf("%s: SU per ns %v, published %.4f", pa.Profile, deref(pa.SUPerWork, -1), published[pa.Profile])
		}
	}
}

func TestOldLLMHistoryNeverYields1g10gb(t *testing.T) {
	site := catalogtest.Wulver(t)
	set, _ := catalog.ReferenceFor(site)
	old, _ := set.Benchmark("llm-finetuning@a5945c9")
	runs := wulverHistory(t, site, old)
	for _, opt := range []Options{{}, {Objective: ObjectiveTime}, {Objective: ObjectiveTurnaround}, {SUTolerance: 0.9}, {LowRiskShare: 0.94}} {
		rec, err := Recommend(site, Job{Resources: scriptResources(t, old, ""), Runs: runs}, opt)
		if err != nil {
			t.Fatal(err)
		}
		if rec.Recommended != nil && *rec.Recommended == "1g.10gb" {
			t.Errorf("options %+v: recommended 1g.10gb after an OOM there", opt)
		}
		if pa := rec.Profiles[0]; pa.Profile != "1g.10gb" || pa.OOMRisk != memory.RiskHigh || !pa.OOMObserved || pa.Eligible {
			t.Errorf("1g.10gb judged %+v", pa)
		}
	}
}

func abs(x float64) float64 {
	if x < 0 {
		return -x
	}
	return x
}
