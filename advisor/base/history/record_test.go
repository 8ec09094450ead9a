package history

import "testing"

func TestRecordFiguresTheAdvisorAndTheCLIShare(t *testing.T) {
	monitor, sacct := 71.0, 40.0
	for _, c := range []struct {
		r    JobRecord
		util *float64
		hit  bool
	}{
		{JobRecord{State: "COMPLETED", MonitorUtil: "supported", MonitorUtilMean: &monitor, GPUUtil: &sacct}, &monitor, false},
		{JobRecord{State: "COMPLETED", MonitorUtil: "unsupported", GPUUtil: &sacct}, &sacct, false},
		{JobRecord{State: "TIMEOUT"}, nil, true},
		{JobRecord{State: "COMPLETED", TimeLimitHit: true}, nil, true},
	} {
		if got := c.r.GPUUtilizationPct(); got != c.util || c.r.ReachedTimeLimit() != c.hit {
			t.Errorf("%s %q: utilization %v, time limit %v", c.r.State, c.r.MonitorUtil, got, c.r.ReachedTimeLimit())
		}
	}
	// The memory utilization is the monitor's alone, where the device
	// reports utilization: accounting has none.
	mem := 23.0
	for _, c := range []struct {
		r   JobRecord
		mem *float64
	}{
		{JobRecord{MonitorUtil: "supported", MonitorUtilMean: &monitor, MonitorMemUtilMean: &mem}, &mem},
		{JobRecord{MonitorUtil: "supported", MonitorUtilMean: &monitor, GPUUtil: &sacct}, nil},
		{JobRecord{MonitorUtil: "error", MonitorMemUtilMean: &mem, GPUUtil: &sacct}, nil},
		{JobRecord{MonitorUtil: "unsupported", GPUUtil: &sacct}, nil},
	} {
		if got := c.r.GPUMemUtilizationPct(); got != c.mem {
			t.Errorf("%q: memory utilization %v, want %v", c.r.MonitorUtil, got, c.mem)
		}
	}
}
