package advisor

import (
	"context"
	"fmt"
	"path/filepath"
	"slices"
	"strings"
	"time"

	"github.com/migadvisor/migadvisor/advisor/base/history"
	"github.com/migadvisor/migadvisor/catalog"
	"github.com/migadvisor/migadvisor/slurm"
)

// queueWaitJobs is how many of the newest jobs per profile the queue-wait
// median reads: enough to be stable, few enough to stay fast on a whole
// cluster's history.
const queueWaitJobs = 1000

// GatherRequest is the script whose evidence Gather reads, and for whom.
type GatherRequest struct {
	Path   string // the script, as the user named it
	Script *slurm.Script
	// User is who asks: in a site-wide history only their jobs can be the
	// script's earlier versions, and their runs are the monthly rate. "":
	// anyone's.
	User       string
	WaitsSince time.Time // queue waits from jobs submitted since
	// NoWaits reads no queue waits: history wants the notes only.
	NoWaits bool
}

// GatherFor reads a script's evidence from the user's history (own; nil
// for none) and the site-wide ones: the runs that share its fingerprint
// and those of its earlier versions (see GatherScriptRuns; a job in both
// histories counts once), the reference benchmark their output resembles
// (Resembles), and the median queue wait per profile since a time, from
// the site-wide history when there is one (it holds the whole cluster's
// jobs), else the user's. Its notes say what the runs lack: only earlier
// versions' runs, or tracked jobs not collected yet.
func GatherFor(ctx context.Context, site *catalog.Site, req GatherRequest, own *history.Store, siteWide ...*history.Store) (Job, error) {
	s := req.Script
	job := Job{Script: req.Path, Fingerprint: s.Fingerprint(), Resources: s.Resources, QueueWaitS: map[string]float64{}, User: req.User}
	key := KeyOf(req.Path, s, site, req.User)
	outputs := outputWorkloads{}
	var err error
	if job.Runs, err = gatherScriptRuns(ctx, key, outputs, own, siteWide...); err != nil {
		return job, err
	}
	// What the runs' output shows they are; advice on a script that says
	// itself (RecogniseWorkload) puts that first.
	job.Resembles = outputs.resembled(site)
	stores := siteWide
	if own != nil {
		stores = append([]*history.Store{own}, siteWide...)
	}
	if job.Notes, err = gatherNotes(ctx, key, job.Runs, stores); err != nil {
		return job, err
	}
	if len(job.Runs) == 0 && own != nil {
		note, err := unlinkedNote(ctx, own, req.Path, key)
		if err != nil {
			return job, err
		}
		if note != "" {
			job.Notes = append(job.Notes, note)
		}
	}
	if len(stores) > 0 && !req.NoWaits {
		job.QueueWaitS, err = queueWaits(ctx, site, stores[len(stores)-1], req.WaitsSince)
	}
	return job, err
}

// queueWaits is the median queue wait per profile in a history, of the
// jobs submitted since a time; a profile with none has no entry.
func queueWaits(ctx context.Context, site *catalog.Site, st *history.Store, since time.Time) (map[string]float64, error) {
	waits := map[string]float64{}
	for _, p := range site.Profiles {
		w, err := st.QueueWait(ctx, append([]string{p.GRESType}, p.GRESTypes...), since, queueWaitJobs)
		if err != nil {
			return waits, err
		}
		if w.Jobs > 0 {
			waits[p.Name] = w.MedianS
		}
	}
	return waits, nil
}

// ScriptKey names a script's runs in a history: its fingerprint (the
// strongest link), and what finds the runs of its earlier versions.
type ScriptKey struct {
	Fingerprint string
	Versions    history.Versions // Versions.User applies to site-wide histories only
}

