package memory

import (
	"strings"
	"testing"

	"github.com/migadvisor/migadvisor/advisor/base/history"
)

// Usable memory of Wulver's A100 profiles, MiB.
const (
	u10 = 9.5 * 1024
	u20 = 19.5 * 1024
	u40 = 39.5 * 1024
	u80 = 79.3 * 1024
)

var ladder = []struct {
	name   string
	usable float64
}{{"1g.10gb", u10}, {"2g.20gb", u20}, {"3g.40gb", u40}, {"full", u80}}

func run(profile string, usable float64) Run {
	return Run{Profile: profile, UsableMiB: usable, NeedMiB: -1, PeakMiB: -1, AllocatedMiB: -1}
}

func risks(runs []Run) map[string]ProfileRisk {
	need := EstimateNeed(runs)
	out := map[string]ProfileRisk{}
	for _, p := range ladder {
		out[p.name] = OOMRisk(p.name, p.usable, runs, need, 0)
	}
	return out
}

func levels(r map[string]ProfileRisk) string {
	var out []string
	for _, p := range ladder {
		out = append(out, p.name+"="+r[p.name].Level)
	}
	return strings.Join(out, " ")
}

func TestOOMRiskScenarios(t *testing.T) {
	oom10 := run("1g.10gb", u10)
	oom10.GPUOOM, oom10.NeedMiB = true, 10.3*1024
	done20 := run("2g.20gb", u20)
	done20.Completed, done20.PeakMiB = true, 18.3*1024
	done40 := run("3g.40gb", u40)
	done40.Completed, done40.PeakMiB = true, 23.55*1024
	alloc40 := done40
	alloc40.AllocatedMiB = 5.68 * 1024
	peakOnly := run("full", u80)
	peakOnly.Completed, peakOnly.PeakMiB = false, 7.2*1024 // a run that failed for another reason
	tight := run("full", u80)
	tight.PeakMiB = 8.5 * 1024
	oomFull := run("full", u80)
	oomFull.GPUOOM = true

	cases := []struct {
		name string
		runs []Run
		want string
	}{
		{"no evidence at all", nil, "1g.10gb=unknown 2g.20gb=unknown 3g.40gb=unknown full=unknown"},
		// The OOM ladder: OOM on 10gb is high there; 20gb is judged by the OOM's lower bound.
		{"OOM on the smallest", []Run{oom10}, "1g.10gb=high 2g.20gb=low 3g.40gb=low full=low"},
		// Completed is evidence: fits on 20gb and anything bigger.
		{"completed on 20gb", []Run{oom10, done20}, "1g.10gb=high 2g.20gb=low 3g.40gb=low full=low"},
		// A peak measured only on 40gb is inflated by caching: 23.55 GB > 19.5 usable.
		{"inflated peak only", []Run{done40}, "1g.10gb=high 2g.20gb=high 3g.40gb=low full=low"},
		// With the allocated figure the same run says 10gb is fine.
		{"allocated preferred", []Run{alloc40}, "1g.10gb=low 2g.20gb=low 3g.40gb=low full=low"},
		// Margin: 7.2 of 9.5 GiB is 76% (low); 8.5 of 9.5 is 89% (medium).
		{"margin low", []Run{peakOnly}, "1g.10gb=low 2g.20gb=low 3g.40gb=low full=low"},
		{"margin medium", []Run{tight}, "1g.10gb=medium 2g.20gb=low 3g.40gb=low full=low"},
		// An OOM on the full GPU makes every smaller profile high too.
		{"OOM on the biggest", []Run{oomFull}, "1g.10gb=high 2g.20gb=high 3g.40gb=high full=high"},
	}
	for _, c := range cases {
		if got := levels(risks(c.runs)); got != c.want {
			t.Errorf("%s:\n got %s\nwant %s", c.name, got, c.want)
		}
	}
}

