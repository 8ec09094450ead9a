package advisor

import (
	"math"
	"strings"
	"testing"

	"github.com/migadvisor/migadvisor/advisor/base/history"
	"github.com/migadvisor/migadvisor/advisor/base/memory"
	"github.com/migadvisor/migadvisor/catalog"
	"github.com/migadvisor/migadvisor/catalog/catalogtest"
	"github.com/migadvisor/migadvisor/slurm"
)

func (r Run) emulatedOn(gpu string) Run { r.Emulated, r.Swept = gpu, true; return r }

// Emulated runs judge whether the job fits a profile; their times count
// only when they ran on the site's GPU; a profile's own runs win over them;
// the advice says which profiles were emulated, and on what.
func TestEmulatedRuns(t *testing.T) {
	h100 := "NVIDIA H100 80GB HBM3"
	runs := []Run{
		newRun("1g.10gb", 0).oom(14000).emulatedOn(h100),
		newRun("2g.20gb", 300).peak(14500).emulatedOn(h100),
		newRun("full", 100).peak(14500).emulatedOn(h100),
	}
	rec := recommend(t, "", runs, Options{})
	small, mid := profileOf(t, rec, "1g.10gb"), profileOf(t, rec, "2g.20gb")
	if small.OOMRisk != memory.RiskHigh || small.Emulated != h100 || mid.OOMRisk == memory.RiskHigh || mid.Completed != 1 {
		t.Errorf("fit: 1g.10gb %s (%s), 2g.20gb %s", small.OOMRisk, small.Emulated, mid.OOMRisk)
	}
	if mid.RuntimeSource == BasisMeasured {
		t.Errorf("an H100's time was taken for the A100's: %+v", mid)
	}
	if !strings.Contains(strings.Join(rec.Notes, "\n"), "1g.10gb, 2g.20gb and full emulated on "+h100) {
		t.Errorf("notes: %q", rec.Notes)
	}

	// On the site's own GPU model the times count.
	a100 := "NVIDIA A100-SXM4-80GB"
	rec = recommend(t, "", []Run{newRun("2g.20gb", 300).peak(14500).emulatedOn(a100)}, Options{})
	if p := profileOf(t, rec, "2g.20gb"); p.RuntimeS == nil || *p.RuntimeS != 300 {
		t.Errorf("the A100's own emulated time: %+v", p)
	}

	// A profile's own run wins over its emulated ones.
	rec = recommend(t, "", []Run{newRun("2g.20gb", 400).peak(14500), newRun("2g.20gb", 300).oom(20000).emulatedOn(h100)}, Options{})
	if p := profileOf(t, rec, "2g.20gb"); p.Runs != 1 || p.GPUOOMs != 0 || p.Emulated != "" {
		t.Errorf("measured and emulated: %+v", p)
	}
}

// An emulation that could not use MPS ran the job once, as it is: that is
// the job's own run on the GPU it asked for, with its output's evidence
// (the run's, not the job's, whose output holds emulate's lines); a run
// the job's end cut short is no result.
func TestAPlainRunIsTheJobsOwn(t *testing.T) {
	elapsed := int64(600)
	rec := &history.JobRecord{Cluster: "c", Key: "9", JobID: "9", State: "COMPLETED", Profile: "full", GPUCount: 1, ElapsedS: &elapsed,
		Emulated: []history.EmulatedRun{{Profile: slurm.PlainProfile, Outcome: slurm.EmulatedCompleted, Seconds: 590,
			Evidence: slurm.OutputEvidence{Work: 7, WorkUnit: "steps", GPUPeakMiB: 2048}}}}
	runs := RunsFromRecord(rec)
	if len(runs) != 1 || runs[0].Profile != "full" || runs[0].JobID != "9" || runs[0].Emulated != "" || runs[0].Seconds != 590 ||
		runs[0].Work != 7 || runs[0].PeakMiB != 2048 {
		t.Errorf("%+v", runs)
	}
	rec.Emulated = []history.EmulatedRun{{Profile: "1g.10gb", GPU: "NVIDIA H100 80GB HBM3", Outcome: slurm.EmulatedFailed},
		{Profile: "2g.20gb", GPU: "NVIDIA H100 80GB HBM3", Outcome: slurm.EmulatedCancelled}}
	if runs := RunsFromRecord(rec); len(runs) != 1 || runs[0].Profile != "1g.10gb" || runs[0].JobID != "9/1g.10gb" || runs[0].Completed {
		t.Errorf("%+v", runs)
	}
}

// Only a run that says how the job went beats emulated ones: a job
// cancelled before it started on 2g.20gb leaves 2g.20gb's emulated run.
func TestAnUninformativeRunDoesNotWin(t *testing.T) {
	cancelled := newRun("2g.20gb", 0)
	cancelled.Completed, cancelled.State = false, "CANCELLED"
	rec := recommend(t, "", []Run{cancelled, newRun("2g.20gb", 300).peak(14500).emulatedOn("NVIDIA H100 80GB HBM3")}, Options{})
	if p := profileOf(t, rec, "2g.20gb"); p.Completed != 1 || p.Emulated == "" {
		t.Errorf("%+v", p)
	}
}

