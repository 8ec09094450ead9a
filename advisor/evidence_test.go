package advisor

import (
	"testing"

	"github.com/migadvisor/migadvisor/advisor/history"
	"github.com/migadvisor/migadvisor/internal/testutil"
)

// A job of the history is priced for what it was allocated, as long as it
// ran; without its figures, or on a GPU the site does not know, it has no
// price rather than a wrong one.
func TestRecordCharge(t *testing.T) {
	site := testutil.Wulver(t)
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