func TestOOMRiskReasonsAndShare(t *testing.T) {
	r := run("1g.10gb", u10)
	r.PeakMiB = 7 * 1024
	need := EstimateNeed([]Run{r, r})
	if need.Runs != 2 || need.Source != "peak on 1g.10gb" {
		t.Errorf("need %+v", need)
	}
	// 7/9.5 = 74%: low at the default 80%, medium at a site's stricter 70%.
	if got := OOMRisk("1g.10gb", u10, nil, need, 0.70); got.Level != RiskMedium || !strings.Contains(got.Reason, "2 runs") {
		t.Errorf("strict site: %+v", got)
	}
	if got := OOMRisk("1g.10gb", u10, nil, need, 0); got.Level != RiskLow {
		t.Errorf("default share: %+v", got)
	}
	oom := run("2g.20gb", u20)
	oom.GPUOOM = true
	if got := OOMRisk("1g.10gb", u10, []Run{oom}, need, 0); got.Level != RiskHigh || !strings.Contains(got.Reason, "on 2g.20gb") {
		t.Errorf("OOM on a bigger profile: %+v", got)
	}
}

// A run that ran out of memory peaked where it stopped: the need is the
// peak of the smallest profile where the job completed (or the OOM's own
// bound, when larger), not the stopped run's peak.
func TestAnOOMRunsPeakIsNotTheNeed(t *testing.T) {
	need := EstimateNeed([]Run{
		{Profile: "1g.10gb", UsableMiB: 9728, GPUOOM: true, NeedMiB: 9814, PeakMiB: 9558, AllocatedMiB: -1},
		{Profile: "2g.20gb", UsableMiB: 19968, Completed: true, NeedMiB: -1, PeakMiB: 14488, AllocatedMiB: -1},
	})
	if need.MiB != 14488 || need.Kind != NeedPeak || need.Profile != "2g.20gb" {
		t.Errorf("need %+v, want the 14488 MiB peak on 2g.20gb", need)
	}
	// An OOM whose message gives no size, or one below the profile's
	// memory, still needed more than the profile it did not fit (seen:
	// "needs at least 9.9 GiB, the OOM lower bound on full, more than any
	// profile has" of a job out of memory on the whole GPU).
	need = EstimateNeed([]Run{{Profile: "1g.10gb", UsableMiB: 9728, GPUOOM: true, NeedMiB: -1, PeakMiB: 9558, AllocatedMiB: -1}})
	if need.MiB != 9728 || need.Kind != NeedOOM {
		t.Errorf("need %+v, want the OOM bound of the 9728 MiB it did not fit", need)
	}
	need = EstimateNeed([]Run{{Profile: "full", UsableMiB: u80, GPUOOM: true, NeedMiB: 9.9 * 1024, PeakMiB: -1, AllocatedMiB: -1}})
	if need.MiB != u80 || need.Kind != NeedOOM || need.Profile != "full" {
		t.Errorf("need %+v, want the OOM bound of the whole GPU's %v MiB", need, u80)
	}
}

// A peak sampled every 30 s (jobstats, sacct's gres/gpumem) counts as
// seen: the share of the slice kept free (DefaultLowRiskShare) is its one
// margin, for a spike between samples as for the rest a peak misses, not
// a second one on top of it. A compiled solver whose sacct-sampled peak is
// 30.5 GiB fits a 39.5 GiB slice (77%); the need says which measured it.
func TestASampledPeakHasOneMargin(t *testing.T) {
	solver := Holder{Kind: HolderAllocates, Software: "GROMACS", Why: "line 7 runs gmx"}
	run := func(source string) Run {
		return Run{Profile: "full", UsableMiB: u80, Completed: true, NeedMiB: -1, PeakMiB: 30.5 * 1024, AllocatedMiB: -1, PeakSource: source, Holder: solver}
	}
	for source, want := range map[string]struct{ by, sampled string }{history.PeakMonitor: {MeasuredByMonitor, ""},
		history.PeakJobstats: {MeasuredByJobstats, "jobstats"}, history.PeakSacct: {MeasuredBySacct, "sacct's gres/gpumem"}} {
		runs := []Run{run(source)}
		n := EstimateNeed(runs)
		if n.MiB != 30.5*1024 || n.SeenMiB != n.MiB || n.By != want.by || (want.sampled != "" && !strings.Contains(n.Source, want.sampled+" sampled")) {
			t.Errorf("peak from %q: %+v", source, n)
		}
		if got := levels(risks(runs)); got != "1g.10gb=high 2g.20gb=high 3g.40gb=low full=low" {
			t.Errorf("peak from %q: %s", source, got)
		}
	}
}

