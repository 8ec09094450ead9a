package index

import (
	"context"
	"encoding/json"
	"fmt"
	"path/filepath"
	"slices"
	"time"

	"github.com/migadvisor/migadvisor/advisor"
	"github.com/migadvisor/migadvisor/advisor/base/history"
	"github.com/migadvisor/migadvisor/advisor/base/outcome"
	"github.com/migadvisor/migadvisor/advisor/base/runmodel"
	"github.com/migadvisor/migadvisor/catalog"
)

// PerProfile is how many runs of a script an index keeps per profile, the
// newest: the advice rests on medians and the latest outcomes, and a script
// run a hundred thousand times must not make its entry a megabyte.
const PerProfile = 64

// script is a fingerprint's entry.
type script struct {
	Runs []run `json:"runs"`
}

// versions is a path's entry (a user's index only): the fingerprints last
// seen there, newest first.
type versions struct {
	Fingerprints []string `json:"fingerprints"`
}

// run is what an index keeps of a run: figures, no names (advisor.Run,
// where -1 is unknown).
type run struct {
	Cluster      string            `json:"c,omitempty"`
	JobID        string            `json:"j"`
	Profile      string            `json:"p"`
	State        string            `json:"s"`
	Seconds      float64           `json:"t"`
	Completed    bool              `json:"ok,omitempty"`
	TimedOut     bool              `json:"limit,omitempty"`
	GPUOOM       bool              `json:"goom,omitempty"`
	HostOOM      bool              `json:"hoom,omitempty"`
	ExitCode     int64             `json:"exit,omitempty"`
	NeedMiB      float64           `json:"need"`
	PeakMiB      float64           `json:"peak"`
	PeakSource   string            `json:"psrc,omitempty"` // "": the monitor's
	AllocatedMiB float64           `json:"alloc"`
	Software     []string          `json:"sw,omitempty"`
	Settings     map[string]string `json:"set,omitempty"`
	Work         float64           `json:"work"`
	WorkUnit     string            `json:"unit,omitempty"`
	Util         float64           `json:"util"`
	MemUtil      float64           `json:"mutil"`
	CPUs         int               `json:"cpus,omitempty"`
	ReqMemMiB    float64           `json:"mem"`
	MaxRSSMiB    float64           `json:"rss"`
	QueueWaitS   float64           `json:"wait"`
	Submitted    int64             `json:"at,omitempty"` // unix seconds
	GPUs         int               `json:"gpus,omitempty"`
	Swept        bool              `json:"swept,omitempty"`
	Emulated     string            `json:"emu,omitempty"`
	Whole        bool              `json:"whole,omitempty"`
	RanAt        *catalog.Shares   `json:"at_shares,omitempty"`
	Outcome      string            `json:"out,omitempty"`
	AnyProfile   bool              `json:"any,omitempty"`
	Text         string            `json:"why,omitempty"` // a user's own index only: it may quote the job's output
}

func fromRun(r advisor.Run, private bool) run {
	x := run{Cluster: r.Cluster, JobID: r.JobID, Profile: r.Profile, State: r.State, Seconds: r.Seconds, Completed: r.Completed,
		TimedOut: r.TimedOut, GPUOOM: r.GPUOOM, HostOOM: r.HostOOM, ExitCode: r.ExitCode, NeedMiB: r.NeedMiB, PeakMiB: r.PeakMiB,
		AllocatedMiB: r.AllocatedMiB, Work: r.Work, WorkUnit: r.WorkUnit, Util: r.Utilization, MemUtil: r.MemUtilization,
		CPUs: r.CPUs, ReqMemMiB: r.ReqMemMiB, MaxRSSMiB: r.MaxRSSMiB, QueueWaitS: r.QueueWaitS, GPUs: r.GPUs, Swept: r.Swept,
		Emulated: r.Emulated, Whole: r.EmulatedWhole, RanAt: r.RanAt, Outcome: r.Outcome.Kind, AnyProfile: r.Outcome.AnyProfile,
		Software: r.Software, Settings: r.Settings}
	if r.PeakSource != history.PeakMonitor {
		x.PeakSource = r.PeakSource
	}
	if !r.Submitted.IsZero() {
		x.Submitted = r.Submitted.Unix()
	}
	if private {
		x.Text = r.Outcome.Text
	}
	return x
}

