// Package fidelity measures how well the replay (advisor/base/replay)
// reproduces a queue Slurm really ran: the jobs of a history are replayed
// on the layout they ran on, each with its recorded runtime, and each
// job's replayed wait is set against the wait its accounting recorded
// (Start − Submit). Issue 41's bar: the median absolute error at most 10%
// of the mean recorded wait, or 30 s where that is more.
//
// It works on any history, a site's or the dev cluster's, and says what it
// could not compare and why. What a history cannot tell it, and which way
// each leans:
//
//   - When a job became eligible. A job held, submitted with --begin or
//     waiting on a dependency counts its wait from its submission, which
//     the replay does not know to delay: the replay starts it early.
//   - When a job pending at the end, or cancelled while pending, left the
//     queue. Neither is replayed, though each held its place in the queue
//     while it waited: the jobs behind it start early in the replay.
//   - Priorities. Slurm's, which age and fairshare change, are not
//     recorded: the replay's queue is in submission order (priority/basic).
//     Under priority/multifactor the replay's order differs from Slurm's
//     and errors grow both ways.
//   - Anything outside the layout: jobs of profiles the layout lacks,
//     reservations, drained nodes, other partitions' jobs on its nodes.
package fidelity

import (
	"cmp"
	"fmt"
	"math"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/migadvisor/migadvisor/advisor/base/history"
	"github.com/migadvisor/migadvisor/advisor/base/replay"
)

// The bar of issue 41: the median absolute error at most BoundShare of the
// mean recorded wait, or MinBoundS where that is more (a queue that barely
// waits is not held to a few seconds, which Slurm's own cycles exceed).
const (
	BoundShare = 0.10
	MinBoundS  = 30
)

// WorstJobs is how many of the largest errors a Result lists.
const WorstJobs = 10

// Result is how close the replay came.
type Result struct {
	// Jobs is how many jobs were replayed and compared: every job that
	// started, with a time limit, on a profile the layout holds.
	Jobs    int    `json:"jobs"`
	Skipped []Skip `json:"skipped,omitempty"` // the jobs left out, by reason, most first
	Cluster string `json:"cluster,omitempty"` // the cluster the records are of

	// MeanWaitS and MedianWaitS are the compared jobs' recorded waits.
	// MedianWaitS is also the median error of a replay that started every
	// job at its submission: the figure to beat.
	MeanWaitS   float64 `json:"mean_wait_s"`
	MedianWaitS float64 `json:"median_wait_s"`
	// MedianAbsErrS and P90AbsErrS are of |replayed − recorded wait|.
	MedianAbsErrS float64 `json:"median_abs_err_s"`
	P90AbsErrS    float64 `json:"p90_abs_err_s"`
	// MeanErrS is the mean of replayed − recorded: below 0 the replay
	// starts jobs earlier than Slurm did. Earlier and Later count the jobs
	// it started earlier or later (equal ones are in neither).
	MeanErrS float64 `json:"mean_err_s"`
	Earlier  int     `json:"earlier"`
	Later    int     `json:"later"`

	BoundS float64 `json:"bound_s"` // max(BoundShare × MeanWaitS, MinBoundS)
	OK     bool    `json:"ok"`      // some jobs compared and MedianAbsErrS ≤ BoundS

	Worst []Compared `json:"worst,omitempty"` // the WorstJobs largest errors, largest first
}

// Skip is how many jobs were left out for one reason.
type Skip struct {
	Why  string `json:"why"`
	Jobs int    `json:"jobs"`
}

// Compared is one job's recorded and replayed wait.
type Compared struct {
	JobID         string `json:"job_id"`
	Profile       string `json:"profile"`
	GPUs          int    `json:"gpus"`
	LimitS        int64  `json:"limit_s"`
	RuntimeS      int64  `json:"runtime_s"`
	RecordedWaitS int64  `json:"recorded_wait_s"`
	ReplayedWaitS int64  `json:"replayed_wait_s"`
	id            int64  // the JobIDRaw, to order ties
}

// ErrS is the replayed wait less the recorded one.
func (c Compared) ErrS() int64 { return c.ReplayedWaitS - c.RecordedWaitS }

// Reasons a job is not compared.
const (
	SkipNoGPU        = "no GPU"
	SkipNoProfile    = "GPUs of no known profile"
	SkipStub         = "a placeholder record (slurmdbd had not sent the job's own yet)"
	SkipNeverStarted = "never started (still pending, or cancelled while pending)"
	SkipNoSubmit     = "no submission time"
	SkipNoLimit      = "no time limit recorded"
	SkipBeforeSubmit = "started before its submission"
)