// A ceiling is never above the GPU's own memory: an earlier version's
// margin, or NVML's count beside the site's usable figure, may put the
// figure past what the whole GPU has, where it bounds nothing.
func TestACeilingIsNeverAboveTheGPU(t *testing.T) {
	torch := Holder{Kind: HolderCaching, Software: "PyTorch", Why: "import torch"}
	earlier := Run{Profile: "full", UsableMiB: u80, DeviceMiB: u80, Completed: true, Earlier: true, NeedMiB: -1, PeakMiB: 70 * 1024, AllocatedMiB: -1, Holder: torch}
	nvml := Run{Profile: "full", UsableMiB: u80, DeviceMiB: u80, Completed: true, NeedMiB: -1, PeakMiB: 81400, AllocatedMiB: -1, Holder: torch}
	for name, r := range map[string]Run{"an earlier version's": earlier, "NVML's": nvml} {
		c := EstimateNeed([]Run{r}).Ceiling
		if c == nil || c.MiB != u80 || c.SeenMiB != r.PeakMiB {
			t.Errorf("%s: ceiling %+v, want the GPU's %v", name, c, u80)
		}
	}
	// Below the GPU's memory, an earlier version's ceiling keeps its margin.
	earlier.PeakMiB = 40 * 1024
	if c := EstimateNeed([]Run{earlier}).Ceiling; c == nil || c.MiB != 50*1024 {
		t.Errorf("ceiling %+v, want 50 GiB", c)
	}
}

// The peak of a Python program on the GPU with no compiled code in sight
// is a ceiling, not a need: Wulver's QLoRA job, 23.5 GB reserved on the
// whole GPU, is not ruled off the slices by it. What proves a need still
// does: an out-of-memory error, the job's own allocated peak.
func TestAnInterpretersPeakIsACeiling(t *testing.T) {
	python := Holder{Kind: HolderInterpreted, Software: "a Python framework", Why: "line 4 runs python"}
	full := run("full", u80)
	full.Completed, full.PeakMiB, full.Holder = true, 23.55*1024, python
	got := risks([]Run{full})
	if l := levels(got); l != "1g.10gb=unknown 2g.20gb=unknown 3g.40gb=low full=low" {
		t.Errorf("peak only: %s", l)
	}
	if r := got["2g.20gb"].Reason; !strings.Contains(r, "no need but a ceiling") || !strings.Contains(r, "a Python framework keeps memory beyond its need") {
		t.Errorf("2g.20gb's reason: %s", r)
	}
	oom := run("1g.10gb", u10)
	oom.GPUOOM, oom.NeedMiB, oom.Holder = true, 10.3*1024, python
	if l := levels(risks([]Run{full, oom})); l != "1g.10gb=high 2g.20gb=low 3g.40gb=low full=low" {
		t.Errorf("with an OOM on 1g.10gb: %s", l)
	}
	alloc := full
	alloc.AllocatedMiB = 5.68 * 1024
	if l := levels(risks([]Run{alloc})); l != "1g.10gb=low 2g.20gb=low 3g.40gb=low full=low" {
		t.Errorf("with its allocated peak: %s", l)
	}
}
