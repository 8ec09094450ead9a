package savings

import (
	"cmp"
	"context"
	"fmt"
	"math"
	"slices"
	"strings"
	"time"

	"github.com/migadvisor/migadvisor/advisor"
	"github.com/migadvisor/migadvisor/advisor/base/history"
	"github.com/migadvisor/migadvisor/advisor/base/memory"
	"github.com/migadvisor/migadvisor/advisor/base/outcome"
	"github.com/migadvisor/migadvisor/advisor/base/runmodel"
	"github.com/migadvisor/migadvisor/catalog"
	"github.com/migadvisor/migadvisor/internal/textutil"
	"github.com/migadvisor/migadvisor/slurm"
)

// Why jobs go unjudged.
const (
	noCharge     = "no SU figure: elapsed time or CPUs missing from accounting"
	noMemory     = "no GPU memory figure (neither the monitor, jobstats nor Slurm's gres/gpumem measured them)"
	noRuntime    = "the runtime on the smaller profile is unknown"
	notAdvisable = "recommend could not judge the script"
	noProfile    = "no profile is safe to recommend yet"
	onlyCeiling  = "their GPU memory figure is only a ceiling (a caching or preallocating framework's peak), too close to a smaller slice's memory to tell whether it fits"
	notPriced    = "the smaller profile recommend names has no price for the job (its partition or QoS)"
	noState      = "no State: read from a dump without it, so how they ended is unknown (collect --help shows the sacct command that saves every field it reads)"
)

// unfinished says, in a parenthesis after noProfile, how the runs a
// script's advice rests on ended where none completed (runs that reached
// their time limit, were cancelled before they completed, ...), in the
// outcomes' order; "" where every run completed.
func unfinished(runs []advisor.Run) string {
	seen := map[string]bool{}
	for _, r := range runs {
		if !r.Completed {
			seen[endedWords(r)] = true
		}
	}
	var words []string
	for _, w := range endings {
		if seen[w] {
			words = append(words, w)
		}
	}
	if len(words) == 0 {
		return noProfile
	}
	return noProfile + " (runs that " + joinOr(words) + ")"
}

// endings are how a run that did not complete ended, as unfinished lists
// them.
var endings = []string{"reached their time limit", "failed", "ran out of GPU memory", "ran out of host memory",
	"were cancelled before they completed", "were preempted", "lost their node", "did not complete"}

// endedWords is how a run that did not complete ended, one of endings.
func endedWords(r advisor.Run) string {
	switch {
	case r.TimedOut:
		return endings[0]
	case r.GPUOOM:
		return endings[2]
	case r.HostOOM:
		return endings[3]
	}
	switch r.Outcome.Kind {
	case outcome.Failed, outcome.CommandNotFound, outcome.NoOutputFile:
		return endings[1]
	case outcome.Cancelled:
		return endings[4]
	case outcome.Preempted:
		return endings[5]
	case outcome.NodeFailure:
		return endings[6]
	}
	return endings[7]
}

// joinOr lists words as a sentence does: "a", "a or b", "a, b, or c".
func joinOr(words []string) string {
	switch n := len(words); n {
	case 1:
		return words[0]
	case 2:
		return words[0] + " or " + words[1]
	default:
		return strings.Join(words[:n-1], ", ") + ", or " + words[n-1]
	}
}

func fewRuns(n int) string {
	return fmt.Sprintf("fewer than %d runs of the script (min_runs)", n)
}

func unknownGPU(r *history.JobRecord) string {
	t := r.GPUType
	if t == "" {
		t = "gpu (untyped)"
	}
	return fmt.Sprintf("GPU type %s is not a profile of the site file", t)
}

