package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/migadvisor/migadvisor/slurm/sacctgen"
)

// The plain flow: a later dump of the same jobs without their TRES fields
// and State (a narrower sacct -o) keeps the GPU and the state the history
// holds of them, and counts them unchanged.
func TestCollectOfANarrowerDumpKeepsTheJobsGPUAndState(t *testing.T) {
	isolate(t)
	t.Setenv("MIGADVISOR_DB", filepath.Join(t.TempDir(), "history.db"))
	const full = "../../testdata/sacct/devcluster-22.05.psv"
	if _, errOut, code := migadvisor(t, "collect", "--sacct-file", full); code != 0 {
		t.Fatalf("collect of the full dump: exit %d: %s", code, errOut)
	}
	dump, err := os.ReadFile(full)
	if err != nil {
		t.Fatal(err)
	}
	narrow := filepath.Join(t.TempDir(), "narrow.psv")
	fields := sacctgen.WithoutFields(string(dump), "AllocTRES", "ReqTRES", "TRESUsageInMax", "State")
	if err := os.WriteFile(narrow, []byte(fields), 0o644); err != nil {
		t.Fatal(err)
	}
	out, errOut, code := migadvisor(t, "collect", "--sacct-file", narrow)
	if code != 0 || !strings.Contains(out, "14 jobs: 0 new, 0 updated, 14 unchanged") {
		t.Fatalf("collect of the narrower dump: exit %d:\n%s%s", code, out, errOut)
	}
	job := historyJobs(t)["1"]
	if job.GPUType != "a100_10g" || job.Profile == nil || *job.Profile != "1g.10gb" || job.State != "OUT_OF_MEMORY" {
		t.Errorf("job 1 after the narrower dump: GPU %q, profile %v, state %q", job.GPUType, job.Profile, job.State)
	}
}
