package session

import (
	"fmt"
	"math"
	"regexp"
	"slices"
	"strings"

	"github.com/migadvisor/migadvisor/advisor/base/history"
	"github.com/migadvisor/migadvisor/advisor/base/memory"
	"github.com/migadvisor/migadvisor/catalog"
	"github.com/migadvisor/migadvisor/internal/textutil"
)

// Advice is the judgement of a user's sessions of one name. Its JSON names
// are an interface: Open OnDemand's form reads them.
type Advice struct {
	Session string `json:"session"` // the job name
	User    string `json:"user"`
	Site    string `json:"site"`
	// Sessions are those the advice weighs: the newest ended ones of one
	// GPU of a profile the site knows (at most Request.Last); Found, every
	// ended session of the name.
	Sessions   int `json:"sessions"`
	Found      int `json:"sessions_found"`
	WithMemory int `json:"with_memory"` // of Sessions, those with a GPU memory figure or an OOM
	// PeakMiB is the largest peak GPU memory of the sessions weighed, as
	// measured (no margin); Need what the figures prove, in words
	// ("≤ 2.9 GiB": a ceiling); "" when nothing is known.
	PeakMiB   *float64 `json:"peak_gpu_mem_mib"`
	Need      string   `json:"need"`
	HeldBy    string   `json:"held_by,omitempty"` // what held the memory, where a peak is no need
	OOMs      int      `json:"ooms"`              // sessions that ran out of GPU memory
	Asked     string   `json:"asked"`             // the profile the newest session asked for; "": none
	AskedGRES string   `json:"asked_gres"`
	Partition string   `json:"asked_partition"`
	CPUs      int      `json:"asked_cpus"`
	MemMiB    float64  `json:"asked_mem_mib"`
	// AskedSUPerHour and SUPerHour are what an hour of a session costs with
	// the profile asked for and the one recommended, its CPUs and memory
	// as asked: null when unknown.
	AskedSUPerHour *float64 `json:"asked_su_per_hour"`
	Recommended    string   `json:"recommended"` // "": none (Why says why)
	GRES           string   `json:"gres"`        // the request to use, in the site's spelling: gpu:a100_10g:1
	SUPerHour      *float64 `json:"su_per_hour"`
	// Help is the one line a form shows; "" when nothing is recommended.
	Help string `json:"help"`
	// Why is the reason, in one sentence, that nothing is recommended.
	Why string `json:"why"`
	// DidYouMean are the names of the user's sessions (in their own
	// history) that a name with none may have been meant as, nearest first.
	DidYouMean []string `json:"did_you_mean,omitempty"`
	// Reason is why the recommended profile fits (its OOM risk's reason).
	Reason string `json:"reason,omitempty"`
	// Change is the line to change: the --gres of salloc or srun, or the
	// choice in OnDemand's form; "" when there is nothing to change.
	Change   string        `json:"change"`
	OnDemand bool          `json:"ondemand"`
	Pricing  string        `json:"pricing"`
	Profiles []ProfileRisk `json:"profiles"`
	Past     []Past        `json:"past_sessions"`

	// need is what the sessions' figures prove (memory.EstimateNeed), for
	// GPUMemFigure: the form reads Need's words, the admins' report the
	// figure.
	need *memory.Need
}

// GPUMemFigure is the GPU memory figure the advice judged by, as a
// script's recommendation gives one (its gpu_mem_need): the need, else
// the ceiling of a framework's peak, with what held the memory; nil when
// the sessions weighed have neither.
func (a *Advice) GPUMemFigure() (*memory.NeedJSON, memory.Holder) {
	switch {
	case a.need == nil:
		return nil, memory.Holder{}
	case a.need.Known():
		return a.need.JSON(), a.need.Holder
	case a.need.Ceiling != nil:
		return a.need.Ceiling.JSON(), a.need.Ceiling.Holder
	}
	return nil, a.need.Holder
}

// ProfileRisk is one profile, judged for the sessions.
type ProfileRisk struct {
	Profile   string  `json:"profile"`
	OOMRisk   string  `json:"oom_risk"` // low, medium, high or unknown
	Reason    string  `json:"oom_risk_reason"`
	SUPerHour float64 `json:"su_per_hour"`
	// Unpriced is why the site's formula gave the profile no price ("": it
	// did): SUPerHour is then 0, and the profile is not recommended.
	Unpriced string `json:"unpriced,omitempty"`
	GRES     string `json:"gres"`
}