// judge recommends a profile for the group's script from every run the
// history has of it, then sorts its jobs of the period: out of memory, on
// a bigger profile than needed (with what the recommended one would have
// cost), right-sized, or not judged and why.
func (b *builder) judge(ctx context.Context, st *history.Store, g *group, named []advisor.Run) error {
	if g.session {
		return b.judgeSessions(ctx, st, g) // sessions.go
	}
	runs := named
	if g.fingerprint != "" {
		var err error
		if runs, err = advisor.GatherRuns(ctx, g.fingerprint, st); err != nil {
			return fmt.Errorf("read the runs of script %s: %w", g.fingerprint, err)
		}
		runs = append(runs, named...) // the runs of the names it adopted (adoptNamed)
	}
	newest := g.jobs[0].rec // History lists the newest first
	var rec *advisor.Recommendation
	var err error
	var peers []runmodel.Peer
	if b.peers != nil && advisor.NeedsPrior(runs) {
		peers = b.peers(g.fingerprint)
	}
	script := scriptAt(st, g.path, g.fingerprint)
	// What the jobs run: the script's workload, else the one most of the
	// group's outputs show (the newest job may have left none).
	recs := make([]*history.JobRecord, len(g.jobs))
	for i, j := range g.jobs {
		recs[i] = j.rec
	}
	aj := advisor.Job{Script: g.label(), Fingerprint: g.fingerprint, Resources: resourcesOf(b.site, newest), Runs: runs,
		User: g.user, Peers: peers, Reads: script, Resembles: advisor.ResemblesOf(b.site, script, recs...)}
	if len(runs) >= b.th.MinRuns {
		rec, err = advisor.Recommend(b.site, aj, advisor.Options{Objective: advisor.ObjectiveSU})
	}
	sc := Script{User: g.user, Name: g.name, Fingerprint: g.fingerprint, Runs: len(runs), group: g.key}
	names, paths := map[string]int{}, map[string]int{} // of the jobs listed
	var open, listed, kept []job                       // not judged, moved, judged right where they ran: what a measurement could improve
	v := verdict{rec, err, unfinished(runs)}           // read from the runs once, not for each of the group's jobs
	for _, j := range g.jobs {
		before := sc.Jobs
		placed := b.place(&sc, v, j)
		b.tell(j, rec, &sc, before)
		switch placed {
		case placedKept:
			kept = append(kept, j)
		case placedListed:
			listed = append(listed, j)
			names[j.rec.Name]++
			if f := userFile(j.rec.Script); f != "" {
				paths[f]++
			}
		case placedUnjudged:
			open = append(open, j)
		}
	}
	// The file the user ran, not a variant's in a probe's directory, nor
	// slurmdbd's copy, which has no path.
	sc.Name, sc.Path = mostBorne(names, g.name), mostBorne(paths, "")
	if rec == nil && err == nil && len(open) > 0 && len(runs) > 0 {
		// Too few runs to judge, enough to say what to measure.
		rec, _ = advisor.Recommend(b.site, aj, advisor.Options{Objective: advisor.ObjectiveSU})
	}
	b.toMeasure(g, rec, jobsToMeasure{open: open, listed: listed, kept: kept})
	return b.list(g.user, sc)
}

// list adds a script's row to the report, or counts it among those below
// min_su_saved; a row with no job is neither.
func (b *builder) list(user string, sc Script) error {
	if sc.Jobs == 0 {
		return nil
	}
	// Saved from the script's unrounded sums, as the tallies add it up.
	sc.saved = sc.SUSpent - sc.SUThere
	sc.SUSaved = catalog.RoundSU(sc.saved)
	sc.SUSpent, sc.SUThere = catalog.RoundSU(sc.SUSpent), catalog.RoundSU(sc.SUThere)
	if sc.SUSaved < b.th.MinSUSaved {
		below := &b.rep.Below
		below.Scripts++
		below.Jobs += sc.Jobs
		below.SU += sc.SUSpent
		below.SUThere += sc.SUThere
		below.Saved += sc.SUSaved
		return nil
	}
	b.users[user].Scripts++
	b.rep.Scripts = append(b.rep.Scripts, sc)
	return nil
}

