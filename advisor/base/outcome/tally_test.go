package outcome

import "testing"

func TestTallyCountsRunsByHowTheyEnded(t *testing.T) {
	for _, c := range []struct {
		tally Tally
		want  string
	}{
		{Tally{}, "-"},
		{Tally{Runs: 3, Completed: 2, GPUOOMs: 1}, "2 ok, 1 OOM"},
		{Tally{Runs: 5, Completed: 1, TimedOut: 1, HostOOM: 1, GPUOOMs: 1}, "1 ok, 1 OOM, 1 timeout, 1 host OOM, 1 failed"},
		{Tally{Runs: 2, Completed: 2, Emulated: true}, "2 ok (emulated)"},
		{Tally{Runs: 1}, "1 failed"},
	} {
		if got := c.tally.String(); got != c.want {
			t.Errorf("%+v: %q, want %q", c.tally, got, c.want)
		}
	}
}