// Check replays the records' jobs on slots with opt and compares each
// job's replayed wait with its recorded one. The records must be of one
// cluster; in any order. It fails on records of several clusters or on
// input the replay refuses.
func Check(records []history.JobRecord, slots replay.Slots, opt replay.Options) (Result, error) {
	var res Result
	cluster, err := oneCluster(records)
	if err != nil {
		return res, err
	}
	res.Cluster = cluster
	q := queueOf(records)
	return q.check(nil, res, slots, opt)
}

// CheckRecorded is Check on jobs already read from their records (a
// plan's demand keeps no record): each job as it ran (the profile it ran
// on, its recorded runtime and limit) and recordedWaitS[i] the wait its
// accounting recorded. Every one is compared; jobs is the caller's
// buffer, left as it was. The replay runs in rp's memory (nil: its own):
// a plan's, which replays a year of a large site on layout after layout.
func CheckRecorded(rp *replay.Replayer, jobs []replay.Job, recordedWaitS []int64, slots replay.Slots, opt replay.Options) (Result, error) {
	if len(jobs) != len(recordedWaitS) {
		return Result{}, fmt.Errorf("fidelity: %d jobs and %d recorded waits", len(jobs), len(recordedWaitS))
	}
	q := queue{jobs: jobs, recordedWaitS: recordedWaitS}
	return q.check(rp, Result{}, slots, opt)
}

// check replays the queue, in rp's memory (nil: its own), and scores it
// into res.
func (q *queue) check(rp *replay.Replayer, res Result, slots replay.Slots, opt replay.Options) (Result, error) {
	if rp == nil {
		rp = new(replay.Replayer)
	}
	out, err := rp.Replay(slots, q.jobs, opt)
	if err != nil {
		return res, fmt.Errorf("fidelity: replaying %d jobs: %w", len(q.jobs), err)
	}
	for _, u := range out.Unplaced {
		q.skip(u.Why)
	}
	placed := 0
	for _, p := range out.Jobs {
		if p.Placed {
			placed++
		}
	}
	sc := scorer{waits: make([]float64, 0, placed), abs: make([]float64, 0, placed)}
	for i, p := range out.Jobs {
		if p.Placed {
			c := q.comparedAt(i)
			c.ReplayedWaitS = p.WaitS
			sc.add(c)
		}
	}
	res.Skipped = q.skipped()
	res.score(&sc)
	return res, nil
}

// oneCluster is the cluster every record is of; "" for none.
func oneCluster(records []history.JobRecord) (string, error) {
	var names []string
	for i := range records {
		if c := records[i].Cluster; c != "" && !slices.Contains(names, c) {
			names = append(names, c)
		}
	}
	if len(names) > 1 {
		slices.Sort(names)
		return "", fmt.Errorf("fidelity: records of clusters %v: a layout is one cluster's, check one at a time", names)
	}
	if len(names) == 0 {
		return "", nil
	}
	return names[0], nil
}

// queue is the replay's input: the jobs it can replay, with what is known
// of each, and the count of the others by reason.
type queue struct {
	jobs     []replay.Job
	compared []Compared // one per job, the replayed wait to fill
	// recordedWaitS, where compared is nil, is each job's recorded wait
	// (CheckRecorded): its Compared is made only when it was placed.
	recordedWaitS []int64
	why           map[string]int
}

func (q *queue) skip(why string) {
	if q.why == nil {
		q.why = map[string]int{}
	}
	q.why[why]++
}

// skipped are the reasons, most jobs first, then by name.
func (q *queue) skipped() []Skip {
	var out []Skip
	for why, n := range q.why {
		out = append(out, Skip{Why: why, Jobs: n})
	}
	slices.SortFunc(out, func(a, b Skip) int { return cmp.Or(cmp.Compare(b.Jobs, a.Jobs), cmp.Compare(a.Why, b.Why)) })
	return out
}

// queueOf turns the records into the replay's jobs, in the records' order
// (the replay sorts its queue itself). A job still running when the history was read runs to its time limit in
// the replay (it ran at least until then, and any job it could hold back
// started later than the history knows).
func queueOf(records []history.JobRecord) queue {
	var q queue
	for i := range records {
		r := &records[i]
		if why := unusable(r); why != "" {
			q.skip(why)
			continue
		}
		limit := *r.TimeLimitMin * 60
		j := replay.Job{ID: keyNumber(r.Key), Submit: r.Submit.Unix(), Profile: r.Profile,
			Count: int(r.GPUCount), LimitS: limit, RuntimeS: runtimeOf(r, limit)}
		q.jobs = append(q.jobs, j)
		q.compared = append(q.compared, Compared{JobID: r.JobID, Profile: r.Profile, GPUs: j.Count, LimitS: limit,
			RuntimeS: min(j.RuntimeS, limit), RecordedWaitS: r.Start.Unix() - j.Submit, id: j.ID})
	}
	return q
}