// mostBorne is the name most jobs bear, the first in alphabetical order
// of those borne as often: the same whatever order the jobs come in, and
// not the newest job's (a probe's variant, or a renamed run); or else
// when there is none.
func mostBorne(names map[string]int, orElse string) string {
	best := orElse
	for name, n := range names {
		if m := names[best]; n > m || n == m && name < best {
			best = name
		}
	}
	return best
}

// Directions of a row's recommended profile from where its jobs ran.
const (
	DirectionSmaller = "smaller"
	DirectionLarger  = "larger"
)

// placement is what place made of a job.
type placement int

const (
	placedElse     placement = iota // a measurement, an OOM
	placedListed                    // in its script's row
	placedUnjudged                  // not judged, and why counted
	placedKept                      // judged right where it ran, or where it ran as cheap as anywhere known
)

// verdict is what judging a script gave: its recommendation, the error
// that kept it from one, and why no profile is safe where none is, in
// what its runs did (unfinished).
type verdict struct {
	rec    *advisor.Recommendation
	err    error
	unsafe string
}

// place sorts one job of the group by the script's recommendation.
func (b *builder) place(sc *Script, v verdict, j job) placement {
	rec, recErr := v.rec, v.err
	r := j.rec
	example := r.User + " " + r.Name
	if r.SweepDir != "" {
		// A probe's or a sweep's variant measured the script on its
		// profile, as its user was told to: evidence for the judgement,
		// never a job that asked for too much (or ran out of memory).
		b.rep.Measurements.Jobs++
		b.rep.Measurements.SU += j.su
		return placedElse
	}
	if r.OOM() == slurm.OOMGPU {
		b.outOfMemory(rec, j)
		return placedElse
	}
	switch {
	case recErr != nil:
		b.skip(notAdvisable, j, example+": "+recErr.Error())
		return placedUnjudged
	case rec == nil:
		b.skip(fewRuns(b.th.MinRuns), j, "")
		return placedUnjudged
	case rec.Recommended == nil:
		b.skip(v.unsafe, j, example+": "+rec.Reason)
		return placedUnjudged
	case b.rank(*rec.Recommended) > b.rank(r.Profile):
		// A larger profile, where the job runs enough faster to cost
		// less: right-sizing goes both ways. Only a completed job's time
		// is the runtime a faster profile shortens.
		if r.State == "COMPLETED" && b.cheaper(sc, rec, j, true) {
			return placedListed
		}
		return placedKept
	case b.rank(*rec.Recommended) == b.rank(r.Profile):
		// Right-sized, unless recommend could not tell whether a smaller
		// slice fits: the memory evidence it lacks is the reason.
		if reason, detail, open := b.unknownSmaller(rec, j); open {
			b.skip(reason, j, example+": "+detail)
			return placedUnjudged
		}
		return placedKept
	}
	// The profile recommend names is one it judged a low OOM risk (by a
	// run that completed there or on a smaller slice, or a memory figure):
	// its choice is the report's, on no second rule.
	there, here := rec.Profile(*rec.Recommended), rec.Profile(r.Profile)
	if _, ok := runtimeRatio(there, here); !ok {
		b.skip(noRuntime, j, "")
		return placedUnjudged
	}
	if _, ok := chargeOn(b.site, r, there, 1); !ok {
		b.skip(notPriced, j, example+": "+*rec.Recommended)
		return placedUnjudged
	}
	if b.cheaper(sc, rec, j, false) {
		return placedListed
	}
	return placedKept // the smaller profile would not have cost less
}

// cheaper lists the job in its script's row when the recommended profile
// would have cost it less, at the runtime predicted there, and counts it
// as a job a smaller (or a larger) profile would have done.
func (b *builder) cheaper(sc *Script, rec *advisor.Recommendation, j job, larger bool) bool {
	r := j.rec
	there, here := rec.Profile(*rec.Recommended), rec.Profile(r.Profile)
	ratio, ok := runtimeRatio(there, here)
	if !ok {
		return false
	}
	alt, ok := chargeOn(b.site, r, there, ratio)
	if !ok || alt >= j.su {
		return false
	}
	b.count(r, func(t *Tally) {
		if larger {
			t.Larger++
			t.LargerSU += j.su
			t.LargerSUThere += alt
		} else {
			t.Smaller++
			t.SmallerSU += j.su
			t.SmallerSUThere += alt
		}
		t.Saved += j.su - alt
	})
	b.addJob(sc, rec, there, here, ratio, j, alt)
	return true
}

