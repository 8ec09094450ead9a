package collect

import (
	"context"
	"encoding/json"
	"slices"
	"strings"
	"time"

	"github.com/migadvisor/migadvisor/advisor/base/history"
	"github.com/migadvisor/migadvisor/slurm"
)

// Window is the stretch of accounting one collect asked sacct about.
type Window struct {
	Scope         string    `json:"scope"`                    // the selection the watermark belongs to
	Since         time.Time `json:"since"`                    // sacct's --starttime
	FromWatermark bool      `json:"from_watermark"`           // Since is where the last collect left off
	Watermark     time.Time `json:"watermark,omitempty"`      // where the next collect will start; zero if it did not move
	Rechecked     int       `json:"rechecked"`                // unsettled jobs (not ended, or placeholders) outside the window, asked about by id
	Gap           time.Time `json:"watermark_kept,omitempty"` // set when an explicit --since later than the watermark left it
	// Ahead is a watermark that lay after this collect's start (this
	// host's clock moved back since the collect that set it): not read
	// from, Since is where the history's jobs end instead.
	Ahead time.Time `json:"watermark_ahead,omitempty"`
}

// MarshalJSON leaves out the times that are not set.
func (w Window) MarshalJSON() ([]byte, error) {
	type plain Window
	out := struct {
		plain
		Watermark *time.Time `json:"watermark,omitempty"`
		Gap       *time.Time `json:"watermark_kept,omitempty"`
		Ahead     *time.Time `json:"watermark_ahead,omitempty"`
	}{plain: plain(w)}
	if !w.Watermark.IsZero() {
		out.Watermark = &w.Watermark
	}
	if !w.Gap.IsZero() {
		out.Gap = &w.Gap
	}
	if !w.Ahead.IsZero() {
		out.Ahead = &w.Ahead
	}
	return json.Marshal(out)
}

// WindowOptions tune ImportWindow.
type WindowOptions struct {
	// Overlap is how far before this collect's start the next one begins:
	// room for the clocks of this host and slurmdbd to differ, and for
	// records slurmdbd receives late.
	Overlap time.Duration
	// Now is the collect's start (default time.Now).
	Now func() time.Time
}

// DefaultOverlap is WindowOptions.Overlap's default.
const DefaultOverlap = 10 * time.Minute

// DefaultWindow is how far back a collect with no --since and no watermark
// reaches: sacct's own default is midnight, which would miss yesterday's jobs.
const DefaultWindow = 7 * 24 * time.Hour

// recheckChunk bounds the job ids of one sacct call.
const recheckChunk = 500

// WindowScope names the selection a watermark belongs to: the clusters (or
// this one) and the users (or all of them). q.Users is what the caller
// resolved (the caller's own name when neither users nor all users were asked).
func WindowScope(cluster string, q slurm.SacctQuery) string {
	clusters := slices.Clone(q.Clusters)
	if len(clusters) == 0 {
		clusters = []string{cluster}
	}
	slices.Sort(clusters)
	users := "all"
	if !q.AllUsers {
		u := slices.Clone(q.Users)
		slices.Sort(u)
		users = strings.Join(slices.Compact(u), ",")
	}
	return "clusters=" + strings.Join(clusters, ",") + " users=" + users
}

