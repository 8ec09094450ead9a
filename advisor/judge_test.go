package advisor

import (
	"fmt"
	"strings"
	"testing"

	"github.com/migadvisor/migadvisor/advisor/base/memory"
	"github.com/migadvisor/migadvisor/catalog"
	"github.com/migadvisor/migadvisor/catalog/catalogtest"
	"github.com/migadvisor/migadvisor/slurm"
)

// evidenceOf is what prepare makes of job.sh with directives and runs: the
// input of judge, decide and change alone.
func evidenceOf(t *testing.T, site *catalog.Site, directives string, runs []Run, prior *catalog.Benchmark) (Job, evidence) {
	t.Helper()
	s := slurm.Parse("job.sh", []byte(script+directives+"srun ./train\n"))
	job := Job{Script: "job.sh", Resources: s.Resources, Runs: runs, Prior: prior}
	base, err := site.JobFor(job.Resources)
	if err != nil {
		t.Fatal(err)
	}
	use, _ := gpuUse(job)
	ev, _ := prepare(site, job, base, selectRuns(site, job, use), use)
	return job, ev
}

func onTwo(r Run) Run { r.GPUs = 2; return r }

// judge weighs one profile on the evidence alone: its OOM risk, its
// runtime and the bounds on it, its price, whether it can run the job,
// and so whether it may be recommended.
func TestJudgeOneProfile(t *testing.T) {
	site := catalogtest.Wulver(t)
	set, _ := catalog.ReferenceFor(site)
	gmx, _ := set.Benchmark("gromacs_performance")
	for _, c := range []struct {
		name, directives string
		runs             []Run
		prior            *catalog.Benchmark
		profile          string
		unpriced         bool
		// what the advice must say
		eligible                  bool
		risk, reason, limit, note string
		atLeast, past, noFigures  bool
		runtime                   float64 // 0: not checked
	}{
		{name: "high risk after an OOM", runs: []Run{newRun("1g.10gb", 60).oom(12000), newRun("full", 600).peak(30000)}, profile: "1g.10gb",
			risk: memory.RiskHigh, reason: "high OOM risk: "},
		{name: "medium risk near the slice's memory", runs: []Run{newRun("full", 3600).peak(8704)}, profile: "1g.10gb",
			risk: memory.RiskMedium, reason: "medium OOM risk: needs 8.5 GiB of 9.5 GiB usable"},
		{name: "unknown risk without a memory figure", runs: []Run{newRun("full", 600)}, profile: "1g.10gb",
			risk: memory.RiskUnknown, reason: "OOM risk unknown: "},
		{name: "low risk and a predicted runtime", runs: []Run{newRun("full", 3600).peak(3072)}, profile: "1g.10gb",
			eligible: true, risk: memory.RiskLow, reason: "low OOM risk: needs 3.0 GiB"},
		{name: "measured", runs: []Run{newRun("2g.20gb", 1000).peak(3072), newRun("2g.20gb", 1100).peak(3072)}, profile: "2g.20gb",
			eligible: true, risk: memory.RiskLow, reason: "low OOM risk: completed here in 2 runs", runtime: 1050},
		{name: "a --time too short", directives: "#SBATCH --time=01:10:00\n", runs: []Run{newRun("full", 3600).peak(2048)}, profile: "1g.10gb",
			eligible: true, risk: memory.RiskLow, reason: "low OOM risk; needs --time=09:20:00, the script asks for 01:10:00", limit: "09:20:00"},
		{name: "a time limit bounds it", directives: "#SBATCH --time=15:00\n", runs: []Run{newRun("1g.10gb", 900).peak(1024).timeout()}, profile: "1g.10gb",
			risk: memory.RiskLow, reason: "ran past its time limit here after 00:15:00, so its runtime is at least that", atLeast: true, limit: "00:30:00", runtime: 900},
		{name: "a bigger profile's limit bounds it", directives: "#SBATCH --time=1:00:00\n",
			runs:    []Run{newRun("full", 1200).peak(1024).util(10), newRun("2g.20gb", 3600).peak(1024).util(10).timeout()},
			profile: "1g.10gb", risk: memory.RiskLow, reason: "ran past its time limit on 2g.20gb, a bigger profile, after 01:00:00", atLeast: true, limit: "02:55:00"},
		{name: "beyond the partition's limit", runs: []Run{newRun("full", 65*3600).peak(2048)}, profile: "1g.10gb",
			risk: memory.RiskLow, reason: "predicted to run", past: true},
		{name: "ran to the partition's limit", directives: "#SBATCH --time=3-00:00:00\n", runs: []Run{newRun("1g.10gb", 72*3600).peak(2048).timeout()}, profile: "1g.10gb",
			risk: memory.RiskLow, reason: "ran past its time limit here after 3-00:00:00", atLeast: true, past: true},
		{name: "unpriced", runs: []Run{newRun("full", 3600).peak(3072)}, profile: "1g.10gb", unpriced: true, risk: memory.RiskLow,
			reason: "no price: the site's SU formula failed on 1g.10gb: no rate", note: "1g.10gb has no price (the site's SU formula failed: no rate), so it is not recommended"},
		{name: "excluded for a multi-GPU job", directives: "#SBATCH --gres=gpu:a100:2\n", runs: []Run{newRun("full", 600).peak(2048)}, profile: "2g.20gb",
			risk: memory.RiskNone, reason: "a MIG slice cannot serve a job of 2 GPUs", noFigures: true},
		{name: "a multi-GPU job on whole GPUs", directives: "#SBATCH --gres=gpu:a100:2\n", runs: []Run{onTwo(newRun("full", 600).peak(2048))}, profile: "full",
			eligible: true, risk: memory.RiskLow, runtime: 600},
		{name: "a prior's judgement says so", prior: gmx, profile: "2g.20gb", eligible: true, risk: memory.RiskLow, reason: "low OOM risk: in the reference benchmark, "},
	} {
		t.Run(c.name, func(t *testing.T) {
			if c.unpriced {
				charge := chargeJob
				t.Cleanup(func() { chargeJob = charge })
				chargeJob = func(s *catalog.Site, j catalog.Job) (catalog.Charge, error) {
					if j.Profile.Name == c.profile {
						return catalog.Charge{}, fmt.Errorf("no rate")
					}
					return charge(s, j)
				}
			}
			job, ev := evidenceOf(t, site, c.directives, c.runs, c.prior)
			pa, note := judge(site, ev, job, Options{}.withDefaults(site), mustProfile(t, site, c.profile))
			if pa.Eligible != c.eligible || pa.OOMRisk != c.risk || !strings.HasPrefix(pa.Reason, c.reason) {
				t.Errorf("eligible %v, risk %s, reason %q; want %v, %s, %q…", pa.Eligible, pa.OOMRisk, pa.Reason, c.eligible, c.risk, c.reason)
			}
			if pa.RuntimeAtLeast != c.atLeast || pa.PastTimeLimit() != c.past || pa.TimeLimit != c.limit {
				t.Errorf("at least %v, past %v, --time %q; want %v, %v, %q", pa.RuntimeAtLeast, pa.PastTimeLimit(), pa.TimeLimit, c.atLeast, c.past, c.limit)
			}
			if note != c.note {
				t.Errorf("note %q, want %q", note, c.note)
			}
			if c.noFigures != (pa.RuntimeS == nil && pa.SU == nil && pa.GPUMemNeedMiB == nil) {
				t.Errorf("figures of a profile that cannot run the job: runtime %v, SU %v", show(pa.RuntimeS), show(pa.SU))
			}
			if c.runtime > 0 && (pa.RuntimeS == nil || *pa.RuntimeS != c.runtime) {
				t.Errorf("runtime %v, want %g", show(pa.RuntimeS), c.runtime)
			}
		})
	}
}

// judge reads the evidence and changes none of it: a profile judged twice
// is judged alike, whatever was judged between.
func TestJudgeChangesNoEvidence(t *testing.T) {
	site := catalogtest.Wulver(t)
	job, ev := evidenceOf(t, site, "#SBATCH --time=15:00\n", []Run{newRun("full", 600).peak(1024), newRun("1g.10gb", 900).peak(1024).timeout()}, nil)
	opt := Options{}.withDefaults(site)
	first, _ := judge(site, ev, job, opt, mustProfile(t, site, "2g.20gb"))
	for _, p := range site.ProfilesBySize() {
		judge(site, ev, job, opt, p)
	}
	again, _ := judge(site, ev, job, opt, mustProfile(t, site, "2g.20gb"))
	if fmt.Sprintf("%+v", show(first.RuntimeS)) != fmt.Sprintf("%+v", show(again.RuntimeS)) || first.Reason != again.Reason {
		t.Errorf("judged %+v, then %+v", first, again)
	}
}
