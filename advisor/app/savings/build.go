package savings

import (
	"context"
	"fmt"
	"maps"
	"slices"
	"strings"
	"sync"

	"github.com/migadvisor/migadvisor/advisor"
	"github.com/migadvisor/migadvisor/advisor/base/history"
	"github.com/migadvisor/migadvisor/advisor/base/runmodel"
	"github.com/migadvisor/migadvisor/advisor/base/session"
	"github.com/migadvisor/migadvisor/catalog"
	"github.com/migadvisor/migadvisor/slurm"
)

// Build reads the GPU jobs that ended in the period from st and judges
// each user's scripts as recommend would.
//
// A year of a large site is a million jobs: they are read twice, never
// all at once. A first pass reads what groups and prices each job,
// counts it, and keeps only its rows in the history, by group; then the
// groups are read whole a batch at a time, judged in order, and let go.
// Both passes see the history as it stood when the first began.
func Build(ctx context.Context, st *history.Store, req Request) (*Report, error) {
	th := req.Thresholds
	b := &builder{site: req.Site, th: th, peers: req.Peers, heard: req.Judged, rep: &Report{Site: req.Site.Name, From: req.Period.From, Until: req.Period.Before, User: req.User,
		Thresholds: Thresholds{MinSUSaved: th.MinSUSaved, MinRuns: th.MinRuns}},
		profiles: map[string]*Tally{}, users: map[string]*UserTally{}, unjudged: map[string]*Unjudged{}, examples: map[string]map[string]bool{},
		byKey: map[string]*group{}}
	for _, p := range req.Site.ProfilesBySize() {
		b.order = append(b.order, p.Name)
	}
	rd, err := st.Reader(ctx)
	if err != nil {
		return nil, fmt.Errorf("read the jobs that ended in the period: %w", err)
	}
	defer rd.Close()
	err = rd.Jobs(ctx, history.HistoryFilter{Ended: req.Period, GPU: true}, func(r *history.JobRecord, rows []int64) error {
		b.add(r, rows, req.User)
		return nil
	})
	if err != nil {
		return nil, fmt.Errorf("read the jobs that ended in the period: %w", err)
	}
	if err := b.tellUngrouped(ctx, rd); err != nil {
		return nil, fmt.Errorf("read the jobs that ended in the period: %w", err)
	}
	b.adoptNamed()
	groups := b.groups()
	// The next batch is read while one is judged: on two cores the reads
	// cost no time.
	ctx, cancel := context.WithCancel(ctx)
	batches := make(chan readBatch)
	var reading sync.WaitGroup
	reading.Add(1)
	go func() {
		defer reading.Done()
		defer close(batches)
		for from := 0; from < len(groups); {
			rb := readBatch{groups: nextBatch(groups[from:])}
			from += len(rb.groups)
			if rb.err = b.read(ctx, rd, rb.groups); rb.err != nil {
				rb.err = fmt.Errorf("read the jobs that ended in the period: %w", rb.err)
			} else {
				rb.err = namedRuns(ctx, st, rb.groups, req.Period)
			}
			select {
			case batches <- rb:
			case <-ctx.Done():
				return
			}
			if rb.err != nil {
				return
			}
		}
	}()
	defer reading.Wait() // before the Reader closes
	defer cancel()
	done := 0
	for rb := range batches {
		if rb.err != nil {
			return nil, rb.err
		}
		for _, g := range rb.groups {
			if len(g.jobs) == 0 { // never in the Reader's snapshot
				return nil, fmt.Errorf("read the jobs that ended in the period: %s's jobs of %s are no longer in the history", g.user, g.label())
			}
			if err := b.judge(ctx, st, g, runsOf(g.named)); err != nil {
				return nil, err
			}
			g.jobs, g.named = nil, nil // a group's records are read when it is judged, and let go after
			done++
			if req.Progress != nil {
				req.Progress(done, len(groups))
			}
		}
	}
	if err := ctx.Err(); err != nil {
		return nil, err // the reads stopped short
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
	examples map[string]map[string]bool // reason → every script skip named, to count those its examples leave out
	order    []string                   // the site's profiles, smallest first
	peers    func(fingerprint string) []runmodel.Peer
	heard    func(Judged) // Request.Judged
	skipped  string       // the reason skip last counted, for heard

	byKey     map[string]*group // the groups of the first pass
	seq       int32             // the first pass's jobs so far
	ungrouped ungrouped         // its jobs judged by no group, for heard
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
	// rows are its jobs' rows in the history (history.Reader.Records),
	// newest first; jobs those jobs, read whole when the group's batch
	// is (read); named the records of its runs where it is not linked to
	// a script (namedRuns).
	rows  []int64
	jobs  []job
	named []*history.JobRecord
	// seq is each row's job's place in the first pass's order, newest
	// first: the rows of adopted jobs are put back in that order.
	seq []int32
	// nameKeys are the keys by name (nameKey) of a script's jobs: their
	// names and resources. adopted are the groups by name it took in
	// (adoptNamed), whose runs are read as namedRuns reads a name's.
	nameKeys map[string]bool
	adopted  []adoptedName
}

// adoptedName is a group by name a script's group took in: its key, and
// its user's job name.
type adoptedName struct {
	key  string
	name history.UserJobName
}

// ungrouped are the jobs the first pass judged by no group (on a GPU type
// the site file lacks, or with no SU figure), with why, in their order:
// told to Request.Judged once read whole.
type ungrouped struct {
	rows []int64
	ends []int // each job's rows end at its end
	why  []string
}

// add prices a job of the first pass, counts it in the totals, and files
// it in the group of its user and script.
func (b *builder) add(r *history.JobRecord, rows []int64, user string) {
	// A job with an end but no State came from a dump that lacks it: it
	// ended, and how is unknown; counted and said, never dropped.
	noEnding := r.State == "" && r.End != nil
	if user != "" && r.User != user || !slurm.TerminalState(r.State) && !noEnding || neverRan(r) {
		return
	}
	ch, ok := advisor.RecordCharge(b.site, r)
	j := job{rec: r, su: ch.SU}
	b.count(r, func(t *Tally) { t.Jobs++; t.SU += j.su })
	switch {
	case noEnding:
		b.skip(noState, j, "")
		b.tellLater(rows)
		return
	case r.Profile == "":
		b.skip(unknownGPU(r), j, "")
		b.tellLater(rows)
		return
	case !ok:
		b.skip(noCharge, j, "")
		b.tellLater(rows)
		return
	}
	key := groupKey(r)
	g := b.byKey[key]
	if g == nil {
		g = &group{key: key, user: r.User, name: r.Name, fingerprint: r.Fingerprint, path: r.Script, variantPath: r.SweepDir != ""}
		if session.IsInteractive(r) {
			// An OnDemand app's job linked to the script slurmdbd
			// stored is a session all the same: the app writes one.
			g.fingerprint, g.path, g.session, g.variantPath = "", "", true, false
		}
		b.byKey[key] = g
	}
	if g.variantPath && r.SweepDir == "" {
		// The script the user ran, for recommend to read and name,
		// not a probe's copy of it in the probe's directory.
		g.path, g.variantPath = r.Script, false
	}
	if g.fingerprint != "" {
		if g.nameKeys == nil {
			g.nameKeys = map[string]bool{}
		}
		g.nameKeys[nameKey(r)] = true
	}
	g.rows = append(g.rows, rows...)
	for range rows {
		g.seq = append(g.seq, b.seq)
	}
	b.seq++
}

// adoptNamed joins each group by name (jobs no script is linked to) to the
// one script of its user whose jobs bear that name and ask for those
// resources. A site that set AccountingStoreFlags=job_script on some day
// has its scripts' earlier jobs unlinked: judged apart, each half of a
// script has fewer runs, and its earlier half is judged by name with no
// script to read. They are taken to be the script's, as a group by name
// takes its jobs to be one script's; where two of the user's scripts bear
// the name and resources, which one they ran is unknown, and they stay
// by name.
func (b *builder) adoptNamed() {
	owners := map[string][]*group{}
	for _, g := range b.byKey {
		for k := range g.nameKeys {
			owners[k] = append(owners[k], g)
		}
	}
	for key, g := range b.byKey {
		own := owners[key]
		if g.fingerprint != "" || g.session || len(own) != 1 || own[0].session {
			continue
		}
		f := own[0]
		f.adopted = append(f.adopted, adoptedName{key: key, name: history.UserJobName{User: g.user, Name: g.name}})
		f.rows, f.seq = mergeRows(f.rows, f.seq, g.rows, g.seq)
		delete(b.byKey, key)
	}
	for _, g := range b.byKey {
		g.nameKeys, g.seq = nil, nil // what adoption needed
	}
}

// mergeRows merges two groups' rows, each in the first pass's order, into
// that order: a job's rows stay together.
func mergeRows(a []int64, aSeq []int32, c []int64, cSeq []int32) ([]int64, []int32) {
	rows, seq := make([]int64, 0, len(a)+len(c)), make([]int32, 0, len(a)+len(c))
	i, k := 0, 0
	for i < len(a) || k < len(c) {
		if k == len(c) || (i < len(a) && aSeq[i] <= cSeq[k]) {
			rows, seq = append(rows, a[i]), append(seq, aSeq[i])
			i++
		} else {
			rows, seq = append(rows, c[k]), append(seq, cSeq[k])
			k++
		}
	}
	return rows, seq
}

// tellLater keeps a job skip just counted, and why, for tellUngrouped.
func (b *builder) tellLater(rows []int64) {
	defer func() { b.skipped = "" }()
	if b.heard == nil {
		return
	}
	u := &b.ungrouped
	u.rows = append(u.rows, rows...)
	u.ends = append(u.ends, len(u.rows))
	u.why = append(u.why, b.skipped)
}

// tellUngrouped tells Request.Judged of the jobs no group judges, read
// whole, before any group's.
func (b *builder) tellUngrouped(ctx context.Context, rd *history.Reader) error {
	u := b.ungrouped
	for first := 0; first < len(u.ends); {
		var sets [][]int64
		n, from := 0, 0
		if first > 0 {
			from = u.ends[first-1]
		}
		for k := first; k < len(u.ends) && n < batchRows; k++ {
			sets = append(sets, u.rows[from:u.ends[k]])
			n += u.ends[k] - from
			from = u.ends[k]
		}
		recs, err := rd.Records(ctx, sets)
		if err != nil {
			return err
		}
		for k := range recs {
			for i := range recs[k] { // the job, once
				b.skipped = u.why[first+k]
				b.tell(job{rec: &recs[k][i]}, nil, nil, 0)
			}
		}
		first += len(sets)
	}
	b.ungrouped = ungrouped{}
	return nil
}

// groups are the first pass's groups in a stable order.
func (b *builder) groups() []*group {
	keys := slices.Sorted(maps.Keys(b.byKey))
	out := make([]*group, len(keys))
	for i, k := range keys {
		out[i] = b.byKey[k]
	}
	b.byKey = nil
	return out
}

// readBatch is a batch of groups read whole (read, namedRuns), or why not.
type readBatch struct {
	groups []*group
	err    error
}

// batchRows is about how many jobs' records are read at once: the groups
// of a batch are read in one statement, and a group is read whole however
// many it has. A variable for the tests.
var batchRows = 20_000

// nextBatch is the first groups of groups, about batchRows jobs' rows,
// at least one group.
func nextBatch(groups []*group) []*group {
	n := 0
	for i, g := range groups {
		if n += len(g.rows); n >= batchRows {
			return groups[:i+1]
		}
	}
	return groups
}

// read reads the jobs of a batch of groups whole, each priced as it ran.
// It runs beside the judging of the batch before: it touches only the
// batch's groups, and the builder's site.
func (b *builder) read(ctx context.Context, rd *history.Reader, batch []*group) error {
	sets := make([][]int64, len(batch))
	for i, g := range batch {
		sets[i] = g.rows
	}
	recs, err := rd.Records(ctx, sets)
	if err != nil {
		return err
	}
	for i, g := range batch {
		g.rows, g.jobs = nil, make([]job, len(recs[i]))
		for k := range recs[i] {
			r := &recs[i][k]
			ch, _ := advisor.RecordCharge(b.site, r) // as the first pass priced it: the same fields
			g.jobs[k] = job{rec: r, su: ch.SU}
		}
	}
	return nil
}

// neverRan: a job cancelled before it started spent nothing.
func neverRan(r *history.JobRecord) bool { return r.ElapsedS != nil && *r.ElapsedS == 0 }

// namedRuns reads the records of the runs of a batch's groups not linked
// to a script (grouped by job name and resources) into their named: each
// from every job the history has of that user's name and resources, the
// group's own jobs of the period, and those that ended outside it.
func namedRuns(ctx context.Context, st *history.Store, batch []*group, period history.Period) error {
	var names []history.UserJobName
	seen := map[history.UserJobName]bool{}
	byKey := map[string]*group{}
	for _, g := range batch {
		if g.session { // a session's advice reads its own
			continue
		}
		if g.fingerprint != "" {
			// A script's runs are read by its fingerprint, and those of
			// the names it adopted as a name's are.
			for i := range g.jobs {
				if r := g.jobs[i].rec; r.Fingerprint == "" {
					g.named = append(g.named, r)
				}
			}
			for _, a := range g.adopted {
				byKey[a.key] = g
				if !seen[a.name] {
					seen[a.name] = true
					names = append(names, a.name)
				}
			}
			continue
		}
		for i := range g.jobs {
			g.named = append(g.named, g.jobs[i].rec)
		}
		byKey[g.key] = g
		if n := (history.UserJobName{User: g.user, Name: g.name}); !seen[n] {
			seen[n] = true
			names = append(names, n)
		}
	}
	if period.IsZero() {
		return nil // every job of the history is the period's
	}
	const perQuery = 400 // SQLite's parameters per statement are bounded
	for len(names) > 0 {
		chunk := names[:min(perQuery, len(names))]
		names = names[len(chunk):]
		recs, err := st.History(ctx, history.HistoryFilter{GPU: true, Named: chunk, EndedOutside: period})
		if err != nil {
			return fmt.Errorf("read the runs of jobs not linked to a script: %w", err)
		}
		for i := range recs {
			if r := &recs[i]; r.Fingerprint == "" {
				if g := byKey[groupKey(r)]; g != nil { // a group of another batch reads its own
					g.named = append(g.named, r)
				}
			}
		}
	}
	return nil
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
	return nameKey(r)
}

// nameKey is the key of a job's group by name: its user, name and the
// resources it asked for.
func nameKey(r *history.JobRecord) string {
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
// (advisor/app/collect's linkedPrefix), an address of the history's own that
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
