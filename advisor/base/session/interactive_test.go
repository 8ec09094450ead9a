package session

import (
	"testing"

	"github.com/migadvisor/migadvisor/advisor/base/history"
	"github.com/migadvisor/migadvisor/advisor/base/memory"
)

// The admins' report is told no session's name: a job is one by itself
// when it is a session by isSession's rule and named as OnDemand's apps,
// salloc and srun --pty name theirs; a job linked to a script its user
// submitted, or of another name, is a batch job.
func TestIsInteractiveByNameAndLink(t *testing.T) {
	for _, c := range []struct {
		name, fingerprint, script string
		want                      bool
	}{
		{jupyter, "", "", true},
		{jupyter, "beef", "sacct:wulver/900", true}, // the app's script, stored by slurmdbd
		{jupyter, "beef", "/home/alice/app.sh", false},
		{"interactive", "", "", true},
		{"bash", "", "", true},
		{"interactive", "beef", "/home/alice/interactive", false},
		{"interactive", "beef", "sacct:wulver/901", false}, // a batch job slurmdbd kept the script of
		{"train", "", "", false},                           // a batch job, or a session named with -J
	} {
		r := history.JobRecord{Name: c.name, Fingerprint: c.fingerprint, Script: c.script}
		if got := IsInteractive(&r); got != c.want {
			t.Errorf("%s linked to %q: interactive %v, want %v", c.name, c.script, got, c.want)
		}
	}
}

// GPUMemFigure is the figure the advice judged by: the need, else a
// framework's ceiling, with what held it; none without a figure.
func TestGPUMemFigure(t *testing.T) {
	torch := func(_ int, r *history.JobRecord) { r.Versions = map[string]string{"torch": "2.5"} }
	for _, c := range []struct {
		name      string
		recs      []history.JobRecord
		kind      string
		mib, seen float64
		software  string
	}{
		{"a monitor's peak", sessions(2, "full", monitorPeak(2900)), memory.NeedPeak, 2900, 2900, ""},
		{"PyTorch's peak", sessions(2, "full", monitorPeak(2900), torch), memory.NeedCeiling, 2900, 2900, "PyTorch"},
		{"jobstats' sampled peak", sessions(1, "full", func(_ int, r *history.JobRecord) { r.JobstatsPeakMiB = mib(1000) }),
			memory.NeedPeak, 1000, 1000, ""}, // one margin, the slice's free share: a sampled peak counts as seen
	} {
		fig, holder := Judge(Request{Name: jupyter, User: "alice", Site: wulver(t)}, c.recs).GPUMemFigure()
		if fig == nil || fig.Kind != c.kind || fig.MiB != c.mib || fig.SeenMiB != c.seen || holder.Software != c.software {
			t.Errorf("%s: %+v, held by %+v", c.name, fig, holder)
		}
	}
	if fig, _ := Judge(Request{Name: jupyter, User: "alice", Site: wulver(t)}, sessions(2, "full")).GPUMemFigure(); fig != nil {
		t.Errorf("sessions with no figure: %+v", fig)
	}
}