// KeyOf is the key of the script at path: its absolute path; the names its
// jobs take (--job-name, else the file's name, as sbatch names them, and
// its sweep variants' NAME-PROFILE for each of the site's profiles); the
// CPUs and memory where the script sets them. In a site-wide history only
// the jobs of user (who asks) can be earlier versions: another user's
// script of the same name is not a version of this one ("": anyone's).
func KeyOf(path string, s *slurm.Script, site *catalog.Site, user string) ScriptKey {
	k := ScriptKey{Fingerprint: s.Fingerprint(), Versions: history.Versions{User: user}}
	if abs, err := filepath.Abs(path); err == nil {
		k.Versions.Path = abs
	}
	r := s.Resources
	name, base := r.JobName, r.JobName
	if name == "" {
		name = filepath.Base(path)
		base = strings.TrimSuffix(name, filepath.Ext(name))
	}
	k.Versions.JobNames = []string{name}
	if site != nil {
		for _, p := range site.Profiles {
			k.Versions.JobNames = append(k.Versions.JobNames, base+"-"+p.Name)
		}
	}
	if r.NTasks > 0 || r.NTasksPerNode > 0 || r.CPUsPerTask > 0 || r.CPUsPerGPU > 0 || r.MinCPUs > 0 {
		k.Versions.CPUs = int64(r.CPUs())
	}
	if !r.MemAll && (r.MemMiB > 0 || r.MemPerCPUMiB > 0 || r.MemPerGPUMiB > 0) {
		k.Versions.MemMiB = float64(r.MemoryMiB(0, 0))
	}
	return k
}

// Filter selects the script's jobs and its earlier versions' in a history:
// in a site-wide one, of the key's user's jobs only those can be earlier
// versions; in the user's own, whoever's jobs they collected.
func (k ScriptKey) Filter(siteWide bool, limit int) history.HistoryFilter {
	v := k.Versions
	if !siteWide {
		v.User = ""
	}
	return history.HistoryFilter{Fingerprint: k.Fingerprint, Versions: &v, Limit: limit}
}

// GatherRuns reads the runs of a script (by fingerprint) from one or more
// histories: the user's own and a site-wide one may both hold a job, which
// counts once. GatherScriptRuns also reads its earlier versions' runs.
func GatherRuns(ctx context.Context, fingerprint string, stores ...*history.Store) ([]Run, error) {
	return gatherRuns(ctx, fingerprint, nil, stores...)
}

// gatherRuns is GatherRuns, noting in outputs (nil: nowhere) what each
// job's output resembles.
func gatherRuns(ctx context.Context, fingerprint string, outputs outputWorkloads, stores ...*history.Store) ([]Run, error) {
	var all [][]Run
	for _, st := range stores {
		runs, err := runsIn(ctx, st, history.HistoryFilter{Fingerprint: fingerprint}, nil, outputs)
		if err != nil {
			return nil, err
		}
		all = append(all, runs)
	}
	return MergeRuns(all...), nil
}

// GatherScriptRuns reads the runs of a script from the user's history (own,
// nil for none) and site-wide ones: those of its exact fingerprint, then
// those of its earlier versions (the script edited: the same path, or the
// same job name, CPUs and memory where the job's script is not another one
// still there, liveSiblings; in a site-wide history this user's jobs
// only), marked Earlier. Each job counts once, as the exact script's where
// any history links it so.
func GatherScriptRuns(ctx context.Context, key ScriptKey, own *history.Store, siteWide ...*history.Store) ([]Run, error) {
	return gatherScriptRuns(ctx, key, nil, own, siteWide...)
}

// gatherScriptRuns is GatherScriptRuns, noting in outputs (nil: nowhere)
// what each job's output resembles.
func gatherScriptRuns(ctx context.Context, key ScriptKey, outputs outputWorkloads, own *history.Store, siteWide ...*history.Store) ([]Run, error) {
	// This version's own runs first: once it has runs that ran, Recommend
	// leaves its earlier versions' out, so they need not be read (the
	// sbatch wrapper's usual case, and their queries cost milliseconds).
	stores := siteWide
	if own != nil {
		stores = append([]*history.Store{own}, siteWide...)
	}
	these, err := gatherRuns(ctx, key.Fingerprint, outputs, stores...)
	if err != nil || slices.ContainsFunc(these, ran) {
		return these, err
	}
	all := [][]Run{these}
	siblings := liveSiblings{}
	for i, st := range stores {
		f := key.Filter(own == nil || i > 0, 0) // the site-wide ones: this user's jobs only
		f.Versions.Only = true
		earlier, err := runsIn(ctx, st, f, func(r *history.JobRecord) bool { return siblings.of(key, r) }, outputs)
		if err != nil {
			return nil, err
		}
		all = append(all, earlier)
	}
	return MergeRuns(all...), nil
}