// An emulated slice measured at more of the GPU than the slice has (MPS
// leaves it the whole memory system) is not the slice: a job whose times
// follow the measured bandwidth is predicted at the slices' bandwidth, and
// one whose times follow the SMs keeps its emulated times. Wulver's A100
// slices: 1g 14/108 of the SMs and 1/8 of the bandwidth, 2g 28/108 and
// 2/8, 3g 42/108 and 4/8.
func TestMeasuredSharesScaleEmulatedTimes(t *testing.T) {
	a100 := "NVIDIA A100-SXM4-80GB"
	at := func(r Run, sm, bw float64) Run {
		r = r.emulatedOn(a100)
		r.RanAt = &catalog.Shares{SM: sm, Bandwidth: bw}
		return r
	}
	whole := newRun("full", 100).peak(2000).emulatedOn(a100)
	whole.EmulatedWhole = true
	ran := [][2]float64{{0.13, 0.40}, {0.26, 0.72}, {0.39, 0.89}}
	profiles := []string{"1g.10gb", "2g.20gb", "3g.40gb"}
	var streaming, computing []Run
	for i, p := range profiles {
		streaming = append(streaming, at(newRun(p, 100/ran[i][1]).peak(2000), ran[i][0], ran[i][1]))
		computing = append(computing, at(newRun(p, 100/ran[i][0]).peak(2000), ran[i][0], ran[i][0]))
	}
	rec := recommend(t, "", append(streaming, whole), Options{})
	for i, p := range profiles {
		got := profileOf(t, rec, p)
		want := 100 / ([]float64{0.125, 0.25, 0.5}[i]) // the slice's bandwidth
		if got.RuntimeS == nil || got.RuntimeSource != BasisPredicted || math.Abs(*got.RuntimeS-want) > 0.05*want {
			t.Errorf("bandwidth-bound %s: %v s (%s), want about %.0f (emulated %.0f)", p, deref(got.RuntimeS, -1), got.RuntimeSource, want, 100/ran[i][1])
		}
	}
	if notes := strings.Join(rec.Notes, "\n"); !strings.Contains(notes, "1g.10gb 13% of the SMs and 40% of the bandwidth (the slice: 13% and 12%)") {
		t.Errorf("notes: %s", notes)
	}
	// The SM-bound job ran at its slices' SMs: its times are theirs.
	rec = recommend(t, "", append(computing, whole), Options{})
	if got := profileOf(t, rec, "1g.10gb"); got.RuntimeS == nil || math.Abs(*got.RuntimeS-100/0.13) > 0.05*100/0.13 {
		t.Errorf("SM-bound 1g.10gb: %v s (%s)", deref(got.RuntimeS, -1), got.RuntimeSource)
	}
}

// On emulated slices bandwidth grows with the SMs and levels off, so a job
// with a fixed part on the SMs fits "bound by bandwidth" there: Wulver's
// CIFAR-10 deep CNN emulated on the H100 (testdata/nvml/h100-emulate-
// workloads/deepcnn: seconds per 100,000 samples at the shares each
// emulated slice was measured to have) would be predicted 4× slower on 1g
// than on 3g, where Wulver measured 1.86×. Its memory utilization says SMs
// (busy 4-8% of the time beside 14-43%): recommend weighs only those
// explanations and predicts the real slices from them.
func TestEmulatedTimesAreExplainedByWhatTheJobWaitsOn(t *testing.T) {
	a100 := "NVIDIA A100-SXM4-80GB"
	ran := []struct {
		profile       string
		sm, bw, rate  float64
		util, memUtil float64
	}{
		{"1g.10gb", 16.0 / 132, 1127 / 2956.0, 9849.3, 43, 4},
		{"2g.20gb", 34.0 / 132, 2122.1 / 2956, 15764.4, 28, 7},
		{"3g.40gb", 50.0 / 132, 2619.2 / 2956, 18883.3, 26, 8},
	}
	whole := newRun("full", 1e5/21628.2).peak(2000).emulatedOn(a100)
	whole.EmulatedWhole = true
	runs := []Run{whole}
	for _, r := range ran {
		run := newRun(r.profile, 1e5/r.rate).peak(2000).emulatedOn(a100)
		run.RanAt = &catalog.Shares{SM: r.sm, Bandwidth: r.bw}
		run.Utilization, run.MemUtilization = r.util, r.memUtil
		runs = append(runs, run)
	}
	rec := recommend(t, "", runs, Options{})
	small, mid := profileOf(t, rec, "1g.10gb"), profileOf(t, rec, "3g.40gb")
	if small.RuntimeS == nil || mid.RuntimeS == nil {
		t.Fatalf("no runtimes: %+v %+v", small, mid)
	}
	if ratio := *small.RuntimeS / *mid.RuntimeS; math.Abs(ratio/1.86-1) > 0.1 || !strings.Contains(rec.RuntimeWhy, "SMs") {
		t.Errorf("1g.10gb %.2f× as long as 3g.40gb, Wulver measured 1.86× (%s)", ratio, rec.RuntimeWhy)
	}
}

