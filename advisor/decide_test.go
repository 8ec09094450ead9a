package advisor

import (
	"strings"
	"testing"

	"github.com/migadvisor/migadvisor/advisor/base/memory"
	"github.com/migadvisor/migadvisor/advisor/base/outcome"
	"github.com/migadvisor/migadvisor/catalog/catalogtest"
)

// judged is a profile as judge leaves it: eligible, measured in one run.
func judged(name string, usable, runtime, su float64) ProfileAdvice {
	return ProfileAdvice{Profile: name, UsableMiB: usable, OOMRisk: memory.RiskLow, OOMRiskReason: "completed here in 1 run",
		RuntimeS: &runtime, RuntimeSource: BasisMeasured, RuntimeRuns: 1, SU: &su, Eligible: true, Reason: "low OOM risk"}
}

func (pa ProfileAdvice) unsure() ProfileAdvice {
	pa.OOMRisk, pa.OOMRiskReason, pa.Eligible, pa.RuntimeSource, pa.RuntimeRuns = memory.RiskUnknown, "no GPU memory evidence yet", false, BasisPredicted, 0
	return pa
}

func (pa ProfileAdvice) predicted() ProfileAdvice {
	pa.RuntimeSource, pa.RuntimeRuns = BasisPredicted, 0
	return pa
}

func (pa ProfileAdvice) waiting(s float64) ProfileAdvice { pa.QueueWaitS = &s; return pa }

// decide chooses among judged profiles, on their figures alone: the
// objective's best, a tie within the noise to the smaller, the probe of a
// smaller profile of unknown fit predicted cheaper.
func TestDecideAmongJudgedProfiles(t *testing.T) {
	site := catalogtest.Wulver(t)
	ev := evidence{runs: []Run{newRun("2g.20gb", 1)}}
	for _, c := range []struct {
		name     string
		opt      Options
		profiles []ProfileAdvice
		choice   string
		reason   string // its start
		next     string // the probe's profile; "": none
		note     string // the start of the only note; "": none
	}{
		{name: "lowest SU", profiles: []ProfileAdvice{judged("1g.10gb", 9728, 3600, 3), judged("2g.20gb", 19968, 1440, 2)},
			choice: "2g.20gb", reason: "lowest SU: 2, then 3 on 1g.10gb; OOM risk low: completed here in 1 run; runtime 00:24:00 measured in 1 run"},
		{name: "a tie goes to the smaller", profiles: []ProfileAdvice{judged("1g.10gb", 9728, 2520, 2.1), judged("2g.20gb", 19968, 1440, 2)},
			choice: "1g.10gb", reason: "2.1 SU, a tie with 2g.20gb's 2, within the 10% taken as run-to-run noise while fewer than 3 runs back a figure"},
		{name: "the only one, and a cheaper one to measure", profiles: []ProfileAdvice{judged("1g.10gb", 9728, 1800, 1.5).unsure(), judged("2g.20gb", 19968, 1440, 2)},
			choice: "2g.20gb", reason: "the only profile with low OOM risk and a known runtime: 2 SU", next: "1g.10gb",
			note: "no GPU memory figure says whether 1g.10gb, which is smaller, would fit: measure it under the monitor (1.5 SU predicted there, against 2 on 2g.20gb; one run costs about 1.5 SU)"},
		{name: "a smaller unsure profile that costs more is no probe", profiles: []ProfileAdvice{judged("1g.10gb", 9728, 3600, 3).unsure(), judged("2g.20gb", 19968, 1440, 2)},
			choice: "2g.20gb", reason: "the only profile"},
		{name: "shortest runtime", opt: Options{Objective: ObjectiveTime}, profiles: []ProfileAdvice{judged("1g.10gb", 9728, 3600, 3), judged("full", 81203, 600, 8)},
			choice: "full", reason: "lowest runtime: 00:10:00, then 01:00:00 on 1g.10gb"},
		{name: "turnaround", opt: Options{Objective: ObjectiveTurnaround},
			profiles: []ProfileAdvice{judged("1g.10gb", 9728, 3600, 3).waiting(60), judged("full", 81203, 600, 8)},
			choice:   "full", reason: "lowest queue wait + runtime: 00:10:00, then 01:01:00 on 1g.10gb", note: "no queue-wait figures for full: counted as no wait"},
		{name: "a predicted tie passed over", profiles: []ProfileAdvice{judged("1g.10gb", 9728, 2520, 2.1), judged("2g.20gb", 19968, 1440, 2).predicted()},
			choice: "1g.10gb", reason: "2.1 SU, a tie with 2g.20gb's 2", next: "2g.20gb",
			note: "2g.20gb, never run, is predicted to cost less (2 SU against 2.1 on 1g.10gb), a difference within the noise"},
	} {
		t.Run(c.name, func(t *testing.T) {
			opt := c.opt.withDefaults(site)
			d := decide(site, ev, Job{Script: "job.sh"}, opt, c.profiles)
			if d.choice != c.choice || !strings.HasPrefix(d.reason, c.reason) {
				t.Errorf("choice %q: %s\nwant %q: %s…", d.choice, d.reason, c.choice, c.reason)
			}
			if got := strings.Join(d.next.Profiles, ","); got != c.next {
				t.Errorf("next %+v, want the probe of %q", d.next, c.next)
			}
			if (c.note == "") != (len(d.notes) == 0) || c.note != "" && (len(d.notes) != 1 || !strings.HasPrefix(d.notes[0], c.note)) {
				t.Errorf("notes %q, want %q…", d.notes, c.note)
			}
			if d.basis != d.choiceBasis(c.profiles) {
				t.Errorf("basis %s", d.basis)
			}
		})
	}
}

