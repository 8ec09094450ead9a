package sitereplay

import (
	"math"
	"os"
	"strconv"
	"testing"

	"github.com/migadvisor/migadvisor/catalog"
	"github.com/migadvisor/migadvisor/slurm"
)

func wulver(t *testing.T) *catalog.Site {
	t.Helper()
	site, err := catalog.Builtin("wulver")
	if err != nil {
		t.Fatal(err)
	}
	return site
}

// The month's evidence reads back as sacct's: every job once, with the
// state, elapsed time and GPU figures the truth says it had.
func TestMonthReadsBackAsSacct(t *testing.T) {
	m := Generate(Options{Seed: 7, GPUTRES: true})
	files, err := m.Write(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	f, err := os.Open(files.Dump)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	rd, err := slurm.NewSacctReader(f)
	if err != nil {
		t.Fatal(err)
	}
	byID := map[string]*Job{}
	for _, j := range m.Jobs {
		byID[strconv.Itoa(j.ID)] = j
	}
	n := 0
	for {
		a, err := rd.Next()
		if err != nil {
			break
		}
		n++
		j := byID[a.ID]
		if j == nil {
			t.Fatalf("sacct job %s is not the month's", a.ID)
		}
		if a.State != j.State || a.Elapsed.Seconds() != j.ElapsedS {
			t.Errorf("job %d: sacct says %s after %v, the truth %s after %gs", j.ID, a.State, a.Elapsed, j.State, j.ElapsedS)
		}
		if (j.SacctPeakGiB != nil) != (a.GPUMemMiB > 0) {
			t.Errorf("job %d: gres/gpumem %g MiB, the truth's %v", j.ID, a.GPUMemMiB, j.SacctPeakGiB)
		}
		if (j.JobstatsPeakGiB != nil) != (a.Jobstats != nil) {
			t.Errorf("job %d: jobstats summary %v, the truth's peak %v", j.ID, a.Jobstats != nil, j.JobstatsPeakGiB)
		}
	}
	if n != len(m.Jobs) {
		t.Errorf("sacct read %d jobs of the month's %d", n, len(m.Jobs))
	}
}

// Every class of the issue is in the month, each job's truth agrees with
// how it ran (a job that did not fit died of out-of-memory; one that
// fitted did not), and the months with and without Slurm's GPU figures hold
// the same jobs.
func TestMonthTruth(t *testing.T) {
	with, without := Generate(Options{Seed: 3, GPUTRES: true}), Generate(Options{Seed: 3})
	if len(with.Jobs) != len(without.Jobs) {
		t.Fatalf("%d jobs with gres/gpumem, %d without", len(with.Jobs), len(without.Jobs))
	}
	seen := map[string]bool{}
	for i, j := range with.Jobs {
		seen[j.Class] = true
		o := without.Jobs[i]
		if o.ID != j.ID || o.NeedGiB != j.NeedGiB || o.ElapsedS != j.ElapsedS || o.SacctPeakGiB != nil {
			t.Errorf("job %d differs between the months, or has gres/gpumem without it", j.ID)
		}
		if j.GPUs == 0 {
			continue
		}
		if fits := j.Fits(j.ProfileIndex()); fits == j.OOM {
			t.Errorf("job %d needs %g GiB on %s, and died of OOM: %v", j.ID, j.NeedGiB, j.Profile, j.OOM)
		}
		if j.Profile != "full" && j.SacctPeakGiB != nil {
			t.Errorf("job %d on a slice has gres/gpumem", j.ID)
		}
	}
	for c := range classes {
		if !seen[c] {
			t.Errorf("no job of class %s in the month", c)
		}
	}
	if !seen["cpu"] {
		t.Error("no CPU-only job in the month")
	}
}

// The score counts a move by the truth: a job sent where it does not fit is
// killed and wastes half its runtime there; one that fits saves its SU
// where it ran less its SU there, and a move that costs more counts
// against the advice.
func TestScore(t *testing.T) {
	site := wulver(t)
	qlora, matmul, small := classes["qlora"], classes["matmul"], classes["mnist"]
	jobs := []*Job{
		{ID: 1, Profile: "full", GPUs: 1, CPUs: 1, MemGB: 4, InPeriod: true, NeedGiB: 6, FullS: 3600, ratio: qlora.ratio},
		{ID: 2, Profile: "full", GPUs: 1, CPUs: 1, MemGB: 4, InPeriod: true, NeedGiB: 10.6, FullS: 7200, ratio: small.ratio},
		{ID: 3, Profile: "full", GPUs: 1, CPUs: 8, MemGB: 32, InPeriod: true, NeedGiB: 8, FullS: 3600, ratio: matmul.ratio},
		{ID: 4, Profile: "full", GPUs: 1, CPUs: 1, MemGB: 4, InPeriod: false, NeedGiB: 1, FullS: 3600, ratio: small.ratio},
	}
	sc := Scorer{Site: site, Month: &Month{Jobs: jobs}}
	got := sc.Score("x", map[int]string{1: "2g.20gb", 2: "1g.10gb", 3: "1g.10gb", 4: "1g.10gb"})
	// Job 1: 17 SU/h × 1 h on full against 5 SU/h × 2.082 h on 2g.20gb.
	// Job 3: 24 SU/h × 1 h against 10 SU/h × 7.396 h: a loss of 49.96.
	wantSaved := (17 - 5*2.082) + (24 - 10*7.396)
	// Job 2 dies on 1g.10gb: 3 SU/h for half of 2 h × 1.384.
	wantWasted := 3 * 7200 * 1.384 / 2 / 3600
	if got.Moved != 3 || got.Killed != 1 || math.Abs(got.Saved-wantSaved) > 0.01 || math.Abs(got.Wasted-wantWasted) > 0.01 {
		t.Errorf("score %+v, want 3 moved, 1 killed, %.2f saved, %.2f wasted", got, wantSaved, wantWasted)
	}
	allows, possible := sc.Allows()
	// Job 1 is cheapest on 2g.20gb, job 2 on 2g.20gb (it does not fit
	// 1g.10gb), job 3 nowhere but full; job 4 is not the month's.
	if len(allows) != 2 || possible.Jobs != 2 || allows[3] != 0 || allows[4] != 0 {
		t.Errorf("allows %v (%+v)", allows, possible)
	}
	cover := sc.Cover(map[int]string{1: "2g.20gb"}, []UserJob{{User: jobs[1].User, Name: jobs[1].Name}})
	if cover.Rest != allows[2] || cover.Covered != allows[2] {
		t.Errorf("cover %+v: the rest is job 2's %g, listed", cover, allows[2])
	}
	// Job 1 moved to 3g.40gb, where it fits but costs more than on
	// 2g.20gb: what is left of it is 2g.20gb's saving less 3g.40gb's.
	cover = sc.Cover(map[int]string{1: "3g.40gb"}, nil)
	onThree := 17 - 9*1.322
	if want := allows[1] - onThree + allows[2]; math.Abs(cover.Rest-want) > 1e-6 || cover.Covered != 0 {
		t.Errorf("cover %+v, want %g left, none covered", cover, want)
	}
}

// The rules read what the site keeps: a job with neither jobstats nor
// Slurm's GPU figures is no rule's; JDS's alert leaves jobs under an hour.
func TestRulesReadTheSitesEvidence(t *testing.T) {
	low, mem := 10.0, 4.0
	jobs := []*Job{
		{ID: 1, Profile: "full", GPUs: 1, CPUs: 1, MemGB: 4, InPeriod: true, ElapsedS: 7200, SacctPeakGiB: &mem, SacctUtil: &low},
		{ID: 2, Profile: "full", GPUs: 1, CPUs: 1, MemGB: 4, InPeriod: true, ElapsedS: 7200},
		{ID: 3, Profile: "full", GPUs: 1, CPUs: 1, MemGB: 4, InPeriod: true, ElapsedS: 1800, JobstatsPeakGiB: &mem, JobstatsUtil: &low},
		{ID: 4, Profile: "full", GPUs: 2, CPUs: 1, MemGB: 4, InPeriod: true, ElapsedS: 7200, SacctPeakGiB: &mem, SacctUtil: &low},
	}
	m := &Month{Jobs: jobs}
	jds := Rules[0].Advice(m)
	if len(jds) != 1 || jds[1] != "1g.10gb" {
		t.Errorf("JDS moves %v, want job 1 to 1g.10gb", jds)
	}
	if calc := Rules[1].Advice(m); len(calc) != 2 || calc[1] != "3g.40gb" || calc[3] != "3g.40gb" {
		t.Errorf("the MIG calculator moves %v, want jobs 1 and 3 to 3g.40gb", calc)
	}
}