// Past is one session the advice weighs, newest first.
type Past struct {
	JobID      string   `json:"job_id"`
	Cluster    string   `json:"cluster"`
	Profile    string   `json:"profile"`
	State      string   `json:"state"`
	HeldS      *int64   `json:"held_s"`
	PeakMiB    *float64 `json:"peak_gpu_mem_mib"`
	PeakSource string   `json:"peak_source,omitempty"` // monitor, jobstats or sacct
	OOM        bool     `json:"gpu_oom"`
}

// Pricing says how sessions are priced, in one sentence.
const Pricing = "SU per hour held (the site's formula for the session's CPUs, memory and GPU): a session is charged " +
	"for every hour it is held, idle or not, so it is priced per hour, not per unit of work"

// Judge judges the sessions of the request's name among recs, the user's
// jobs of that name, newest first.
func Judge(req Request, recs []history.JobRecord) *Advice {
	last := req.Last
	if last <= 0 {
		last = DefaultLast
	}
	a := &Advice{Session: req.Name, User: req.User, Site: req.Site.Name, OnDemand: OnDemand(req.Name), Pricing: Pricing,
		Profiles: []ProfileRisk{}, Past: []Past{}}
	var found, weighed []history.JobRecord
	for _, r := range recs {
		if isSession(&r) && ended(&r) {
			found = append(found, r)
			if _, ok := req.Site.Profile(r.Profile); ok && r.GPUCount == 1 && len(weighed) < last {
				weighed = append(weighed, r)
			}
		}
	}
	a.Found, a.Sessions = len(found), len(weighed)
	if len(weighed) == 0 {
		a.Why = whyNone(req, found)
		return a
	}
	ask := askOf(&weighed[0])
	if req.Asking != nil {
		ask = *req.Asking
	}
	a.asked(req.Site, ask)
	for _, r := range weighed {
		a.Past = append(a.Past, pastOf(&r))
		if measured(&r) {
			a.WithMemory++
		}
		if r.GPUOOM != "" {
			a.OOMs++
		}
		if p := r.GPUMemPeakMiB(); p != nil && (a.PeakMiB == nil || *p > *a.PeakMiB) {
			rounded := math.Round(*p*10) / 10 // a figure converted from GB: 3915.8, not 3915.775999069214
			a.PeakMiB = &rounded
		}
	}
	a.judge(req.Site, memoryRuns(req.Site, weighed), ask)
	return a
}

// asked is what the session priced asks for (the newest past one's, or
// the one being asked for), and its price per hour.
func (a *Advice) asked(site *catalog.Site, ask Asking) {
	a.Asked, a.Partition, a.CPUs, a.MemMiB = ask.Profile, ask.Partition, ask.CPUs, ask.MemMiB
	if p, ok := site.Profile(a.Asked); ok {
		a.AskedGRES = gres(p)
		if su, err := perHour(site, p, ask); err == nil {
			a.AskedSUPerHour = &su // else "?": the profile's row says why
		}
	}
}

// askOf is what a past session asked for.
func askOf(r *history.JobRecord) Asking {
	ask := Asking{Profile: r.Profile, Partition: r.Partition, QoS: r.QOS}
	if r.CPUs != nil {
		ask.CPUs = int(*r.CPUs)
	}
	if r.ReqMemMiB != nil {
		ask.MemMiB = *r.ReqMemMiB
	}
	return ask
}

// judge weighs each profile's OOM risk, and recommends the smallest whose
// risk is low.
func (a *Advice) judge(site *catalog.Site, runs []memory.Run, ask Asking) {
	need := memory.EstimateNeed(runs)
	a.need = &need
	var needMiB, ceilingMiB *float64
	if need.Known() {
		needMiB = &need.MiB
	}
	if need.Ceiling != nil {
		ceilingMiB = &need.Ceiling.MiB
		a.HeldBy = need.Ceiling.Holder.Words()
	}
	a.Need = memory.NeedWords(needMiB, ceilingMiB, need.Known() && need.Kind == memory.NeedOOM)
	for _, p := range site.ProfilesBySize() {
		risk := memory.OOMRisk(p.Name, p.UsableMemory.MiB(), runs, need, site.Advice.LowRiskShare)
		pr := ProfileRisk{Profile: p.Name, OOMRisk: risk.Level, Reason: inSessions(risk.Reason), GRES: gres(p)}
		su, err := perHour(site, p, ask)
		pr.SUPerHour = round(su)
		if err != nil {
			pr.Unpriced = fmt.Sprintf("no price: the site's SU formula failed on %s: %v", p.Name, err)
		}
		a.Profiles = append(a.Profiles, pr)
	}
	if a.WithMemory == 0 {
		who := fmt.Sprintf("none of your last %d sessions named %s has a", a.Sessions, a.Session)
		if a.Sessions == 1 {
			who = fmt.Sprintf("your last session named %s has no", a.Session)
		}
		a.Why = who + " GPU memory figure: neither jobstats nor Slurm's gres/gpumem recorded one (gres/gpumem never does on a MIG " +
			"slice), nor the monitor, which measures what runs under it inside the session ('migadvisor monitor -- jupyter lab')"
		return
	}
	// An unpriced profile is never recommended: its 0 SU/h would read as free.
	i := slices.IndexFunc(a.Profiles, func(p ProfileRisk) bool { return p.OOMRisk == memory.RiskLow && p.Unpriced == "" })
	if i < 0 {
		smallest := a.Profiles[0]
		a.Why = fmt.Sprintf("no profile is a low OOM risk from your last %s named %s: %s, the smallest, is %s (%s)",
			textutil.Plural(a.Sessions, "session"), a.Session, smallest.Profile, smallest.OOMRisk, smallest.Reason)
		return
	}
	rec := a.Profiles[i]
	su := rec.SUPerHour
	a.Recommended, a.GRES, a.SUPerHour, a.Reason = rec.Profile, rec.GRES, &su, rec.Reason
	a.Help = a.helpLine(site)
	a.Change = a.changeLine(site)
}

