package bench

import (
	"testing"

	"github.com/migadvisor/migadvisor/advisor/base/outcome"
)

func TestJobStatusWhy(t *testing.T) {
	for _, c := range []struct {
		outcome, explanation, want string
	}{
		{"", "", "-"},
		{outcome.Completed, "completed in 5 min", "-"},
		{outcome.GPUOOM, "ran out of GPU memory on 1g.10gb", "ran out of GPU memory on 1g.10gb"},
	} {
		if got := (JobStatus{Outcome: c.outcome, Explanation: c.explanation}).Why(); got != c.want {
			t.Errorf("Why of %q = %q, want %q", c.outcome, got, c.want)
		}
	}
}
