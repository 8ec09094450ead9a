package session

import (
	"encoding/json"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/migadvisor/migadvisor/advisor/base/history"
	"github.com/migadvisor/migadvisor/catalog"
)

const jupyter = "sys/dashboard/sys/jupyter"

func wulver(t *testing.T) *catalog.Site {
	t.Helper()
	site, err := catalog.Builtin("wulver")
	if err != nil {
		t.Fatal(err)
	}
	return site
}

func mib(v float64) *float64 { return &v }

// sessions are n ended sessions of jupyter on profile, newest first, each
// of 1 CPU and 4 GiB held for two hours until its time limit, edited by
// each edit (given the session's index, 0 the newest).
func sessions(n int, profile string, edits ...func(int, *history.JobRecord)) []history.JobRecord {
	var out []history.JobRecord
	t0 := time.Date(2026, 11, 20, 9, 0, 0, 0, time.UTC)
	for i := range n {
		cpus, held := int64(1), int64(7200)
		submit := t0.Add(-time.Duration(i) * 24 * time.Hour)
		start := submit.Add(time.Minute)
		r := history.JobRecord{Cluster: "wulver", Key: fmt.Sprint(900 - i), JobID: fmt.Sprint(900 - i), Name: jupyter, User: "alice",
			Partition: "gpu", State: "TIMEOUT", Submit: &submit, Start: &start, ElapsedS: &held, CPUs: &cpus, ReqMemMiB: mib(4096),
			GPUType: "a100", GPUCount: 1, Profile: profile}
		for _, e := range edits {
			e(i, &r)
		}
		out = append(out, r)
	}
	return out
}

func monitorPeak(v float64) func(int, *history.JobRecord) {
	return func(_ int, r *history.JobRecord) { r.MonitorPeakMiB = mib(v) }
}

// Each figure proves what it proves, by advisor/base/memory's rules for
// scripts: a monitor's peak is the need, a caching framework's a ceiling,
// a peak sampled every 30 s counts as seen (the share of a slice kept free
// is its margin, as for any peak), an OOM raises the bound above what the
// slice had.
func TestJudgeWeighsEachFigureAsScriptsAre(t *testing.T) {
	torch := func(_ int, r *history.JobRecord) { r.Versions = map[string]string{"torch": "2.5"} }
	for _, c := range []struct {
		name        string
		recs        []history.JobRecord
		recommended string
		need        string
		risks       string // per profile, smallest first
		help        string
	}{
		{"a monitor's peak is the need", sessions(5, "full", monitorPeak(2.9*1024)), "1g.10gb", "2.9 GiB", "low low low low",
			"your last 5 sessions peaked at 2.9 GiB: 1g.10gb is enough, 3 SU/h instead of 17"},
		{"PyTorch's peak on a whole GPU is a ceiling", sessions(3, "full", monitorPeak(70*1024), torch), "full", "≤ 70.0 GiB",
			"unknown unknown unknown low", "your last 3 sessions peaked at 70.0 GiB: full, what you ask for, is the smallest that fits (17 SU/h)"},
		{"a small ceiling still fits a slice", sessions(2, "full", monitorPeak(2.9*1024), torch), "1g.10gb", "≤ 2.9 GiB",
			"low low low low", "your last 2 sessions peaked at 2.9 GiB: 1g.10gb is enough, 3 SU/h instead of 17"},
		// 8.5 of 1g.10gb's 9.5 GiB is 89%: above the 80% kept below it.
		{"jobstats' sampled peak counts once", sessions(2, "full", func(_ int, r *history.JobRecord) { r.JobstatsPeakMiB = mib(8.5 * 1024) }),
			"2g.20gb", "8.5 GiB", "medium low low low", "your last 2 sessions peaked at 8.5 GiB: 2g.20gb is enough, 5 SU/h instead of 17"},
		{"sacct's gres/gpumem", sessions(1, "3g.40gb", func(_ int, r *history.JobRecord) { r.AcctGPUMemMiB = mib(3000) }),
			"1g.10gb", "2.9 GiB", "low low low low", "your last session peaked at 2.9 GiB: 1g.10gb is enough, 3 SU/h instead of 9"},
		{"an OOM raises the bound", sessions(3, "1g.10gb", monitorPeak(6*1024), func(i int, r *history.JobRecord) {
			if i == 0 {
				r.State, r.GPUOOM, r.GPUNeedMiB, r.MonitorPeakMiB = "FAILED", "pytorch", mib(10.3*1024), mib(9.4*1024)
			}
		}), "2g.20gb", "≥ 10.3 GiB", "high low low low",
			"your last 3 sessions peaked at 9.4 GiB, and 1 ran out of GPU memory: ask for 2g.20gb, as 1g.10gb is a high OOM risk (5 SU/h instead of 3)"},
		{"some sessions unmeasured", sessions(4, "full", func(i int, r *history.JobRecord) {
			if i%2 == 1 {
				r.MonitorPeakMiB = mib(1536)
			}
		}), "1g.10gb", "1.5 GiB", "low low low low", "2 of your last 4 sessions were measured: they peaked at 1.5 GiB: 1g.10gb is enough, 3 SU/h instead of 17"},
	} {
		t.Run(c.name, func(t *testing.T) {
			a := Judge(Request{Name: jupyter, User: "alice", Site: wulver(t)}, c.recs)
			var risks []string
			for _, p := range a.Profiles {
				risks = append(risks, p.OOMRisk)
			}
			if a.Recommended != c.recommended || a.Need != c.need || strings.Join(risks, " ") != c.risks || a.Help != c.help || a.Why != "" {
				t.Errorf("recommended %q, need %q, risks %v, why %q\nhelp %q\nwant %q, %q, %s\nhelp %q", a.Recommended, a.Need, risks, a.Why, a.Help,
					c.recommended, c.need, c.risks, c.help)
			}
		})
	}
}