// chargeJob is the SU formula: Site.Charge, which a test replaces to see a
// price fail.
var chargeJob = (*catalog.Site).Charge

// perHour is what an hour of a session costs on profile p with the CPUs,
// memory, partition (where p may run in it) and QoS asked for; an error
// where the site's formula gives no price.
func perHour(site *catalog.Site, p *catalog.Profile, ask Asking) (float64, error) {
	u := catalog.Usage{Profile: p.Name, GPUs: 1, Hours: 1, QoS: ask.QoS, Partition: ask.Partition, CPUs: ask.CPUs, MemMiB: ask.MemMiB}
	if len(p.Partitions) > 0 && !slices.Contains(p.Partitions, u.Partition) {
		u.Partition = "" // the profile's first partition
	}
	job, err := site.JobOf(u)
	if err != nil {
		return 0, err
	}
	ch, err := chargeJob(site, job)
	if err != nil {
		return 0, err
	}
	return round(ch.SUPerHour), nil
}

// round keeps a price's figure as the formula gives it, without float noise.
func round(su float64) float64 { return math.Round(su*1e4) / 1e4 }

// gres is the request for one of p in the site's own spelling:
// gpu:a100_10g:1.
func gres(p *catalog.Profile) string {
	if g, ok := strings.CutPrefix(p.Request, "--gres="); ok {
		return g
	}
	if p.GRESType == "" {
		return fmt.Sprintf("gpu:%d", max(p.GPUCount, 1))
	}
	return fmt.Sprintf("gpu:%s:%d", p.GRESType, max(p.GPUCount, 1))
}

// collectSessions says how sessions reach a history.
const collectSessions = "'migadvisor collect --since 30d' reads your jobs, sessions too, from Slurm accounting"

// whyNone says why no session can be weighed: none of the name, or none of
// one GPU of a profile the site knows.
func whyNone(req Request, found []history.JobRecord) string {
	if len(found) == 0 {
		read := req.Read
		if read == "" {
			read = "the histories read"
		}
		return fmt.Sprintf("no ended session named %s of user %s in %s: %s", req.Name, req.User, read, collectSessions)
	}
	multi := slices.ContainsFunc(found, func(r history.JobRecord) bool { return r.GPUCount > 1 })
	what := "asked for no GPU of a profile site " + req.Site.Name + " knows"
	if multi {
		what += " (or for several GPUs, which no MIG slice serves)"
	}
	return fmt.Sprintf("your %s named %s %s", textutil.Plural(len(found), "session"), req.Name, what)
}

// pastOf is a session as the advice lists it.
func pastOf(r *history.JobRecord) Past {
	return Past{JobID: r.JobID, Cluster: r.Cluster, Profile: r.Profile, State: r.State, HeldS: r.ElapsedS,
		PeakMiB: r.GPUMemPeakMiB(), PeakSource: r.GPUMemSource(), OOM: r.GPUOOM != ""}
}

// runsWords are memory's counts of runs, which a session's reasons count
// as sessions: "the peak on full in 5 runs" is of 5 sessions.
var runsWords = regexp.MustCompile(`\bin (\d+) run(s?)\b`)

// inSessions says a memory reason of sessions.
func inSessions(reason string) string {
	return runsWords.ReplaceAllString(reason, "in $1 session$2")
}