// outOfMemory lists a job that ran out of GPU memory, with the script's
// need and the smallest bigger profile that fits it: the one recommend
// names, else the smallest bigger one it judges a low risk.
func (b *builder) outOfMemory(rec *advisor.Recommendation, j job) {
	r := j.rec
	b.count(r, func(t *Tally) { t.OOM++; t.OOMSU += j.su })
	o := OOMJob{User: r.User, JobID: r.JobID, Name: r.Name, Profile: r.Profile, SU: catalog.RoundSU(j.su)}
	if r.GPUNeedMiB != nil {
		o.NeedMiB, o.NeedKind = math.Round(*r.GPUNeedMiB), memory.NeedOOM
	}
	if rec != nil && rec.GPUMemNeed != nil {
		o.NeedMiB, o.NeedKind = rec.GPUMemNeed.MiB, rec.GPUMemNeed.Kind
	}
	if rec != nil {
		o.Fits = b.fits(rec, r.Profile)
	}
	b.rep.OOMs = append(b.rep.OOMs, o)
}

func (b *builder) fits(rec *advisor.Recommendation, ran string) string {
	if rec.Recommended != nil && b.rank(*rec.Recommended) > b.rank(ran) {
		return *rec.Recommended
	}
	for _, p := range b.order {
		if pa := rec.Profile(p); b.rank(p) > b.rank(ran) && pa != nil && pa.OOMRisk == memory.RiskLow {
			return p
		}
	}
	return ""
}

// addJob adds a smaller-slice job to its script's row.
func (b *builder) addJob(sc *Script, rec *advisor.Recommendation, there, here *advisor.ProfileAdvice, ratio float64, j job, alt float64) {
	if sc.Jobs == 0 {
		sc.Recommended, sc.Basis, sc.RuntimeRatio = there.Profile, rec.Basis, math.Round(ratio*100)/100
		sc.Direction = DirectionSmaller
		if b.rank(there.Profile) > b.rank(here.Profile) {
			sc.Direction = DirectionLarger
		}
		if p, ok := b.site.ProfileNamed(there.Profile); ok {
			sc.Request = p.Request
		}
		sc.TimeLimit, sc.UsableMiB = there.TimeLimit, there.UsableMiB
		sc.memory(rec, there)
		sc.RanS, sc.RuntimeS = *here.RuntimeS, *there.RuntimeS
		if r := there.RuntimeRangeS; r != nil {
			sc.RuntimeMaxS = r[1]
		}
		sc.askedFor(j.rec)
		sc.TimeBudgetS = rec.TimeBudgetS
		sc.Why = sc.why()
	}
	b.listJob(sc, j, alt)
}

// askedFor keeps what the row's first job asked for: what tells apart
// scripts grouped by job name.
func (sc *Script) askedFor(r *history.JobRecord) {
	if r.CPUs != nil {
		sc.CPUs = *r.CPUs
	}
	if r.ReqMemMiB != nil {
		sc.MemMiB = *r.ReqMemMiB
	}
	sc.Partition = r.Partition
}

// listJob counts a smaller-slice job in its row: its id, its profile, what
// it spent and would have cost (alt).
func (b *builder) listJob(sc *Script, j job, alt float64) {
	sc.Jobs++
	sc.JobIDs = append(sc.JobIDs, j.rec.JobID)
	if !slices.Contains(sc.RanOn, j.rec.Profile) {
		sc.RanOn = append(sc.RanOn, j.rec.Profile)
		slices.SortFunc(sc.RanOn, func(x, y string) int { return cmp.Compare(b.rank(x), b.rank(y)) })
	}
	sc.RanRequest = ""
	if p, ok := b.site.ProfileNamed(sc.RanOn[0]); ok && len(sc.RanOn) == 1 {
		sc.RanRequest = p.Request
	}
	sc.SUSpent += j.su
	sc.SUThere += alt
}

