package savings

import (
	"context"
	"fmt"
	"slices"
	"strings"

	"github.com/migadvisor/migadvisor/advisor"
	"github.com/migadvisor/migadvisor/advisor/history"
	"github.com/migadvisor/migadvisor/advisor/runmodel"
	"github.com/migadvisor/migadvisor/advisor/session"
	"github.com/migadvisor/migadvisor/catalog"
	"github.com/migadvisor/migadvisor/slurm"
)

// Build reads the GPU jobs that ended in the period from st and judges
// each user's scripts as recommend would.
func Build(ctx context.Context, st *history.Store, req Request) (*Report, error) {
	recs, err := st.History(ctx, history.HistoryFilter{Ended: req.Period, GPU: true})
	if err != nil {
		return nil, fmt.Errorf("read the jobs that ended in the period: %w", err)
	}
	th := req.Thresholds
	b := &builder{site: req.Site, th: th, peers: req.Peers, heard: req.Judged, rep: &Report{Site: req.Site.Name, From: req.Period.From, Until: req.Period.Before, User: req.User,
		Thresholds: Thresholds{MinSUSaved: th.MinSUSaved, MinRuns: th.MinRuns}},
		profiles: map[string]*Tally{}, users: map[string]*UserTally{}, unjudged: map[string]*Unjudged{}}
	for _, p := range req.Site.ProfilesBySize() {
		b.order = append(b.order, p.Name)
	}
	groups := b.group(recs, req.User)
	named, err := namedRuns(ctx, st, groups, req.Period)
	if err != nil {
		return nil, err
	}
	for i, g := range groups {
		if err := b.judge(ctx, st, g, runsOf(named[g.key])); err != nil {
			return nil, err
		}
		delete(named, g.key) // a group's runs are made when it is judged, and let go after
		if req.Progress != nil {
			req.Progress(i+1, len(groups))
		}
	}
	b.finish()
	if b.rep.Total.Jobs == 0 {
		// Empty: what the history holds says why (a first collect reads the
		// last 7 days, not last month), and what to run.
		held, err := st.HeldIn(ctx, req.Period)
		if err != nil {
			return nil, err
		}
		b.rep.Held = &held
	}
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
	peers    func(fingerprint string) []runmodel.Peer
	heard    func(Judged) // Request.Judged
	skipped  string       // the reason skip last counted, for heard
}

// job is a job of the period with its price as it ran.
type job struct {
	rec *history.JobRecord
	su  float64
}

// group is one user's jobs of one script, or their sessions of one name
// (session: judged as recommend --session judges them, fingerprint and
// path "").
type group struct {
	key, user, name, fingerprint, path string
	variantPath                        bool // path is a sweep variant's file
	session                            bool
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
			b.tell(j, nil, nil, 0)
			continue
		case !ok:
			b.skip(noCharge, j, "")
			b.tell(j, nil, nil, 0)
			continue
		}
		key := groupKey(r)
		g := byKey[key]
		if g == nil {
			g = &group{key: key, user: r.User, name: r.Name, fingerprint: r.Fingerprint, path: r.Script, variantPath: r.SweepDir != ""}
			if session.IsInteractive(r) {
				// An OnDemand app's job linked to the script slurmdbd
				// stored is a session all the same: the app writes one.
				g.fingerprint, g.path, g.session, g.variantPath = "", "", true, false
			}
			byKey[key] = g
			keys = append(keys, key)
		}
		if g.variantPath && r.SweepDir == "" {
			// The script the user ran, for recommend to read and name,
			// not a probe's copy of it in the probe's directory.
			g.path, g.variantPath = r.Script, false
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

// namedRuns are the records of the runs of the groups not linked to a script (grouped by
// job name and resources), each from every job the history has of that
// user's name and resources, by group key: the group's own jobs of the
// period, and those that ended outside it.
func namedRuns(ctx context.Context, st *history.Store, groups []*group, period history.Period) (map[string][]*history.JobRecord, error) {
	var names []history.UserJobName
	seen := map[history.UserJobName]bool{}
	out := map[string][]*history.JobRecord{}
	for _, g := range groups {
		if g.fingerprint != "" || g.session { // a session's advice reads its own
			continue
		}
		for _, j := range g.jobs {
			out[g.key] = append(out[g.key], j.rec)
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
				out[k] = append(out[k], r)
			}
		}
	}
	return out, nil
}

// runsOf are the runs of a group's records. They are made one group at a
// time: made for every group at once, a year of a large site's runs would
// sit beside its records.
func runsOf(recs []*history.JobRecord) []advisor.Run {
	var runs []advisor.Run
	for _, r := range recs {
		runs = append(runs, advisor.RunsFromRecord(r)...)
	}
	return runs
}

// groupKey is a job's user and script: its fingerprint, else its name and
// the resources it asked for; a session's, the user and its name, as
// recommend --session keys them.
func groupKey(r *history.JobRecord) string {
	if session.IsInteractive(r) {
		return r.User + "\x00session:" + r.Name
	}
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

// label names the group's script for recommend's messages: its file, not
// the name a site-wide collect gives slurmdbd's copy (sacct:CLUSTER/ID),
// which no user knows.
func (g *group) label() string {
	if f := userFile(g.path); f != "" {
		return f
	}
	return g.name
}

// userFile is a script's path where its user submitted it from; "" for
// slurmdbd's copy, which a site-wide collect links as sacct:CLUSTER/ID
// (advisor/collect's linkedPrefix), an address of the history's own that
// no admin or user can open.
func userFile(path string) string {
	if strings.HasPrefix(path, slurmdbdCopy) {
		return ""
	}
	return path
}

// slurmdbdCopy starts the path of a script a site-wide collect linked from
// slurmdbd's stored copy.
const slurmdbdCopy = "sacct:"

// tell passes a job's judgement to Request.Judged: sc's row moved it when
// the row grew by it (listed is sc.Jobs before), and the reason skip last
// counted is why it was not judged.
func (b *builder) tell(j job, rec *advisor.Recommendation, sc *Script, listed int) {
	defer func() { b.skipped = "" }()
	if b.heard == nil {
		return
	}
	out := Judged{Record: j.rec, Recommendation: rec, Unjudged: b.skipped}
	if sc != nil && sc.Jobs > listed {
		out.MovedTo, out.Ratio, out.RatioMax = sc.Recommended, 1, 1 // a session is held as long
		if rec != nil {
			// This job's own ratio: a row's jobs may have run on several profiles.
			there, here := rec.Profile(sc.Recommended), rec.Profile(j.rec.Profile)
			if ratio, ok := runtimeRatio(there, here); ok {
				out.Ratio, out.RatioMax = ratio, ratio
				if r := there.RuntimeRangeS; r != nil && r[1] > *there.RuntimeS {
					out.RatioMax = r[1] / *here.RuntimeS
				}
			}
		}
	}
	b.heard(out)
}
