package advisor

import (
	"testing"

	"github.com/migadvisor/migadvisor/advisor/base/history"
	"github.com/migadvisor/migadvisor/catalog"
	"github.com/migadvisor/migadvisor/catalog/catalogtest"
)

// A job of the history is priced for what it was allocated, as long as it
// ran; without its figures, or on a GPU the site does not know, it has no
// price rather than a wrong one.
func TestRecordCharge(t *testing.T) {
	site := catalogtest.Wulver(t)
	i64 := func(v int64) *int64 { return &v }
	mem := 4096.0
	rec := history.JobRecord{CPUs: i64(1), ElapsedS: i64(1800), ReqMemMiB: &mem, GPUCount: 1, Profile: "1g.10gb", Partition: "gpu"}
	if ch, ok := RecordCharge(site, &rec); !ok || ch.SU != 1.5 {
		t.Errorf("1g.10gb for 30 min: %+v %v, want 1.5 SU", ch, ok)
	}
	cpuOnly := rec
	cpuOnly.GPUCount, cpuOnly.Profile, cpuOnly.CPUs = 0, "", i64(8)
	if ch, ok := RecordCharge(site, &cpuOnly); !ok || ch.SU != 4 {
		t.Errorf("8 CPUs for 30 min: %+v %v, want 4 SU", ch, ok)
	}
	for name, r := range map[string]history.JobRecord{
		"no elapsed time": {CPUs: i64(1), GPUCount: 1, Profile: "1g.10gb"},
		"no CPUs":         {ElapsedS: i64(60), GPUCount: 1, Profile: "1g.10gb"},
		"unknown GPU":     {CPUs: i64(1), ElapsedS: i64(60), GPUCount: 1, Profile: "v100"},
		"untyped GPU":     {CPUs: i64(1), ElapsedS: i64(60), GPUCount: 1},
	} {
		if ch, ok := RecordCharge(site, &r); ok {
			t.Errorf("%s: priced %+v", name, ch)
		}
	}
}

// A run carries the monitor's memory (DRAM) utilization as it does the GPU
// utilization: the record's where the device reported it, else -1; a
// reference table's rows have none.
func TestRunCarriesMemoryUtilization(t *testing.T) {
	elapsed, gpu, mem := int64(600), 43.0, 21.0
	rec := history.JobRecord{JobID: "1", State: "COMPLETED", Profile: "1g.10gb", GPUCount: 1, ElapsedS: &elapsed,
		MonitorUtil: "supported", MonitorUtilMean: &gpu, MonitorMemUtilMean: &mem}
	if run, ok := RunFromRecord(&rec); !ok || run.Utilization != 43 || run.MemUtilization != 21 {
		t.Errorf("run %+v %v: utilization %v, memory %v; want 43 and 21", run, ok, run.Utilization, run.MemUtilization)
	}
	rec.MonitorUtil, rec.MonitorUtilMean, rec.MonitorMemUtilMean = "unsupported", nil, nil
	if run, ok := RunFromRecord(&rec); !ok || run.Utilization != -1 || run.MemUtilization != -1 {
		t.Errorf("A100 MIG run: utilization %v, memory %v; want -1", run.Utilization, run.MemUtilization)
	}
	for _, set := range catalog.BuiltinReferences() {
		for i := range set.Benchmarks {
			for _, run := range RunsFromBenchmark(&set.Benchmarks[i]) {
				if run.Utilization != -1 || run.MemUtilization != -1 {
					t.Errorf("%s: utilization %v, memory %v; want -1", run.JobID, run.Utilization, run.MemUtilization)
				}
			}
		}
	}
}

// No GPU is busy more than all of the time: a utilization above 100% (a
// summary's rounding, a sampler that overlapped) reads as a GPU always
// busy, not as no figure, so a compute-bound job is scaled as one.
func TestUtilizationAboveAllTheTimeIsAlwaysBusy(t *testing.T) {
	elapsed, util := int64(600), 104.5
	rec := history.JobRecord{JobID: "1", State: "COMPLETED", Profile: "full", GPUCount: 1, ElapsedS: &elapsed, JobstatsUtil: &util}
	if run, ok := RunFromRecord(&rec); !ok || run.Utilization != 100 {
		t.Errorf("run %+v %v: utilization %v, want 100", run, ok, run.Utilization)
	}
}