// An emulation on another GPU says how the job scales, not how long it
// takes here: with one profile measured on the site's GPU, the others are
// predicted from it as the emulation scaled; without one, nothing is
// predicted. Here an SM-bound job with a fixed fifth of its time on the
// H100: the A100's SMs do 1/3.4 of the H100's work, so its GPU part is
// longer and the fixed part a smaller share of it on the A100 (1g.10gb
// about 7.3× the full GPU's time; the fixed fifth carried over as a share
// would say 6.4×, no fixed part 7.7×).
func TestAnEmulationElsewhereShapesTheSitesTimes(t *testing.T) {
	h100 := "NVIDIA H100 80GB HBM3"
	scaled := func(sm float64) float64 { return 0.2 + 0.8/sm }
	busyPct := func(sm float64) float64 { return 100 * (0.8 / sm) / scaled(sm) } // the GPU idle in the fixed part
	emulated := []Run{}
	for _, r := range []struct {
		profile string
		sm, bw  float64
	}{{"1g.10gb", 16.0 / 132, 0.38}, {"2g.20gb", 34.0 / 132, 0.72}, {"3g.40gb", 50.0 / 132, 0.89}} {
		run := newRun(r.profile, 50*scaled(r.sm)).peak(2000).emulatedOn(h100) // an H100: twice as fast
		run.RanAt = &catalog.Shares{SM: r.sm, Bandwidth: r.bw}
		run.Utilization, run.MemUtilization = busyPct(r.sm), 10
		emulated = append(emulated, run)
	}
	whole := newRun("full", 50).peak(2000).emulatedOn(h100)
	whole.EmulatedWhole, whole.Utilization, whole.MemUtilization = true, busyPct(1), 10
	emulated = append(emulated, whole)
	rec := recommend(t, "", emulated, Options{})
	if p := profileOf(t, rec, "3g.40gb"); p.RuntimeS != nil {
		t.Errorf("a runtime with nothing measured here: %v", *p.RuntimeS)
	}
	rec = recommend(t, "", append(emulated, newRun("full", 100).peak(2000)), Options{})
	site := catalogtest.Wulver(t)
	k := (132 * 1980 * 128.0) / (108 * 1410 * 64) // the H100's SM work over the A100's
	onA100 := func(sm float64) float64 { return 0.2 + 0.8*k/sm }
	for _, name := range []string{"1g.10gb", "2g.20gb", "3g.40gb"} {
		p, _ := site.Profile(name)
		want := 100 * onA100(site.Shares(p).SM) / onA100(1)
		if got := profileOf(t, rec, name); got.RuntimeS == nil || math.Abs(*got.RuntimeS-want) > 0.03*want {
			t.Errorf("%s: %v s, want about %.0f (%s)", name, deref(got.RuntimeS, -1), want, rec.RuntimeWhy)
		}
	}
	if !strings.Contains(rec.RuntimeWhy, "as the job's emulation on "+h100+" scaled (1g.10gb, 2g.20gb, 3g.40gb and full), from its time measured on full") {
		t.Errorf("why: %s", rec.RuntimeWhy)
	}
}

// An emulation on the site's own GPU, of a job fed by its CPU: the whole
// GPU's run counts as measured, its slices as emulated, and all of them
// report the GPU's utilization, so the times are explained by the busy
// time (60 s idle beside 19 s of the whole GPU's time), and 2g.20gb, not
// emulated, is predicted from it.
func TestAnEmulationOnTheSitesGPUIsExplainedByItsBusyTime(t *testing.T) {
	a100 := "NVIDIA A100-SXM4-80GB"
	site := catalogtest.Wulver(t)
	const idle, gpu = 60.0, 19.0
	noise := map[string]float64{"1g.10gb": 1, "3g.40gb": 1.1, "full": 1.2}
	var runs []Run
	for _, p := range site.Profiles {
		if noise[p.Name] == 0 {
			continue
		}
		sh := site.Shares(&p)
		busy := gpu / sh.SM
		run := newRun(p.Name, (idle+busy)*noise[p.Name]).peak(2000).emulatedOn(a100)
		run.Utilization, run.MemUtilization = 100*busy/run.Seconds, 2
		if p.Name == "full" {
			run.EmulatedWhole = true
		} else {
			run.RanAt = &sh
		}
		runs = append(runs, run)
	}
	rec := recommend(t, "", runs, Options{})
	want := idle + gpu/site.Shares(mustProfile(t, site, "2g.20gb")).SM
	if got := profileOf(t, rec, "2g.20gb"); got.RuntimeS == nil || math.Abs(*got.RuntimeS/want-1) > 0.12 ||
		!strings.Contains(rec.RuntimeWhy, "in the emulation the GPU was busy") {
		t.Errorf("2g.20gb %v s, want about %.0f (%s)", deref(got.RuntimeS, -1), want, rec.RuntimeWhy)
	}
}

func mustProfile(t *testing.T, site *catalog.Site, name string) *catalog.Profile {
	t.Helper()
	p, ok := site.Profile(name)
	if !ok {
		t.Fatalf("no profile %s", name)
	}
	return p
}