// unknownSmaller is why the job is not judged right-sized though
// recommend names no smaller profile than it ran on: one smaller whose OOM
// risk recommend could not judge (it names the probe that tells), for
// want of a memory figure or with a figure that is only a ceiling, and
// that is not predicted to cost the job more (recommend proposes no probe
// that cannot pay); and the judgement in recommend's words.
func (b *builder) unknownSmaller(rec *advisor.Recommendation, j job) (reason, detail string, open bool) {
	ran := j.rec.Profile
	here := rec.Profile(ran)
	for i := range rec.Profiles {
		pa := &rec.Profiles[i]
		if b.rank(pa.Profile) < 0 || b.rank(pa.Profile) >= b.rank(ran) || pa.OOMRisk != memory.RiskUnknown {
			continue
		}
		if ratio, ok := runtimeRatio(pa, here); ok {
			if alt, ok := chargeOn(b.site, j.rec, pa, ratio); ok && alt >= j.su {
				continue // dearer there, at the runtime predicted
			}
		}
		if rec.GPUMemNeed == nil && rec.GPUMemCeiling != nil {
			return onlyCeiling, pa.Profile + ": " + pa.OOMRiskReason, true
		}
		return noMemory, pa.Profile + ": " + pa.OOMRiskReason, true
	}
	return "", "", false
}

// memory takes the figure recommend judged the memory by: its need, else
// the ceiling of a framework's peak; with neither, the run that proves the
// recommended profile fits.
func (sc *Script) memory(rec *advisor.Recommendation, there *advisor.ProfileAdvice) {
	n := rec.GPUMemNeed
	if n == nil {
		n = rec.GPUMemCeiling
	}
	if n == nil {
		sc.Fits = there.OOMRiskReason
		if there.Completed > 0 {
			sc.Fits = fmt.Sprintf("completed on %s in %s", there.Profile, textutil.Plural(there.Completed, "run"))
		}
		return
	}
	sc.SeenMiB, sc.NeedMiB, sc.MeasuredBy, sc.MemoryKind = n.SeenMiB, n.MiB, n.By, n.Kind
	if n.Kind == memory.NeedCeiling {
		sc.HeldBy = heldBy(rec.GPUMemHolder)
	}
}

// heldBy says what held the memory of a peak that is only a ceiling:
// "PyTorch's cache".
func heldBy(h *memory.Holder) string {
	switch {
	case h == nil || h.Software == "":
		return "a cache that grew with the device"
	case h.Kind == memory.HolderPreallocates:
		return h.Software + "'s preallocation"
	case h.Kind == memory.HolderInterpreted:
		return h.Software // "a Python framework": no cache of its own is known
	}
	return h.Software + "'s cache"
}

// MemoryWords say what the script's GPU memory figure proves, by its
// kind: "needs 3.8 GiB", "needs at least 10.4 GiB" (an out-of-memory
// message's bound), "needs at most 6.0 GiB" (a framework's peak held
// beyond its need); "" without a figure.
func (s Script) MemoryWords() string {
	mib := memory.FormatMiB(s.NeedMiB)
	switch s.MemoryKind {
	case "":
		return ""
	case memory.NeedOOM:
		return "needs at least " + mib
	case memory.NeedCeiling:
		return "needs at most " + mib
	}
	return "needs " + mib
}

// why is the script's row's reason: what its memory figure proves of the
// recommended profile, or the run that proves it fits.
func (s Script) why() string {
	return s.memoryWhy() + s.budgetWhy()
}

func (s Script) memoryWhy() string {
	if s.MemoryKind == "" {
		return s.Fits + " (no GPU memory figure)"
	}
	by := s.MeasuredBy
	if s.HeldBy != "" {
		by += ": held by " + s.HeldBy
	}
	return fmt.Sprintf("%s of the %s usable on %s (%s)", s.MemoryWords(), memory.FormatMiB(s.UsableMiB), s.Recommended, by)
}