// HistoryRecord is a job record and whether it came from a site-wide
// history.
type HistoryRecord struct {
	history.JobRecord
	SiteWide bool
}

// History lists the jobs of a script and of its earlier versions (key; nil
// for every job) from the user's history and site-wide ones, each job once
// (as the user's history has it), newest first, at most limit (0: all).
// own is nil where the user has no history yet.
func History(ctx context.Context, key *ScriptKey, limit int, own *history.Store, siteWide ...*history.Store) ([]HistoryRecord, error) {
	f := history.HistoryFilter{Limit: limit}
	var out []HistoryRecord
	seen := map[[2]string]bool{}
	siblings := liveSiblings{}
	for i, st := range append([]*history.Store{own}, siteWide...) {
		if st == nil {
			continue
		}
		if key != nil {
			f = key.Filter(i > 0, limit)
		}
		recs, err := st.History(ctx, f)
		if err != nil {
			return nil, fmt.Errorf("%s: %w", st.Path(), err)
		}
		for _, r := range recs {
			if key != nil && siblings.of(*key, &r) {
				continue
			}
			if k := [2]string{r.Cluster, r.Key}; !seen[k] {
				seen[k] = true
				out = append(out, HistoryRecord{JobRecord: r, SiteWide: i > 0})
			}
		}
	}
	slices.SortStableFunc(out, func(a, b HistoryRecord) int { return history.NewestFirst(a.JobRecord, b.JobRecord) })
	if limit > 0 && len(out) > limit {
		out = out[:limit]
	}
	return out, nil
}

// runsIn reads the runs of the records f selects, less those skip says
// (nil: none), noting in outputs (nil: nowhere) what the output of each
// record with a run resembles.
func runsIn(ctx context.Context, st *history.Store, f history.HistoryFilter, skip func(*history.JobRecord) bool, outputs outputWorkloads) ([]Run, error) {
	recs, err := st.History(ctx, f)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", st.Path(), err)
	}
	var runs []Run
	for i := range recs {
		if skip == nil || !skip(&recs[i]) {
			these := RunsFromRecord(&recs[i])
			if len(these) > 0 {
				outputs.add(&recs[i])
			}
			runs = append(runs, these...)
		}
	}
	return runs, nil
}

// liveSiblings tells the jobs found by a script's job name and resources
// (history.EarlierByName) that ran another live script, not an earlier
// version of this one. An earlier version is an edit's history: the same
// path (history.EarlierByPath), or a script at another path that is gone,
// or was replaced by one that is neither the job's script nor another of
// this job name and resources (a script moved or renamed as it was
// edited). A second script that is still there, at another path, with the
// same job name and resources (two scripts of a sweep, submitted from one
// directory) is a script of its own: its jobs are its runs, not this
// one's. Jobs linked from slurmdbd's copies (no path) keep the name's rule.
// It reads each path once.
type liveSiblings map[string]*slurm.Script // by path; nil: none there

// of reports whether r is a job of another live script than key's.
func (l liveSiblings) of(key ScriptKey, r *history.JobRecord) bool {
	if !r.Earlier || r.EarlierBy != history.EarlierByName || !filepath.IsAbs(r.Script) ||
		filepath.Clean(r.Script) == filepath.Clean(key.Versions.Path) {
		return false
	}
	s, read := l[r.Script]
	if !read {
		s, _ = slurm.ReadScript(r.Script)
		l[r.Script] = s
	}
	if s == nil {
		return false // gone: the script may have become this one
	}
	if s.Fingerprint() == r.Fingerprint {
		return true // the job's own script, still there
	}
	there := KeyOf(r.Script, s, nil, "").Versions
	return there.JobNames[0] == key.Versions.JobNames[0] && there.CPUs == key.Versions.CPUs && there.MemMiB == key.Versions.MemMiB
}

