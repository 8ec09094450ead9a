package report

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"testing"
	"time"

	"github.com/migadvisor/migadvisor/advisor/base/history"
	"github.com/migadvisor/migadvisor/catalog"
	"github.com/migadvisor/migadvisor/slurm"
)

const h200Fixtures = "../../../testdata/joboutput/h200"

// The PyTorch workloads ran on a real H200 (testdata/joboutput/h200): their
// output and the monitor's summary, collected as a full-GPU job, give the
// full-GPU row of each table, with the figures the job printed.
func TestRealH200RunsGiveTheFullGPURow(t *testing.T) {
	site, err := catalog.LoadFile("../../../examples/sites/h200.toml")
	if err != nil {
		t.Fatal(err)
	}
	full, _ := site.Profile("full")
	for i, name := range []string{"pytorch_mnist_simplecnn", "pytorch_cifar10_deepcnn", "pytorch_cifar10_resnet"} {
		t.Run(name, func(t *testing.T) {
			ev, err := slurm.ScanFile(filepath.Join(h200Fixtures, name+".out"), slurm.ScanOptions{})
			if err != nil {
				t.Fatal(err)
			}
			elapsed := summaryDuration(t, filepath.Join(h200Fixtures, name+".json"))
			recs := collectedAsFull(t, site, full, strconv.Itoa(900+i), name, elapsed, ev)
			rep, err := Build(site, Workload{Tag: name, Table: "pytorch"}, recs)
			if err != nil {
				t.Fatal(err)
			}
			rows, err := rep.Table()
			if err != nil || len(rows) != 2 {
				t.Fatalf("table %q, %v", rows, err)
			}
			train, acc := ev.Metrics[MetricTrainingTime], ev.Metrics[MetricAccuracy]
			rate := 1 + 48.0 // one CPU and 4G: max(1, 4/8); the whole GPU: 48 x 141/141
			want := []string{"H200_141GB", fmt.Sprintf("%.2f", train), fmt.Sprintf("%.2f", acc),
				fmt.Sprintf("%.3f", ev.Metrics["peak_allocated_mib"]*(1<<20)/1e9), "49",
				fmt.Sprintf("%.3f", rate*train/3600), fmt.Sprintf("%.5f", rate*train/3600/acc)}
			for j := range want {
				if rows[1][j] != want[j] {
					t.Errorf("%s: %s\n got %q\nwant %q", rows[0][j], name, rows[1], want)
					break
				}
			}
			if ev.Versions["device"] != "NVIDIA H200" || ev.GPUPeakMiB <= ev.Metrics["peak_allocated_mib"] || ev.GPUSource != "line" {
				t.Errorf("the run's evidence: %+v", ev)
			}
		})
	}
}

func summaryDuration(t *testing.T, file string) time.Duration {
	t.Helper()
	b, err := os.ReadFile(file)
	if err != nil {
		t.Fatal(err)
	}
	// The fields of the monitor's summary (bench/monitor.Summary) this needs.
	var s struct{ Started, Ended time.Time }
	if err := json.Unmarshal(b, &s); err != nil {
		t.Fatal(err)
	}
	return s.Ended.Sub(s.Started).Round(time.Second)
}

// collectedAsFull stores the run as collect would: a completed full-GPU job
// with its output's evidence, tagged with the workload.
func collectedAsFull(t *testing.T, site *catalog.Site, full *catalog.Profile, id, tag string, elapsed time.Duration,
	ev *slurm.OutputEvidence) []history.JobRecord {
	t.Helper()
	end := time.Date(2026, 11, 21, 4, 33, 0, 0, time.UTC)
	job := &slurm.AcctJob{Key: id, ID: id, ArrayJob: id, Cluster: "h200", State: "COMPLETED", Submit: end.Add(-elapsed),
		Start: end.Add(-elapsed), End: end, Elapsed: elapsed, Nodes: 1, CPUs: 1, ReqMemMiB: 4096, MaxRSSMiB: slurm.Unknown,
		GPUType: full.GRESType, GPUCount: 1, GPUMemMiB: slurm.Unknown, GPUUtil: slurm.Unknown, HasJobLine: true}
	sub := history.Submission{Cluster: "h200", JobID: id, Fingerprint: "fp", Source: "/b/" + tag + ".sh",
		Script: "/b/" + tag + ".sh", Workload: tag, Submitted: end.Add(-elapsed)}
	recs := storeRuns(t, site, []*slurm.AcctJob{job}, []history.Submission{sub}, map[string]*slurm.OutputEvidence{id: ev}, tag)
	if len(recs) != 1 {
		t.Fatalf("history %+v", recs)
	}
	return recs
}