// What an hour of a session costs, by Wulver's formula: max(CPUs, GB/4) +
// 16 × GPU GB / 80, so 2 SU/h of GPU on 1g.10gb and 16 on a whole A100,
// the CPUs and memory as the newest session asked.
func TestPricedPerHourHeld(t *testing.T) {
	recs := sessions(2, "full", monitorPeak(1024), func(i int, r *history.JobRecord) {
		cpus := int64(4)
		r.CPUs, r.ReqMemMiB = &cpus, mib(32*1024) // 32 GB / 4 = 8 CPUs' worth
		if i == 1 {
			one := int64(1)
			r.CPUs = &one // an older session's request is not the one priced
		}
	})
	a := Judge(Request{Name: jupyter, User: "alice", Site: wulver(t)}, recs)
	want := map[string]float64{"1g.10gb": 8 + 2, "2g.20gb": 8 + 4, "3g.40gb": 8 + 8, "full": 8 + 16}
	for _, p := range a.Profiles {
		if p.SUPerHour != want[p.Profile] {
			t.Errorf("%s: %v SU/h, want %v", p.Profile, p.SUPerHour, want[p.Profile])
		}
	}
	if a.AskedSUPerHour == nil || *a.AskedSUPerHour != 24 || a.SUPerHour == nil || *a.SUPerHour != 10 || a.CPUs != 4 || a.GRES != "gpu:a100_10g:1" ||
		a.AskedGRES != "gpu:a100:1" {
		t.Errorf("asked %v SU/h, recommended %v SU/h, %d CPUs, gres %q (asked %q)", a.AskedSUPerHour, a.SUPerHour, a.CPUs, a.GRES, a.AskedGRES)
	}
	if !strings.Contains(a.Pricing, "per hour") || !strings.Contains(a.Pricing, "not per unit of work") {
		t.Errorf("pricing: %s", a.Pricing)
	}
	free := sessions(1, "1g.10gb", monitorPeak(1024), func(_ int, r *history.JobRecord) { r.Partition, r.QOS = "debug_gpu", "debug" })
	if a := Judge(Request{Name: jupyter, User: "alice", Site: wulver(t)}, free); *a.AskedSUPerHour != 0 {
		t.Errorf("a session on debug_gpu costs %v SU/h", *a.AskedSUPerHour)
	}
}

// Nothing to weigh is said in one sentence, and the answer stays whole.
func TestJudgeSaysWhyNothingIsRecommended(t *testing.T) {
	script := func(_ int, r *history.JobRecord) { r.Fingerprint, r.Script = "f00d", "/home/alice/train.sh" }
	running := func(_ int, r *history.JobRecord) { r.State = "RUNNING" }
	for _, c := range []struct {
		name     string
		recs     []history.JobRecord
		sessions int
		why      string
	}{
		{"no session", nil, 0, "no ended session named sys/dashboard/sys/jupyter of user alice in the histories read: 'migadvisor collect --since 30d'"},
		{"a script's jobs are no sessions", sessions(2, "full", monitorPeak(1024), script), 0, "no ended session named"},
		{"a running session has not ended", sessions(1, "full", monitorPeak(1024), running), 0, "no ended session named"},
		{"no memory figure", sessions(3, "full"), 3, "none of your last 3 sessions named sys/dashboard/sys/jupyter has a GPU memory figure"},
		{"no GPU", sessions(2, "", func(_ int, r *history.JobRecord) { r.GPUCount, r.GPUType = 0, "" }), 0,
			"your 2 sessions named sys/dashboard/sys/jupyter asked for no GPU of a profile site wulver knows"},
		{"several GPUs", sessions(1, "full", func(_ int, r *history.JobRecord) { r.GPUCount = 2 }), 0, "(or for several GPUs, which no MIG slice serves)"},
	} {
		t.Run(c.name, func(t *testing.T) {
			a := Judge(Request{Name: jupyter, User: "alice", Site: wulver(t)}, c.recs)
			if a.Recommended != "" || a.Help != "" || a.Sessions != c.sessions || !strings.Contains(a.Why, c.why) || strings.Contains(a.Why, "\n") {
				t.Errorf("recommended %q, help %q, %d sessions, why %q; want %d sessions, why %q", a.Recommended, a.Help, a.Sessions, a.Why, c.sessions, c.why)
			}
			data, err := json.Marshal(a)
			if err != nil || !strings.Contains(string(data), `"profiles":[`) || !strings.Contains(string(data), `"su_per_hour":null`) {
				t.Errorf("JSON %v: %s", err, data)
			}
		})
	}
}

