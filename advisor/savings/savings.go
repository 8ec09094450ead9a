// Package savings is the admins' report of where the site's GPU service
// units go: over the GPU jobs that ended in a period, per user and per
// script, the jobs whose evidence says a smaller profile would have done
// (by recommend's own risk model and runtime model), what they spent and
// what the recommended profile would have cost; totals per profile, per
// user and for the cluster; the jobs that ran out of GPU memory on a slice
// too small; and, never silently, the jobs that could not be judged and
// why. Notices to users (notice.go) and the CSV (csv.go) are built from it.
package savings

import (
	"cmp"
	"context"
	"fmt"
	"math"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/migadvisor/migadvisor/advisor"
	"github.com/migadvisor/migadvisor/advisor/history"
	"github.com/migadvisor/migadvisor/catalog"
	"github.com/migadvisor/migadvisor/internal/textutil"
	"github.com/migadvisor/migadvisor/slurm"
)

// Request says what to report on.
type Request struct {
	Site   *catalog.Site
	Period history.Period // the jobs that ended in it
	User   string         // one user's jobs; "": everyone's
	// Thresholds: the site's [report] with its defaults filled
	// (catalog.Report.WithDefaults) and the command line's overrides.
	Thresholds catalog.Report
	// Progress, when set, hears how many of the scripts were judged.
	Progress func(done, total int)
	// Peers are the peers of a script (less its own: fingerprint) that
	// scale it when it was measured on one profile, as recommend's do; nil:
	// none.
	Peers func(fingerprint string) []advisor.Peer
}

// Report is the report. SU figures are the site's list price of each job
// as it ran (its CPUs, memory, profile and elapsed time).
type Report struct {
	Site       string         `json:"site"`
	From       time.Time      `json:"from"`
	Until      time.Time      `json:"until"`
	User       string         `json:"user,omitempty"`
	Thresholds Thresholds     `json:"thresholds"`
	Total      Tally          `json:"total"`
	Profiles   []ProfileTally `json:"profiles"` // by the profile the jobs ran on, smallest first
	Users      []UserTally    `json:"users"`    // most SU saved first
	Scripts    []Script       `json:"scripts"`  // at or above the thresholds, most SU saved first
	// Below counts the scripts under min_su_saved: in the totals, not
	// listed.
	Below    Below      `json:"below_thresholds"`
	OOMs     []OOMJob   `json:"out_of_memory"` // most SU first
	Unjudged []Unjudged `json:"unjudged"`      // most SU first
}

// Below is the scripts whose saving is under min_su_saved: how many, their
// smaller-slice jobs, what those spent, would have cost, and saved.
type Below struct {
	Scripts int     `json:"scripts"`
	Jobs    int     `json:"jobs"`
	SU      float64 `json:"su"`
	SUThere float64 `json:"su_there"`
	Saved   float64 `json:"su_saved"`
}

// Thresholds are the ones the report applied.
type Thresholds struct {
	MinSUSaved float64 `json:"min_su_saved"`
	MinRuns    int     `json:"min_runs"`
}

// Tally counts GPU jobs and their SU.
type Tally struct {
	Jobs int     `json:"jobs"`
	SU   float64 `json:"su"` // what they spent (jobs with an SU figure)
	// Smaller: the jobs a smaller profile would have done, what they
	// spent, and what the recommended profile would have cost.
	Smaller        int     `json:"smaller_jobs"`
	SmallerSU      float64 `json:"smaller_su"`
	SmallerSUThere float64 `json:"smaller_su_there"`
	Saved          float64 `json:"su_saved"`
	// OOM: the jobs that ran out of GPU memory, and what they spent.
	OOM   int     `json:"oom_jobs"`
	OOMSU float64 `json:"oom_su"`
}

// SavedShare is what the smaller slices would have saved as a share of
// what the jobs spent: a whole percent ("17%"), never a bare 0% for a
// saving there is; "" when they spent nothing.
func (t Tally) SavedShare() string {
	if t.SU <= 0 {
		return ""
	}
	pct := math.Round(t.Saved / t.SU * 100)
	if pct == 0 && t.Saved > 0 {
		return "under 1%"
	}
	return strconv.FormatFloat(pct, 'f', 0, 64) + "%"
}

// ProfileTally is a profile's jobs, as they ran.
type ProfileTally struct {
	Profile string `json:"profile"`
	Tally
}