// MergeRuns joins runs read from several histories, each job once: the
// first set that has it wins.
func MergeRuns(sets ...[]Run) []Run {
	var runs []Run
	seen := map[string]bool{}
	for _, set := range sets {
		for _, r := range set {
			if key := r.Cluster + "/" + r.JobID; !seen[key] {
				seen[key] = true
				runs = append(runs, r)
			}
		}
	}
	return runs
}

// gatherNotes says what the script's runs lack: when none is of this exact
// script, that its earlier versions' runs stand in, and which of its
// tracked jobs have no final accounting record in the history yet (they
// ran, or run, but 'collect' has not read them).
func gatherNotes(ctx context.Context, key ScriptKey, runs []Run, stores []*history.Store) ([]string, error) {
	earlier, byPath := 0, false
	for _, r := range runs {
		if !r.Earlier {
			return nil, nil
		}
		earlier++
		byPath = byPath || r.EarlierBy == history.EarlierByPath
	}
	var notes []string
	if earlier > 0 {
		how := "the same job name and resources"
		if byPath {
			how = "the same path"
		}
		runs, are := fmt.Sprintf("%d runs", earlier), "are"
		if earlier == 1 {
			runs, are = "1 run", "is"
		}
		notes = append(notes, fmt.Sprintf("no runs of this exact script; %s of an earlier version (%s) %s used", runs, how, are))
	}
	var waiting []string
	for _, st := range stores {
		tracked, err := st.Tracked(ctx, history.TrackedFilter{Fingerprint: key.Fingerprint})
		if err != nil {
			return nil, fmt.Errorf("%s: %w", st.Path(), err)
		}
		for _, id := range history.Unended(tracked) {
			if !slices.Contains(waiting, id) {
				waiting = append(waiting, id)
			}
		}
	}
	switch n := len(waiting); {
	case n == 1:
		notes = append(notes, fmt.Sprintf("tracked job %s of this script has no final accounting record in the history yet: run 'migadvisor collect' after it ends", waiting[0]))
	case n > 1:
		notes = append(notes, fmt.Sprintf("%d tracked jobs of this script (%s) have no final accounting record in the history yet: run 'migadvisor collect' after they end",
			n, listIDs(waiting)))
	}
	return notes, nil
}

// unlinkedNote says, for a script with no runs, which jobs of the user's
// own history carry its job name but are linked to no script (a dump
// collected before anything tracked them), and the track command that
// links them: the history is not empty, it does not know they are this
// script's. Only the script's own job name counts, not its sweep variants'.
func unlinkedNote(ctx context.Context, st *history.Store, path string, key ScriptKey) (string, error) {
	const shown = 20
	ids, total, err := st.UnlinkedNamed(ctx, key.Versions.JobNames[:1], shown)
	if err != nil || total == 0 {
		return "", err
	}
	name := key.Versions.JobNames[0]
	cmd := "migadvisor track " + slurm.ShellWord(path) + " " + strings.Join(ids, " ")
	if total == 1 {
		return fmt.Sprintf("job %s, named %s like this script's jobs, is in the history but linked to no script; if it ran this script: %s", ids[0], name, cmd), nil
	}
	what := fmt.Sprintf("%d jobs named %s like this script's jobs are in the history but linked to no script", total, name)
	if total > len(ids) {
		what += fmt.Sprintf(" (the newest %d below)", len(ids))
	}
	return what + "; if they ran this script: " + cmd, nil
}

// listIDs names up to 5 job ids, and how many more.
func listIDs(ids []string) string {
	const shown = 5
	if len(ids) <= shown {
		return strings.Join(ids, ", ")
	}
	return fmt.Sprintf("%s and %d more", strings.Join(ids[:shown], ", "), len(ids)-shown)
}
