package session

import (
	"encoding/json"
	"reflect"
	"strings"
	"testing"

	"github.com/migadvisor/migadvisor/advisor/base/history"
	"github.com/migadvisor/migadvisor/slurm"
)

// What an index keeps of the sessions, read back after a JSON round trip,
// is judged as the history's records are: the same advice, figure for
// figure, with no name, user, path or output text in it.
func TestKeptJudgesAsTheHistory(t *testing.T) {
	torch := func(_ int, r *history.JobRecord) { r.Versions = map[string]string{"torch": "2.5"} }
	private := func(_ int, r *history.JobRecord) {
		r.WorkDir, r.Account, r.OutputPath, r.GPUOOMText = "/home/alice/secret-dir", "secret-account", "/home/alice/secret.out", "secret text"
	}
	for name, recs := range map[string][]history.JobRecord{
		"monitor":  sessions(5, "full", monitorPeak(2.9*1024), private),
		"ceiling":  sessions(3, "full", monitorPeak(70*1024), torch),
		"jobstats": sessions(2, "full", func(_ int, r *history.JobRecord) { r.JobstatsPeakMiB = mib(8.5 * 1024) }),
		"sacct":    sessions(1, "3g.40gb", func(_ int, r *history.JobRecord) { r.AcctGPUMemMiB = mib(3000) }),
		"oom": sessions(3, "1g.10gb", monitorPeak(6*1024), func(i int, r *history.JobRecord) {
			if i == 0 {
				r.State, r.GPUOOM, r.GPUNeedMiB, r.MonitorPeakMiB = "FAILED", "pytorch", mib(10.3*1024), mib(9.4*1024)
			}
		}),
		"allocated": sessions(2, "full", func(_ int, r *history.JobRecord) {
			r.Metrics = map[string]float64{slurm.AllocatedMetric: 5000}
			r.Settings = map[string]string{"PYTORCH_CUDA_ALLOC_CONF": "expandable_segments:True"}
		}),
		"unmeasured": sessions(3, "full"),
		"never started": sessions(2, "full", monitorPeak(1024), func(_ int, r *history.JobRecord) {
			r.Start, r.State = nil, "CANCELLED"
		}),
	} {
		t.Run(name, func(t *testing.T) {
			kept, ok := Keep(recs)
			data, err := json.Marshal(kept)
			if !ok || err != nil {
				t.Fatalf("kept %v, %v", ok, err)
			}
			for _, secret := range []string{"alice", jupyter, "secret"} {
				if strings.Contains(string(data), secret) {
					t.Errorf("the index would hold %q: %s", secret, data)
				}
			}
			var back Kept
			if err := json.Unmarshal(data, &back); err != nil {
				t.Fatal(err)
			}
			req := Request{Name: jupyter, User: "alice", Site: wulver(t)}
			want, got := Judge(req, recs), Judge(req, back.Records("alice", jupyter))
			if !reflect.DeepEqual(got, want) {
				g, _ := json.Marshal(got)
				w, _ := json.Marshal(want)
				t.Errorf("kept:    %s\nhistory: %s", g, w)
			}
		})
	}
}

// An index keeps the newest DefaultLast sessions Judge can weigh: not a
// script's jobs, one still running, one of several GPUs or of no profile.
func TestKeepKeepsTheNewestSessions(t *testing.T) {
	recs := sessions(14, "full", monitorPeak(1024), func(i int, r *history.JobRecord) {
		switch i {
		case 0:
			r.State = "RUNNING"
		case 1:
			r.Fingerprint, r.Script = "f00d", "/home/alice/train.sh"
		case 2:
			r.GPUCount = 2
		case 3:
			r.Profile = ""
		}
	})
	kept, ok := Keep(recs)
	if !ok || len(kept.Sessions) != DefaultLast || kept.Sessions[0].JobID != "896" || kept.Sessions[DefaultLast-1].JobID != "887" {
		t.Errorf("kept %v: %+v", ok, kept.Sessions)
	}
	if _, ok := Keep(recs[:4]); ok {
		t.Error("kept jobs that are no sessions to weigh")
	}
}

// A session being asked for (salloc's, in the cli_filter) is priced and
// compared in place of the newest past one, and the line for its stderr
// names the sessions.
func TestAskingIsPricedAndNamed(t *testing.T) {
	recs := sessions(5, "full", monitorPeak(2.9*1024))
	for i := range recs {
		recs[i].Name = "jupyter"
	}
	req := Request{Name: "jupyter", User: "alice", Site: wulver(t), Asking: &Asking{Profile: "3g.40gb", Partition: "gpu", CPUs: 4, MemMiB: 16 * 1024}}
	a := Judge(req, recs)
	want := "your last 5 sessions named jupyter peaked at 2.9 GiB: 1g.10gb is enough, 6 SU/h instead of 12"
	if a.Asked != "3g.40gb" || a.CPUs != 4 || *a.AskedSUPerHour != 12 || *a.SUPerHour != 6 || a.NamedLine(wulver(t)) != want {
		t.Errorf("asked %s with %d CPUs, %v SU/h for %v; line %q, want %q", a.Asked, a.CPUs, *a.AskedSUPerHour, *a.SUPerHour, a.NamedLine(wulver(t)), want)
	}
	one := Judge(Request{Name: "jupyter", User: "alice", Site: wulver(t)}, recs[:1])
	if got := one.NamedLine(wulver(t)); !strings.HasPrefix(got, "your last session named jupyter peaked at 2.9 GiB: ") {
		t.Errorf("one session: %q", got)
	}
	if got := Judge(req, sessions(2, "full")).NamedLine(wulver(t)); got != "" {
		t.Errorf("nothing recommended: %q", got)
	}
}