// UserTally is a user's jobs.
type UserTally struct {
	User    string `json:"user"`
	Scripts int    `json:"scripts"` // listed scripts
	Tally
}

// Script is one user's script whose jobs a smaller profile would have
// done. A job not linked to a script (its script unknown to slurmdbd) is
// grouped with the user's jobs of the same name, CPUs, memory and
// partition.
type Script struct {
	User        string   `json:"user"`
	Name        string   `json:"job_name"`
	Fingerprint string   `json:"fingerprint,omitempty"` // "" for jobs grouped by name
	Path        string   `json:"script,omitempty"`      // where it was submitted from, when known
	Jobs        int      `json:"jobs"`                  // its jobs that a smaller profile would have done
	JobIDs      []string `json:"job_ids"`               // the first MaxJobIDs of them
	RanOn       []string `json:"ran_on"`                // the profiles they ran on
	Recommended string   `json:"recommended"`
	Request     string   `json:"request"`              // the sbatch option that asks for it
	TimeLimit   string   `json:"time_limit,omitempty"` // the --time it needs, when longer than the jobs'
	Basis       string   `json:"basis"`
	Runs        int      `json:"runs"` // the runs the judgement rests on
	// The GPU memory figure recommend judged by (SeenMiB, as MeasuredBy
	// saw it) and the need read from it (NeedMiB: with a margin for what a
	// sampler's interval misses). MemoryKind says what it proves, as
	// advisor.MemoryNeedJSON.Kind does: allocated or peak, the need; oom,
	// at least that (an out-of-memory message's bound); ceiling, at most
	// that (a caching or preallocating framework's peak, HeldBy saying
	// whose); "": no figure, the profile fits by a run that completed
	// (Fits).
	SeenMiB    float64 `json:"gpu_mem_seen_mib"`
	NeedMiB    float64 `json:"gpu_mem_need_mib"`
	MemoryKind string  `json:"gpu_mem_kind"`
	HeldBy     string  `json:"gpu_mem_held_by,omitempty"`
	MeasuredBy string  `json:"measured_by"`
	// Fits is recommend's reason that the recommended profile is a low
	// risk, where no memory figure gives one ("completed on 1g.10gb in 2
	// runs").
	Fits      string  `json:"fits,omitempty"`
	UsableMiB float64 `json:"usable_mib"` // the recommended profile's
	// The resources the newest job asked for: what tells apart scripts
	// grouped by job name.
	CPUs      int64   `json:"cpus"`
	MemMiB    float64 `json:"mem_mib"`
	Partition string  `json:"partition"`
	// RanRequest is the sbatch option of the profile the jobs ran on,
	// when they all ran on one: the line to replace.
	RanRequest string `json:"ran_request,omitempty"`
	// RuntimeRatio is the recommended profile's runtime over the one the
	// jobs ran on (>1: slower there); RanS the runtime there, RuntimeS
	// and RuntimeMaxS the one expected on the recommended profile and the
	// top of its range (0: unknown).
	RuntimeRatio float64 `json:"runtime_ratio"`
	RanS         float64 `json:"ran_s"`
	RuntimeS     float64 `json:"runtime_s"`
	RuntimeMaxS  float64 `json:"runtime_max_s"`
	SUSpent      float64 `json:"su_spent"`
	SUThere      float64 `json:"su_there"`
	SUSaved      float64 `json:"su_saved"`
	Why          string  `json:"why"`
}

// Period says when the jobs ended, in the report's own time zone: a
// calendar month as one ("in November 2026 (CET)"), whole days as dates
// with the last one included ("from 2026-11-01 to 2026-11-14"), else
// times, the end excluded.
func (rep *Report) Period() string {
	from, until := rep.From, rep.Until
	ref := until
	if ref.IsZero() {
		ref = from
	}
	zone, _ := ref.Zone()
	midnight := func(t time.Time) bool {
		return t.IsZero() || t.Equal(time.Date(t.Year(), t.Month(), t.Day(), 0, 0, 0, 0, t.Location()))
	}
	days := midnight(from) && midnight(until)
	switch {
	case from.IsZero() && until.IsZero():
		return "at any time"
	case days && !from.IsZero() && from.Day() == 1 && until.Equal(from.AddDate(0, 1, 0)):
		return fmt.Sprintf("in %s (%s)", from.Format("January 2006"), zone)
	case days && from.IsZero():
		return fmt.Sprintf("up to and including %s (%s)", until.AddDate(0, 0, -1).Format(time.DateOnly), zone)
	case days && until.IsZero():
		return fmt.Sprintf("since %s (%s)", from.Format(time.DateOnly), zone)
	case days:
		return fmt.Sprintf("from %s to %s (%s)", from.Format(time.DateOnly), until.AddDate(0, 0, -1).Format(time.DateOnly), zone)
	case from.IsZero():
		return fmt.Sprintf("before %s (%s)", until.Format("2006-01-02 15:04"), zone)
	case until.IsZero():
		return fmt.Sprintf("since %s (%s)", from.Format("2006-01-02 15:04"), zone)
	}
	return fmt.Sprintf("from %s to %s (%s)", from.Format("2006-01-02 15:04"), until.Format("2006-01-02 15:04"), zone)
}