// comparedAt is job i's comparison, its replayed wait to fill.
func (q *queue) comparedAt(i int) Compared {
	if q.compared != nil {
		return q.compared[i]
	}
	j := &q.jobs[i]
	return Compared{Profile: j.Profile, GPUs: j.Count, LimitS: j.LimitS, RuntimeS: min(j.RuntimeS, j.LimitS),
		RecordedWaitS: q.recordedWaitS[i], id: j.ID}
}

// unusable says why a record cannot be replayed and compared; "" if it can.
func unusable(r *history.JobRecord) string {
	switch {
	case r.Stub:
		return SkipStub
	case r.GPUCount <= 0:
		return SkipNoGPU
	case r.Profile == "":
		return SkipNoProfile
	case r.Submit == nil:
		return SkipNoSubmit
	case !started(r):
		return SkipNeverStarted
	case r.TimeLimitMin == nil || *r.TimeLimitMin <= 0:
		return SkipNoLimit
	case r.Start.Before(*r.Submit):
		return SkipBeforeSubmit
	}
	return ""
}

// started says whether the job ran: sacct gives a job cancelled while
// pending no start, or a start equal to its end with nothing elapsed.
func started(r *history.JobRecord) bool {
	if r.Start == nil || r.Start.IsZero() {
		return false
	}
	ranNothing := r.End != nil && r.End.Equal(*r.Start) && (r.ElapsedS == nil || *r.ElapsedS == 0)
	return !(ranNothing && strings.HasPrefix(r.State, "CANCELLED"))
}

// runtimeOf is how long the job held its GPUs: end − start, else the
// elapsed time, else (still running) its time limit.
func runtimeOf(r *history.JobRecord, limit int64) int64 {
	switch {
	case r.End != nil && !r.End.IsZero():
		return max(0, int64(r.End.Sub(*r.Start)/time.Second))
	case r.ElapsedS != nil && r.State != "RUNNING":
		return max(0, *r.ElapsedS)
	}
	return limit
}

// keyNumber is a JobIDRaw as a number, the replay's tie-break after the
// submission time; 0 where it is not one.
func keyNumber(key string) int64 {
	n, err := strconv.ParseInt(key, 10, 64)
	if err != nil {
		return 0
	}
	return n
}

// scorer sums the compared jobs up one at a time, in their order: a
// year's million need no list of them.
type scorer struct {
	waits, abs      []float64 // each job's recorded wait and |error|
	sumWait, sumErr float64
	earlier, later  int
	worst           []Compared // the WorstJobs largest errors so far, as worst orders them
}

func (s *scorer) add(c Compared) {
	e := c.ErrS()
	s.waits = append(s.waits, float64(c.RecordedWaitS))
	s.abs = append(s.abs, math.Abs(float64(e)))
	s.sumWait += float64(c.RecordedWaitS)
	s.sumErr += float64(e)
	switch {
	case e < 0:
		s.earlier++
	case e > 0:
		s.later++
	}
	// Where a stable sort of every job would put it among the worst: after
	// those it ties with, which came first.
	at := len(s.worst)
	for i := range s.worst {
		if worseFirst(c, s.worst[i]) < 0 {
			at = i
			break
		}
	}
	if at < WorstJobs {
		s.worst = slices.Insert(s.worst, at, c)[:min(len(s.worst)+1, WorstJobs)]
	}
}

// score fills the figures from the compared jobs.
func (r *Result) score(s *scorer) {
	r.Jobs = len(s.waits)
	r.BoundS = MinBoundS
	if r.Jobs == 0 {
		return
	}
	r.Earlier, r.Later = s.earlier, s.later
	n := float64(r.Jobs)
	r.MeanWaitS, r.MeanErrS = s.sumWait/n, s.sumErr/n
	r.MedianWaitS = quantile(s.waits, 0.5)
	r.MedianAbsErrS, r.P90AbsErrS = quantile(s.abs, 0.5), quantile(s.abs, 0.9)
	r.BoundS = max(BoundShare*r.MeanWaitS, MinBoundS)
	r.OK = r.MedianAbsErrS <= r.BoundS
	r.Worst = s.worst
}

// quantile is the q-quantile of xs by linear interpolation between the
// closest ranks (the median of an even count is the mean of the middle
// two); it sorts xs.
func quantile(xs []float64, q float64) float64 {
	slices.Sort(xs)
	pos := q * float64(len(xs)-1)
	lo := int(pos)
	if lo+1 >= len(xs) {
		return xs[lo]
	}
	return xs[lo] + (pos-float64(lo))*(xs[lo+1]-xs[lo])
}

// worseFirst orders compared jobs as Worst lists them: the largest error
// first; ties by job id.
func worseFirst(a, b Compared) int {
	return cmp.Or(cmp.Compare(abs64(b.ErrS()), abs64(a.ErrS())), cmp.Compare(a.id, b.id), cmp.Compare(a.JobID, b.JobID))
}

func abs64(x int64) int64 {
	if x < 0 {
		return -x
	}
	return x
}