// ImportWindow imports the jobs q selects by time, streaming sacct's output.
// Without q.Since it starts where the last complete collect of the same
// selection left off (its watermark), else DefaultWindow ago. Jobs the
// history holds as not ended (or as slurmdbd's placeholder) that the window
// did not return (they ended before it began, and slurmdbd heard late) are
// asked about by id. When all of it is stored, the watermark moves to this
// collect's start, or to the latest time a job of the window holds where
// that is earlier, less opt.Overlap; a collect that fails or is killed
// leaves it, so the next one reads the same stretch again (importing is
// idempotent).
//
// The watermark is a time of slurmdbd's clock, which sacct reads it by,
// as much as of this host's: a host whose clock runs ahead of slurmdbd's
// (and is set back later) would otherwise leave one after the jobs that
// end meanwhile, which no collect would read. A watermark after this
// collect's start (one an older migadvisor left, the clock moved back
// since) is not read from either: sacct refuses to start after now, and
// reading from it would skip the jobs before it. The window starts where
// the history's jobs of the selection end, less the overlap (w.Ahead says
// so).
func (c *Collector) ImportWindow(ctx context.Context, q slurm.SacctQuery, opt WindowOptions) (ImportResult, Window, error) {
	now := time.Now
	if opt.Now != nil {
		now = opt.Now
	}
	start := now()
	w := Window{Scope: WindowScope(c.Cluster, q)}
	mark, hasMark, err := c.Store.Watermark(ctx, w.Scope)
	if err != nil {
		return ImportResult{}, w, err
	}
	explicit := !q.Since.IsZero()
	switch {
	case explicit:
	case hasMark && mark.After(start):
		w.Ahead = mark
		if q.Since, err = c.restartPoint(ctx, q, start, opt.Overlap); err != nil {
			return ImportResult{}, w, err
		}
	case hasMark:
		q.Since, w.FromWatermark = mark, true
	default:
		q.Since = start.Add(-DefaultWindow)
	}
	w.Since = q.Since
	unsettled, err := c.unsettledJobs(ctx, q)
	if err != nil {
		return ImportResult{}, w, err
	}
	var latest time.Time // of the window's jobs, by slurmdbd's clock
	res, err := c.importSacct(ctx, q, func(j *slurm.AcctJob) {
		delete(unsettled, c.refOf(j))
		for _, t := range []time.Time{j.Submit, j.Start, j.End} {
			if t.After(latest) {
				latest = t
			}
		}
	})
	if err != nil {
		return res, w, err
	}
	if w.Rechecked, err = c.recheck(ctx, q, unsettled, &res); err != nil {
		return res, w, err
	}
	if explicit && hasMark && q.Since.After(mark) {
		// Moving it would skip the stretch between the two.
		w.Gap = mark
		return res, w, nil
	}
	upTo := start
	if !latest.IsZero() && latest.Before(start) {
		upTo = latest
	}
	w.Watermark = upTo.Add(-opt.Overlap).Truncate(time.Second) // as stored, and as sacct reads it
	return res, w, c.Store.SetWatermark(ctx, w.Scope, w.Watermark)
}

// restartPoint is where a window starts whose watermark lies after start:
// the latest time the history's jobs of q's selection hold (slurmdbd's
// clock, which the watermark's collect read up to at most) that is not
// after start, less overlap; DefaultWindow before start where the history
// holds none.
func (c *Collector) restartPoint(ctx context.Context, q slurm.SacctQuery, start time.Time, overlap time.Duration) (time.Time, error) {
	clusters := q.Clusters
	if len(clusters) == 0 {
		clusters = []string{c.Cluster}
	}
	var users []string
	if !q.AllUsers {
		users = q.Users
	}
	latest, ok, err := c.Store.LatestJobTime(ctx, clusters, users, start)
	if err != nil || !ok {
		return start.Add(-DefaultWindow), err
	}
	return latest.Add(-overlap).Truncate(time.Second), nil
}

func (c *Collector) refOf(j *slurm.AcctJob) history.JobRef {
	cluster := j.Cluster
	if cluster == "" {
		cluster = c.Cluster
	}
	return history.JobRef{Cluster: cluster, Key: j.Key}
}

// unsettledJobs are the history's jobs of q's selection whose record may
// still change: not ended, or slurmdbd's placeholder.
func (c *Collector) unsettledJobs(ctx context.Context, q slurm.SacctQuery) (map[history.JobRef]bool, error) {
	clusters := q.Clusters
	if len(clusters) == 0 {
		clusters = []string{c.Cluster}
	}
	var users []string
	if !q.AllUsers {
		users = q.Users
	}
	refs, err := c.Store.UnsettledJobs(ctx, clusters, users)
	if err != nil {
		return nil, err
	}
	unsettled := make(map[history.JobRef]bool, len(refs))
	for _, r := range refs {
		unsettled[r] = true
	}
	return unsettled, nil
}

// recheck asks sacct by id about the unsettled jobs the window did not
// return (or returned as a placeholder again), a chunk at a time, and
// imports what it says.
func (c *Collector) recheck(ctx context.Context, q slurm.SacctQuery, unsettled map[history.JobRef]bool, res *ImportResult) (int, error) {
	byCluster := map[string][]string{}
	for r := range unsettled {
		byCluster[r.Cluster] = append(byCluster[r.Cluster], r.Key)
	}
	n := 0
	for cluster, keys := range byCluster {
		slices.Sort(keys)
		for chunk := range slices.Chunk(keys, recheckChunk) {
			rq := slurm.SacctQuery{Jobs: chunk, AllUsers: true}
			if len(q.Clusters) > 0 {
				rq.Clusters = []string{cluster}
			}
			more, err := c.importSacct(ctx, rq, nil)
			if err != nil {
				return n, err
			}
			*res = res.Plus(more)
			n += len(chunk)
		}
	}
	return n, nil
}