// File is the script's file where the user submitted it from; "" when
// only slurmdbd's copy of it is known (a site-wide collect links a job to
// it as sacct:CLUSTER/ID) or none is.
func (s Script) File() string {
	if strings.HasPrefix(s.Path, "sacct:") {
		return ""
	}
	return s.Path
}

// OOMJob is a job that ran out of GPU memory.
type OOMJob struct {
	User    string  `json:"user"`
	JobID   string  `json:"job_id"`
	Name    string  `json:"job_name"`
	Profile string  `json:"profile"`
	SU      float64 `json:"su"`
	NeedMiB float64 `json:"gpu_mem_need_mib,omitempty"` // what the error asked for, when it said
	// NeedKind says what NeedMiB proves (advisor.MemoryNeedJSON.Kind):
	// oom, the error's lower bound; else the script's need as recommend
	// judged it.
	NeedKind string `json:"gpu_mem_kind,omitempty"`
	Fits     string `json:"fits,omitempty"` // the profile recommend names for its script, when bigger
}

// Unjudged is why some jobs could not be judged.
type Unjudged struct {
	Reason string  `json:"reason"`
	Jobs   int     `json:"jobs"`
	SU     float64 `json:"su"`
	// Examples name the first few scripts, "user job-name: detail".
	Examples []string `json:"examples,omitempty"`
}

// MaxExamples bounds the scripts an unjudged reason names.
const MaxExamples = 3

// UnknownProfile names the row of the jobs on a GPU type the site file
// does not know.
const UnknownProfile = "(unknown GPU type)"

// MaxJobIDs bounds the job ids a script lists.
const MaxJobIDs = 8

// Why jobs go unjudged.
const (
	noCharge     = "no SU figure: elapsed time or CPUs missing from accounting"
	noMemory     = "no GPU memory figure (neither the monitor, jobstats nor Slurm's gres/gpumem measured them)"
	noRuntime    = "the runtime on the smaller profile is unknown"
	notAdvisable = "recommend could not judge the script"
	noProfile    = "no profile is safe to recommend yet (runs that reached their time limit, failed, or ran out of host memory)"
	onlyCeiling  = "their GPU memory figure is only a ceiling (a caching or preallocating framework's peak), too close to a smaller slice's memory to tell whether it fits"
	notPriced    = "the smaller profile recommend names has no price for the job (its partition or QoS)"
)

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

// Build reads the GPU jobs that ended in the period from st and judges
// each user's scripts as recommend would.
func Build(ctx context.Context, st *history.Store, req Request) (*Report, error) {
	recs, err := st.History(ctx, history.HistoryFilter{Ended: req.Period, GPU: true})
	if err != nil {
		return nil, fmt.Errorf("read the jobs that ended in the period: %w", err)
	}
	th := req.Thresholds
	b := &builder{site: req.Site, th: th, peers: req.Peers, rep: &Report{Site: req.Site.Name, From: req.Period.From, Until: req.Period.Before, User: req.User,
		Thresholds: Thresholds{MinSUSaved: th.MinSUSaved, MinRuns: th.MinRuns}},
		profiles: map[string]*Tally{}, users: map[string]*UserTally{}, unjudged: map[string]*Unjudged{}}
	for _, p := range advisor.OrderedProfiles(req.Site) {
		b.order = append(b.order, p.Name)
	}
	groups := b.group(recs, req.User)
	named, err := namedRuns(ctx, st, groups, req.Period)
	if err != nil {
		return nil, err
	}
	for i, g := range groups {
		if err := b.judge(ctx, st, g, named[g.key]); err != nil {
			return nil, err
		}
		if req.Progress != nil {
			req.Progress(i+1, len(groups))
		}
	}
	b.finish()
	return b.rep, nil
}