func (x run) toRun() advisor.Run {
	r := advisor.Run{Cluster: x.Cluster, JobID: x.JobID, Profile: x.Profile, State: x.State, Seconds: x.Seconds, Completed: x.Completed,
		TimedOut: x.TimedOut, GPUOOM: x.GPUOOM, HostOOM: x.HostOOM, ExitCode: x.ExitCode, NeedMiB: x.NeedMiB, PeakMiB: x.PeakMiB,
		AllocatedMiB: x.AllocatedMiB, Work: x.Work, WorkUnit: x.WorkUnit, Utilization: x.Util, MemUtilization: x.MemUtil,
		CPUs: x.CPUs, ReqMemMiB: x.ReqMemMiB, MaxRSSMiB: x.MaxRSSMiB, QueueWaitS: x.QueueWaitS, GPUs: x.GPUs, Swept: x.Swept,
		Emulated: x.Emulated, EmulatedWhole: x.Whole, RanAt: x.RanAt, PeakSource: x.PeakSource, Software: x.Software, Settings: x.Settings,
		Outcome: outcome.Outcome{Kind: x.Outcome, Text: x.Text, AnyProfile: x.AnyProfile}}
	if x.PeakMiB >= 0 && x.PeakSource == "" {
		r.PeakSource = history.PeakMonitor
	}
	if x.Submitted != 0 {
		r.Submitted = time.Unix(x.Submitted, 0).UTC()
	}
	return r
}

// Options say what an index of a history holds.
type Options struct {
	// Private: a user's own index, with their scripts' paths (hashed) and
	// the runs' outcome sentences; a site's has neither.
	Private bool
}

// Stats say what went into an index: Sessions counts the job names of a
// user's sessions (a user's own index only).
type Stats struct {
	Scripts, Runs, Paths, Peers, Sessions int
}

// Build is the index of the history: the runs of every script it links
// jobs to, the newest PerProfile per profile, and in a user's own index
// their sessions by job name (sessionEntries). It reads one script's jobs
// at a time: a whole cluster's records never sit in memory at once.
func Build(ctx context.Context, st *history.Store, opt Options) (map[Key][]byte, Stats, error) {
	fps, err := st.Fingerprints(ctx)
	if err != nil {
		return nil, Stats{}, err
	}
	entries := make(map[Key][]byte, len(fps))
	paths := map[string][]seenAt{}
	var peers []runmodel.DatedPeer
	var stats Stats
	for _, fp := range fps {
		recs, err := st.History(ctx, history.HistoryFilter{Fingerprint: fp})
		if err != nil {
			return nil, stats, fmt.Errorf("read the history: %w", err)
		}
		s, runs, seen := scriptOf(recs, opt.Private)
		for p, at := range seen {
			paths[p] = append(paths[p], seenAt{fp, at})
		}
		if len(s.Runs) == 0 {
			continue
		}
		if peer, ok := peerOf(fp, runs); ok {
			peers = append(peers, peer)
		}
		data, err := json.Marshal(s)
		if err != nil {
			return nil, stats, err
		}
		entries[KeyOf("fp", fp)] = data
		stats.Scripts++
		stats.Runs += len(s.Runs)
	}
	for p, seen := range paths {
		slices.SortStableFunc(seen, func(a, b seenAt) int { return b.at.Compare(a.at) })
		v := versions{}
		for _, s := range seen {
			v.Fingerprints = append(v.Fingerprints, s.fingerprint)
		}
		data, err := json.Marshal(v)
		if err != nil {
			return nil, stats, err
		}
		entries[KeyOf("path", p)] = data
	}
	stats.Paths = len(paths)
	if peers = runmodel.NewestPeers(peers); len(peers) > 0 {
		data, err := encodePeers(peers)
		if err != nil {
			return nil, stats, err
		}
		entries[peersKey] = data
		stats.Peers = len(peers)
	}
	if opt.Private {
		sessions, err := sessionEntries(ctx, st)
		if err != nil {
			return nil, stats, err
		}
		for k, data := range sessions {
			entries[k] = data
		}
		stats.Sessions = len(sessions)
	}
	return entries, stats, nil
}