// choiceBasis is the runtime source of the profile chosen.
func (d decision) choiceBasis(profiles []ProfileAdvice) string {
	for _, pa := range profiles {
		if pa.Profile == d.choice {
			return pa.RuntimeSource
		}
	}
	return BasisNone
}

// With no eligible profile, decide says why, and names the run that finds
// out: the probe of every profile, of the one of unsure fit, of the one
// that ran past its limit with a longer --time; none where the script
// fails whatever the profile or no profile fits.
func TestDecideWithNoneEligible(t *testing.T) {
	site := catalogtest.Wulver(t)
	notFound := newRun("1g.10gb", 2).id("71")
	notFound.Completed, notFound.State = false, "FAILED"
	notFound.Outcome = outcome.Outcome{Kind: outcome.CommandNotFound, Text: "failed at once: python: command not found", AnyProfile: true}
	fail := func(p, id string) Run {
		r := newRun(p, 5).id(id)
		r.Completed, r.State, r.Outcome = false, "FAILED", outcome.Outcome{Kind: outcome.Failed, Text: "failed with exit code 1"}
		return r
	}
	for _, c := range []struct {
		name, directives string
		runs             []Run
		reason, next     string // the reason's start; the next step's command
		limit, repeats   string
	}{
		{name: "no runs", reason: "no runs of this script in the history", next: "migadvisor recommend --probe job.sh"},
		{name: "a multi-GPU job with no runs", directives: "#SBATCH --gres=gpu:a100:2\n", reason: "no runs of this 2-GPU job in the history",
			next: "migadvisor recommend --probe --profiles full job.sh"},
		{name: "unsure fit", runs: []Run{newRun("full", 60).peak(36 * 1024).timeout()}, reason: "3g.40gb has medium OOM risk",
			next: "migadvisor recommend --probe --profiles 3g.40gb --time 00:05:00 job.sh"},
		{name: "out of memory with no figure", runs: []Run{newRun("2g.20gb", 60).oom(-1)},
			reason: "no run has completed yet, so no runtime is known: job 2g.20gb ran out of GPU memory on 2g.20gb; measure 3g.40gb, where the OOM risk is low: needs 19.5 GiB",
			next:   "migadvisor recommend --probe --profiles 3g.40gb job.sh"},
		{name: "a time limit reached", directives: "#SBATCH --time=15:00\n", runs: []Run{newRun("1g.10gb", 900).peak(1024).timeout()},
			reason: "no run has completed on 1g.10gb: it ran past its time limit here after 00:15:00; ask for --time=00:30:00",
			next:   "migadvisor recommend --probe --profiles 1g.10gb --time 00:30:00 job.sh", limit: "00:30:00"},
		{name: "fails everywhere", runs: []Run{fail("1g.10gb", "1"), fail("full", "2")}, reason: "the script fails whatever the profile: it failed on 1g.10gb and full"},
		{name: "a command not found", runs: []Run{notFound}, reason: "no run completed, and job 71 failed at once: python: command not found",
			repeats: "job 71 on 1g.10gb failed at once: python: command not found"},
		{name: "no profile fits", runs: []Run{newRun("full", 60).oom(90000)}, reason: "no profile fits: the job needs at least 87.9 GiB of GPU memory, the OOM lower bound on full, more than the 79.3 GiB usable on full"},
		// An OOM whose message counts less than the GPU held (seen: "needs
		// at least 9.9 GiB ..., more than any profile has" of an 80 GB GPU).
		{name: "no profile fits, the message's figure short of the GPU", runs: []Run{newRun("full", 60).oom(9.9 * 1024)},
			reason: "no profile fits: the job needs more than the 79.3 GiB usable on full, the most any profile has: it ran out of memory there"},
		{name: "no profile fits safely", runs: []Run{newRun("full", 60).peak(78 * 1024).timeout()},
			reason: "no profile fits: the job needs at least 78.0 GiB of GPU memory, the peak on full: too close to the 79.3 GiB usable on full"},
	} {
		t.Run(c.name, func(t *testing.T) {
			job, ev := evidenceOf(t, site, c.directives, c.runs, nil)
			opt := Options{}.withDefaults(site)
			profiles, _ := judgeAll(site, ev, job, opt)
			d := decide(site, ev, job, opt, profiles)
			if d.choice != "" || d.basis != BasisNone || !strings.HasPrefix(d.reason, c.reason) {
				t.Errorf("choice %q (%s): %s\nwant none: %s…", d.choice, d.basis, d.reason, c.reason)
			}
			if d.next.Command() != c.next || d.timeLimit != c.limit || d.repeats != c.repeats {
				t.Errorf("next %q, --time %q, repeats %q; want %q, %q, %q", d.next.Command(), d.timeLimit, d.repeats, c.next, c.limit, c.repeats)
			}
		})
	}
}