type builder struct {
	site     *catalog.Site
	th       catalog.Report
	rep      *Report
	profiles map[string]*Tally
	users    map[string]*UserTally
	unjudged map[string]*Unjudged
	order    []string // the site's profiles, smallest first
	peers    func(fingerprint string) []advisor.Peer
}

// job is a job of the period with its price as it ran.
type job struct {
	rec *history.JobRecord
	su  float64
}

// group is one user's jobs of one script.
type group struct {
	key, user, name, fingerprint, path string
	jobs                               []job
}

// group prices every job, counts it in the totals, and groups the jobs by
// user and script, in a stable order.
func (b *builder) group(recs []history.JobRecord, user string) []*group {
	byKey := map[string]*group{}
	var keys []string
	for i := range recs {
		r := &recs[i]
		if user != "" && r.User != user || !slurm.TerminalState(r.State) || neverRan(r) {
			continue
		}
		ch, ok := advisor.RecordCharge(b.site, r)
		j := job{rec: r, su: ch.SU}
		b.count(r, func(t *Tally) { t.Jobs++; t.SU += j.su })
		switch {
		case r.Profile == "":
			b.skip(unknownGPU(r), j, "")
			continue
		case !ok:
			b.skip(noCharge, j, "")
			continue
		}
		key := groupKey(r)
		g := byKey[key]
		if g == nil {
			g = &group{key: key, user: r.User, name: r.Name, fingerprint: r.Fingerprint, path: r.Script}
			byKey[key] = g
			keys = append(keys, key)
		}
		g.jobs = append(g.jobs, j)
	}
	slices.Sort(keys)
	out := make([]*group, len(keys))
	for i, k := range keys {
		out[i] = byKey[k]
	}
	return out
}

// neverRan: a job cancelled before it started spent nothing.
func neverRan(r *history.JobRecord) bool { return r.ElapsedS != nil && *r.ElapsedS == 0 }

// namedRuns are the runs of the groups not linked to a script (grouped by
// job name and resources), each from every job the history has of that
// user's name and resources, by group key: the group's own jobs of the
// period, and those that ended outside it.
func namedRuns(ctx context.Context, st *history.Store, groups []*group, period history.Period) (map[string][]advisor.Run, error) {
	var names []history.UserJobName
	seen := map[history.UserJobName]bool{}
	out := map[string][]advisor.Run{}
	for _, g := range groups {
		if g.fingerprint != "" {
			continue
		}
		for _, j := range g.jobs {
			out[g.key] = append(out[g.key], advisor.RunsFromRecord(j.rec)...)
		}
		if n := (history.UserJobName{User: g.user, Name: g.name}); !seen[n] {
			seen[n] = true
			names = append(names, n)
		}
	}
	if period.IsZero() {
		return out, nil // every job of the history is the period's
	}
	const perQuery = 400 // SQLite's parameters per statement are bounded
	for len(names) > 0 {
		chunk := names[:min(perQuery, len(names))]
		names = names[len(chunk):]
		recs, err := st.History(ctx, history.HistoryFilter{GPU: true, Named: chunk, EndedOutside: period})
		if err != nil {
			return nil, fmt.Errorf("read the runs of jobs not linked to a script: %w", err)
		}
		for i := range recs {
			if r := &recs[i]; r.Fingerprint == "" {
				k := groupKey(r)
				out[k] = append(out[k], advisor.RunsFromRecord(r)...)
			}
		}
	}
	return out, nil
}

// groupKey is a job's user and script: its fingerprint, else its name and
// the resources it asked for.
func groupKey(r *history.JobRecord) string {
	if r.Fingerprint != "" {
		return r.User + "\x00fp:" + r.Fingerprint
	}
	cpus, mem := int64(0), 0.0
	if r.CPUs != nil {
		cpus = *r.CPUs
	}
	if r.ReqMemMiB != nil {
		mem = *r.ReqMemMiB
	}
	return fmt.Sprintf("%s\x00name:%s\x00%d\x00%g\x00%s", r.User, r.Name, cpus, mem, r.Partition)
}