// An OnDemand session linked through the script slurmdbd stored (a
// site-wide collect --scripts links each one) is a session still; the
// newest Last are weighed.
func TestJudgeKeepsOnDemandJobsLinkedFromSlurmdbd(t *testing.T) {
	linked := func(_ int, r *history.JobRecord) { r.Fingerprint, r.Script = "beef", "sacct:wulver:900" }
	recs := sessions(12, "full", monitorPeak(1024), linked)
	a := Judge(Request{Name: jupyter, User: "alice", Site: wulver(t), Last: 10}, recs)
	if a.Sessions != 10 || a.Found != 12 || a.Recommended != "1g.10gb" || len(a.Past) != 10 || a.Past[0].JobID != "900" {
		t.Errorf("%d of %d sessions, recommended %q, past %+v", a.Sessions, a.Found, a.Recommended, a.Past)
	}
	interactive := sessions(2, "full", monitorPeak(1024), linked, func(_ int, r *history.JobRecord) { r.Name = "interactive" })
	if a := Judge(Request{Name: "interactive", User: "alice", Site: wulver(t)}, interactive); a.Found != 0 {
		t.Errorf("a batch job linked to a script counted as a session: %+v", a)
	}
}

// The JSON names are an interface (Open OnDemand's form reads them).
func TestAdviceJSONNames(t *testing.T) {
	a := Judge(Request{Name: jupyter, User: "alice", Site: wulver(t)}, sessions(5, "full", monitorPeak(2.9*1024)))
	data, _ := json.Marshal(a)
	var got map[string]any
	if err := json.Unmarshal(data, &got); err != nil {
		t.Fatal(err)
	}
	want := map[string]any{"session": jupyter, "sessions": 5.0, "with_memory": 5.0, "peak_gpu_mem_mib": 2.9 * 1024, "need": "2.9 GiB",
		"asked": "full", "asked_su_per_hour": 17.0, "recommended": "1g.10gb", "gres": "gpu:a100_10g:1", "su_per_hour": 3.0,
		"help": "your last 5 sessions peaked at 2.9 GiB: 1g.10gb is enough, 3 SU/h instead of 17", "why": ""}
	for k, v := range want {
		if got[k] != v {
			t.Errorf("%s: %v, want %v", k, got[k], v)
		}
	}
	profiles, _ := got["profiles"].([]any)
	if len(profiles) != 4 {
		t.Fatalf("profiles: %v", got["profiles"])
	}
	first, _ := profiles[0].(map[string]any)
	if first["profile"] != "1g.10gb" || first["oom_risk"] != "low" || first["su_per_hour"] != 3.0 {
		t.Errorf("profiles[0]: %v", first)
	}
}

// A profile the site's SU formula cannot price is said so in its row and
// never recommended: its 0 SU/h would read as free.
func TestAProfileThatCannotBePricedIsSaidAndNotRecommended(t *testing.T) {
	charge := chargeJob
	t.Cleanup(func() { chargeJob = charge })
	chargeJob = func(s *catalog.Site, j catalog.Job) (catalog.Charge, error) {
		if j.Profile != nil && j.Profile.Name == "1g.10gb" {
			return catalog.Charge{}, fmt.Errorf("no rate for %s", j.Profile.Name)
		}
		return charge(s, j)
	}
	a := Judge(Request{Name: jupyter, User: "alice", Site: wulver(t)}, sessions(5, "full", monitorPeak(2.9*1024)))
	if a.Recommended != "2g.20gb" || a.Profiles[0].Unpriced != "no price: the site's SU formula failed on 1g.10gb: no rate for 1g.10gb" {
		t.Errorf("recommended %s, 1g.10gb unpriced %q", a.Recommended, a.Profiles[0].Unpriced)
	}
	var text strings.Builder
	a.WriteText(&text)
	if !strings.Contains(text.String(), " 1g.10gb  low       ?     no price: the site's SU formula failed on 1g.10gb: no rate for 1g.10gb; ") {
		t.Errorf("the row does not say it:\n%s", text.String())
	}
}

// A session's reasons count sessions, and its peak reads as a figure of
// MiB. Seen in review: "the peak on full in 5 runs" of 5 sessions, and
// "peak_gpu_mem_mib": 3915.775999069214.
func TestASessionsWordsCountSessions(t *testing.T) {
	a := Judge(Request{Name: jupyter, User: "alice", Site: wulver(t)}, sessions(5, "full", monitorPeak(3915.775999069214)))
	for _, p := range a.Profiles {
		if strings.Contains(p.Reason, " run") {
			t.Errorf("%s: %q", p.Profile, p.Reason)
		}
	}
	if !strings.Contains(a.Profiles[0].Reason, "in 5 sessions") || a.PeakMiB == nil || *a.PeakMiB != 3915.8 {
		t.Errorf("reason %q, peak %v", a.Profiles[0].Reason, a.PeakMiB)
	}
}