// The slowdown stage leaves out the profiles too slow beside the fastest
// one the job can run on, and returns new advice: the judged profiles are
// left as they were.
func TestApplySlowdown(t *testing.T) {
	high := judged("full", 81203, 500, 8)
	high.OOMRisk, high.Eligible = memory.RiskHigh, false
	for _, c := range []struct {
		name     string
		max      float64
		profiles []ProfileAdvice
		out      map[string]string // the reason of each profile left out
	}{
		{name: "no limit", profiles: []ProfileAdvice{judged("1g.10gb", 9728, 4000, 3), judged("full", 81203, 1000, 8)}},
		{name: "4× slower", max: 2.5, profiles: []ProfileAdvice{judged("1g.10gb", 9728, 4000, 3), judged("2g.20gb", 19968, 2200, 3), judged("full", 81203, 1000, 8)},
			out: map[string]string{"1g.10gb": "4.0× slower than full, beyond --max-slowdown 2.5"}},
		{name: "the fastest cannot run it", max: 2.5, profiles: []ProfileAdvice{judged("1g.10gb", 9728, 4000, 3), judged("3g.40gb", 40448, 2000, 5), high}},
	} {
		t.Run(c.name, func(t *testing.T) {
			before := make([]bool, len(c.profiles))
			for i, pa := range c.profiles {
				before[i] = pa.Eligible
			}
			got := applySlowdown(c.profiles, c.max)
			for i, pa := range got {
				if why, out := c.out[pa.Profile]; out != (!pa.Eligible && before[i]) || out && pa.Reason != why {
					t.Errorf("%s: eligible %v, %s; want left out: %v %s", pa.Profile, pa.Eligible, pa.Reason, out, why)
				}
				if c.profiles[i].Eligible != before[i] {
					t.Errorf("%s: the judged profile was changed", pa.Profile)
				}
			}
		})
	}
}