// count adds to the tallies of the job's profile, its user and the total.
func (b *builder) count(r *history.JobRecord, add func(*Tally)) {
	p := b.profiles[r.Profile]
	if p == nil {
		p = &Tally{}
		b.profiles[r.Profile] = p
	}
	u := b.users[r.User]
	if u == nil {
		u = &UserTally{User: r.User}
		b.users[r.User] = u
	}
	add(p)
	add(&u.Tally)
	add(&b.rep.Total)
}

// skip counts a job that could not be judged, and names its script, up
// to MaxExamples of them, where an example says more than the reason.
func (b *builder) skip(reason string, j job, example string) {
	u := b.unjudged[reason]
	if u == nil {
		u = &Unjudged{Reason: reason}
		b.unjudged[reason] = u
	}
	u.Jobs++
	u.SU += j.su
	if example != "" && len(u.Examples) < MaxExamples && !slices.Contains(u.Examples, example) {
		u.Examples = append(u.Examples, example)
	}
}

// judge recommends a profile for the group's script from every run the
// history has of it, then sorts its jobs of the period: out of memory, on
// a bigger profile than needed (with what the recommended one would have
// cost), right-sized, or not judged and why.
func (b *builder) judge(ctx context.Context, st *history.Store, g *group, named []advisor.Run) error {
	runs := named
	if g.fingerprint != "" {
		var err error
		if runs, err = advisor.GatherRuns(ctx, g.fingerprint, st); err != nil {
			return fmt.Errorf("read the runs of script %s: %w", g.fingerprint, err)
		}
	}
	newest := g.jobs[0].rec // History lists the newest first
	var rec *advisor.Recommendation
	var err error
	var peers []advisor.Peer
	if b.peers != nil && advisor.NeedsPrior(runs) {
		peers = b.peers(g.fingerprint)
	}
	if len(runs) >= b.th.MinRuns {
		rec, err = advisor.Recommend(b.site, advisor.Job{Script: g.label(), Fingerprint: g.fingerprint,
			Resources: resourcesOf(b.site, newest), Runs: runs, User: g.user, Peers: peers, Reads: scriptAt(g.path, g.fingerprint)},
			advisor.Options{Objective: advisor.ObjectiveSU})
	}
	sc := Script{User: g.user, Name: g.name, Fingerprint: g.fingerprint, Path: g.path, Runs: len(runs)}
	for _, j := range g.jobs {
		b.place(&sc, rec, err, j)
	}
	if sc.Jobs == 0 {
		return nil
	}
	// Saved from the script's unrounded sums, as the tallies add it up.
	sc.SUSaved = advisor.RoundSU(sc.SUSpent - sc.SUThere)
	sc.SUSpent, sc.SUThere = advisor.RoundSU(sc.SUSpent), advisor.RoundSU(sc.SUThere)
	if sc.SUSaved < b.th.MinSUSaved {
		below := &b.rep.Below
		below.Scripts++
		below.Jobs += sc.Jobs
		below.SU += sc.SUSpent
		below.SUThere += sc.SUThere
		below.Saved += sc.SUSaved
		return nil
	}
	b.users[g.user].Scripts++
	b.rep.Scripts = append(b.rep.Scripts, sc)
	return nil
}

// place sorts one job of the group by the script's recommendation.
func (b *builder) place(sc *Script, rec *advisor.Recommendation, recErr error, j job) {
	r := j.rec
	example := r.User + " " + r.Name
	if r.OOM() == slurm.OOMGPU {
		b.outOfMemory(rec, j)
		return
	}
	switch {
	case recErr != nil:
		b.skip(notAdvisable, j, example+": "+recErr.Error())
		return
	case rec == nil:
		b.skip(fewRuns(b.th.MinRuns), j, "")
		return
	case rec.Recommended == nil:
		b.skip(noProfile, j, example+": "+rec.Reason)
		return
	case b.rank(*rec.Recommended) >= b.rank(r.Profile):
		// Right-sized, unless recommend could not tell whether a smaller
		// slice fits: the memory evidence it lacks is the reason.
		if reason, detail, open := b.unknownSmaller(rec, r.Profile); open {
			b.skip(reason, j, example+": "+detail)
		}
		return
	}
	// The profile recommend names is one it judged a low OOM risk (by a
	// run that completed there or on a smaller slice, or a memory figure):
	// its choice is the report's, on no second rule.
	there, here := profileAdvice(rec, *rec.Recommended), profileAdvice(rec, r.Profile)
	ratio, ok := runtimeRatio(there, here)
	if !ok {
		b.skip(noRuntime, j, "")
		return
	}
	alt, ok := chargeOn(b.site, r, there, ratio)
	switch {
	case !ok:
		b.skip(notPriced, j, example+": "+*rec.Recommended)
		return
	case alt >= j.su:
		return // the smaller profile would not have cost less
	}
	b.count(r, func(t *Tally) {
		t.Smaller++
		t.SmallerSU += j.su
		t.SmallerSUThere += alt
		t.Saved += j.su - alt
	})
	b.addJob(sc, rec, there, here, ratio, j, alt)
}