// seenAt is a script seen at a path, and when last.
type seenAt struct {
	fingerprint string
	at          time.Time
}

// scriptOf is the entry of one script's records (newest first): its runs
// (and the same as the advisor's, for its peer),
// the newest PerProfile per profile; and, for a user's own index, the
// paths it was submitted from with its newest job there.
func scriptOf(recs []history.JobRecord, private bool) (script, []advisor.Run, map[string]time.Time) {
	var s script
	var runs []advisor.Run
	kept := map[string]int{}
	paths := map[string]time.Time{}
	for i := range recs {
		rec := &recs[i]
		if private && filepath.IsAbs(rec.Script) {
			at := time.Time{}
			if rec.Submit != nil {
				at = *rec.Submit
			}
			if prev, ok := paths[rec.Script]; !ok || at.After(prev) {
				paths[rec.Script] = at
			}
		}
		for _, r := range advisor.RunsFromRecord(rec) {
			if kept[r.Profile] >= PerProfile {
				continue
			}
			kept[r.Profile]++
			s.Runs = append(s.Runs, fromRun(r, private))
			runs = append(runs, r)
		}
	}
	return s, runs, paths
}

// Runs are the runs of the script with this fingerprint in the index.
func (r *Reader) Runs(fingerprint string) ([]advisor.Run, error) {
	data, ok, err := r.Get(KeyOf("fp", fingerprint))
	if err != nil || !ok {
		return nil, err
	}
	var s script
	if err := json.Unmarshal(data, &s); err != nil {
		return nil, fmt.Errorf("%w: %s: an entry: %v", ErrNotIndex, r.path, err)
	}
	runs := make([]advisor.Run, len(s.Runs))
	for i, x := range s.Runs {
		runs[i] = x.toRun()
	}
	return runs, nil
}

// Versions are the fingerprints of the scripts last seen at path (an
// absolute path), newest first: none in a site's index.
func (r *Reader) Versions(path string) ([]string, error) {
	data, ok, err := r.Get(KeyOf("path", path))
	if err != nil || !ok {
		return nil, err
	}
	var v versions
	if err := json.Unmarshal(data, &v); err != nil {
		return nil, fmt.Errorf("%w: %s: an entry: %v", ErrNotIndex, r.path, err)
	}
	return v.Fingerprints, nil
}

// ScriptRuns are the runs of the script (key) in the user's index (own,
// nil when there is none) and the site's, each job once, the user's
// first; when none of them ran, its earlier versions' runs in the user's
// index, found by its path (a site's index has no paths: another user's
// script is not a version of this one).
func ScriptRuns(key advisor.ScriptKey, own *Reader, site ...*Reader) ([]advisor.Run, error) {
	readers := site
	if own != nil {
		readers = append([]*Reader{own}, site...)
	}
	var sets [][]advisor.Run
	for _, r := range readers {
		runs, err := r.Runs(key.Fingerprint)
		if err != nil {
			return nil, err
		}
		sets = append(sets, runs)
	}
	these := advisor.MergeRuns(sets...)
	if own == nil || key.Versions.Path == "" || slices.ContainsFunc(these, advisor.Run.Ran) {
		return these, nil
	}
	fps, err := own.Versions(key.Versions.Path)
	if err != nil {
		return nil, err
	}
	for _, fp := range fps {
		if fp == key.Fingerprint {
			continue
		}
		runs, err := own.Runs(fp)
		if err != nil {
			return nil, err
		}
		for i := range runs {
			runs[i].Earlier, runs[i].EarlierBy = true, history.EarlierByPath
		}
		sets = append(sets, runs)
	}
	return advisor.MergeRuns(sets...), nil
}
