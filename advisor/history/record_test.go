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
}