// outOfMemory lists a job that ran out of GPU memory, with the script's
// need and the smallest bigger profile that fits it: the one recommend
// names, else the smallest bigger one it judges a low risk.
func (b *builder) outOfMemory(rec *advisor.Recommendation, j job) {
	r := j.rec
	b.count(r, func(t *Tally) { t.OOM++; t.OOMSU += j.su })
	o := OOMJob{User: r.User, JobID: r.JobID, Name: r.Name, Profile: r.Profile, SU: advisor.RoundSU(j.su)}
	if r.GPUNeedMiB != nil {
		o.NeedMiB, o.NeedKind = math.Round(*r.GPUNeedMiB), advisor.NeedOOM
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
		if pa := profileAdvice(rec, p); b.rank(p) > b.rank(ran) && pa != nil && pa.OOMRisk == advisor.RiskLow {
			return p
		}
	}
	return ""
}

// addJob adds a smaller-slice job to its script's row.
func (b *builder) addJob(sc *Script, rec *advisor.Recommendation, there, here *advisor.ProfileAdvice, ratio float64, j job, alt float64) {
	if sc.Jobs == 0 {
		sc.Recommended, sc.Basis, sc.RuntimeRatio = there.Profile, rec.Basis, math.Round(ratio*100)/100
		if p, ok := b.site.ProfileNamed(there.Profile); ok {
			sc.Request = p.Request
		}
		sc.TimeLimit, sc.UsableMiB = there.TimeLimit, there.UsableMiB
		sc.memory(rec, there)
		sc.RanS, sc.RuntimeS = *here.RuntimeS, *there.RuntimeS
		if r := there.RuntimeRangeS; r != nil {
			sc.RuntimeMaxS = r[1]
		}
		if j.rec.CPUs != nil {
			sc.CPUs = *j.rec.CPUs
		}
		if j.rec.ReqMemMiB != nil {
			sc.MemMiB = *j.rec.ReqMemMiB
		}
		sc.Partition = j.rec.Partition
		sc.Why = sc.why()
	}
	sc.Jobs++
	if len(sc.JobIDs) < MaxJobIDs {
		sc.JobIDs = append(sc.JobIDs, j.rec.JobID)
	}
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

// unknownSmaller is why the job, on profile ran, is not judged right-sized
// though recommend names no smaller profile: one smaller than ran whose OOM
// risk recommend could not judge (it names the probe that tells), for want
// of a memory figure or with a figure that is only a ceiling; and the
// judgement in recommend's words.
func (b *builder) unknownSmaller(rec *advisor.Recommendation, ran string) (reason, detail string, open bool) {
	for _, pa := range rec.Profiles {
		if b.rank(pa.Profile) < 0 || b.rank(pa.Profile) >= b.rank(ran) || pa.OOMRisk != advisor.RiskUnknown {
			continue
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
	if n.Kind == advisor.NeedCeiling {
		sc.HeldBy = heldBy(rec.GPUMemHolder)
	}
}

// heldBy says what held the memory of a peak that is only a ceiling:
// "PyTorch's cache".
func heldBy(h *advisor.MemoryHolder) string {
	switch {
	case h == nil || h.Software == "":
		return "a cache that grew with the device"
	case h.Kind == advisor.HolderPreallocates:
		return h.Software + "'s preallocation"
	}
	return h.Software + "'s cache"
}

// MemoryWords say what the script's GPU memory figure proves, by its
// kind: "needs 3.8 GiB", "needs at least 10.4 GiB" (an out-of-memory
// message's bound), "needs at most 6.0 GiB" (a framework's peak held
// beyond its need); "" without a figure.
func (s Script) MemoryWords() string {
	mib := advisor.FormatMiB(s.NeedMiB)
	switch s.MemoryKind {
	case "":
		return ""
	case advisor.NeedOOM:
		return "needs at least " + mib
	case advisor.NeedCeiling:
		return "needs at most " + mib
	}
	return "needs " + mib
}

// why is the script's row's reason: what its memory figure proves of the
// recommended profile, or the run that proves it fits.
func (s Script) why() string {
	if s.MemoryKind == "" {
		return s.Fits + " (no GPU memory figure)"
	}
	by := s.MeasuredBy
	if s.HeldBy != "" {
		by += ": held by " + s.HeldBy
	}
	return fmt.Sprintf("%s of the %s usable on %s (%s)", s.MemoryWords(), advisor.FormatMiB(s.UsableMiB), s.Recommended, by)
}

func profileAdvice(rec *advisor.Recommendation, profile string) *advisor.ProfileAdvice {
	for i := range rec.Profiles {
		if rec.Profiles[i].Profile == profile {
			return &rec.Profiles[i]
		}
	}
	return nil
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

// label names the group's script for recommend's messages.
func (g *group) label() string {
	if g.path != "" {
		return g.path
	}
	return g.name
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

// finish orders and rounds what the report lists.
func (b *builder) finish() {
	rep := b.rep
	for _, p := range b.order {
		if t, ok := b.profiles[p]; ok {
			rep.Profiles = append(rep.Profiles, ProfileTally{Profile: p, Tally: t.rounded()})
		}
	}
	if t, ok := b.profiles[""]; ok { // so that the rows add up to the total
		rep.Profiles = append(rep.Profiles, ProfileTally{Profile: UnknownProfile, Tally: t.rounded()})
	}
	for _, u := range b.users {
		u.Tally = u.Tally.rounded()
		rep.Users = append(rep.Users, *u)
	}
	slices.SortFunc(rep.Users, func(x, y UserTally) int {
		return cmp.Or(cmp.Compare(y.Saved, x.Saved), cmp.Compare(y.SU, x.SU), cmp.Compare(x.User, y.User))
	})
	slices.SortStableFunc(rep.Scripts, func(x, y Script) int { return cmp.Compare(y.SUSaved, x.SUSaved) })
	slices.SortStableFunc(rep.OOMs, func(x, y OOMJob) int { return cmp.Or(cmp.Compare(y.SU, x.SU), compareIDs(x.JobID, y.JobID)) })
	for _, u := range b.unjudged {
		u.SU = advisor.RoundSU(u.SU)
		rep.Unjudged = append(rep.Unjudged, *u)
	}
	slices.SortFunc(rep.Unjudged, func(x, y Unjudged) int { return cmp.Or(cmp.Compare(y.SU, x.SU), cmp.Compare(x.Reason, y.Reason)) })
	rep.Total = rep.Total.rounded()
	rep.Below.SU, rep.Below.SUThere, rep.Below.Saved = advisor.RoundSU(rep.Below.SU), advisor.RoundSU(rep.Below.SUThere), advisor.RoundSU(rep.Below.Saved)
}

func (t Tally) rounded() Tally {
	t.SU, t.SmallerSU, t.SmallerSUThere, t.OOMSU = advisor.RoundSU(t.SU), advisor.RoundSU(t.SmallerSU), advisor.RoundSU(t.SmallerSUThere), advisor.RoundSU(t.OOMSU)
	t.Saved = advisor.RoundSU(t.Saved)
	return t
}

// compareIDs orders job ids numerically where they are numbers.
func compareIDs(x, y string) int {
	a, errA := strconv.ParseInt(x, 10, 64)
	c, errC := strconv.ParseInt(y, 10, 64)
	if errA == nil && errC == nil {
		return cmp.Compare(a, c)
	}
	return cmp.Compare(x, y)
}

// scriptAt is the script at path while it is still the one judged (the
// same fingerprint): what it runs says what its memory peaks prove, as
// recommend reads it. nil where it is gone, changed or unreadable.
func scriptAt(path, fingerprint string) *slurm.Script {
	if path == "" || fingerprint == "" {
		return nil
	}
	s, err := slurm.ReadScript(path)
	if err != nil || s.Fingerprint() != fingerprint {
		return nil
	}
	return s
}