// budgetWhy says that the SU there are for the same work where every run
// ran to its time limit: a run there in the same time does less.
func (s Script) budgetWhy() string {
	if s.TimeBudgetS <= 0 {
		return ""
	}
	return fmt.Sprintf("; every run ran until its time limit stopped it, after %s: SU for the same work, which takes about %s there",
		slurm.FormatSeconds(s.TimeBudgetS), slurm.FormatSeconds(s.RuntimeS))
}

// runtimeRatio is how much longer the job runs on there than here: both
// runtimes known, neither only a lower bound.
func runtimeRatio(there, here *advisor.ProfileAdvice) (float64, bool) {
	if there == nil || here == nil || there.RuntimeS == nil || here.RuntimeS == nil || there.RuntimeAtLeast || here.RuntimeAtLeast || *here.RuntimeS <= 0 {
		return 0, false
	}
	return *there.RuntimeS / *here.RuntimeS, true
}

// chargeOn prices the job as it would have run on there's profile, in
// its partition, for its elapsed time × ratio. ElapsedS is known: the job
// was priced as it ran (RecordCharge needs it).
func chargeOn(site *catalog.Site, r *history.JobRecord, there *advisor.ProfileAdvice, ratio float64) (float64, bool) {
	alt := *r
	alt.Profile, alt.Partition = there.Profile, there.Partition
	elapsed := int64(math.Round(float64(*r.ElapsedS) * ratio))
	alt.ElapsedS = &elapsed
	ch, ok := advisor.RecordCharge(site, &alt)
	return ch.SU, ok
}

// rank is a profile's place from the smallest; -1 for one the site lacks.
func (b *builder) rank(profile string) int {
	return slices.Index(b.order, profile)
}

// resourcesOf is what a job asked for, read back from its accounting: the
// script's resources where the script itself is not at hand.
func resourcesOf(site *catalog.Site, r *history.JobRecord) slurm.Resources {
	res := slurm.Resources{Partition: r.Partition, QoS: r.QOS, Account: r.Account, JobName: r.Name, NTasks: 1}
	nodes := int64(1)
	if r.Nodes != nil && *r.Nodes > 1 {
		nodes = *r.Nodes
		res.Nodes = int(nodes)
	}
	if r.CPUs != nil {
		res.CPUsPerTask = int(*r.CPUs)
	}
	if r.ReqMemMiB != nil && *r.ReqMemMiB > 0 {
		res.MemMiB = int64(math.Ceil(*r.ReqMemMiB / float64(nodes)))
	}
	if r.TimeLimitMin != nil && *r.TimeLimitMin > 0 {
		res.Time = slurm.TimeLimit{Duration: time.Duration(*r.TimeLimitMin) * time.Minute}
	}
	if p, ok := site.ProfileNamed(r.Profile); ok {
		// --gpus: accounting's count is the job's, not one node's (--gres).
		res.GPUs = []slurm.GPURequest{{Option: slurm.OptGPUs, Type: p.GRESType, Count: int(max(r.GPUCount, 1))}}
	}
	return res
}

// scriptAt is the script at path while it is still the one judged (the
// same fingerprint), or slurmdbd's copy of it that collect kept: what it
// runs says what its memory peaks prove, as recommend reads it. nil where
// it is gone, changed or unreadable, or no copy was kept.
func scriptAt(st *history.Store, path, fingerprint string) *slurm.Script {
	if path == "" || fingerprint == "" {
		return nil
	}
	if strings.HasPrefix(path, slurmdbdCopy) {
		if text := st.ScriptText(fingerprint); text != nil {
			return slurm.Parse(path, text)
		}
		return nil
	}
	s, err := slurm.ReadScript(path)
	if err != nil || s.Fingerprint() != fingerprint {
		return nil
	}
	return s
}
