package bench

import (
	"context"
	"encoding/json"
	"errors"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/migadvisor/migadvisor/advisor/base/history"
	"github.com/migadvisor/migadvisor/slurm"
)

// status lists, by default, the jobs not ended and those that ended in the
// last week; the others are counted, for a line that says so.
func TestRecentKeepsUnsettledAndRecentlyEndedJobs(t *testing.T) {
	now := time.Date(2026, 11, 24, 12, 0, 0, 0, time.UTC)
	day := 24 * time.Hour
	old, recent := now.Add(-30*day), now.Add(-2*day)
	h := &fakeHistory{}
	track := func(id string, submitted time.Time, state string, end *time.Time) {
		h.subs = append(h.subs, history.Submission{Cluster: "c", JobID: id, Submitted: submitted})
		if state != "" {
			h.records = append(h.records, history.JobRecord{Cluster: "c", Key: id, JobID: id, State: state, End: end})
		}
	}
	oldEnd, recentEnd := old.Add(time.Hour), recent
	track("1", old, "COMPLETED", &oldEnd)                  // ended a month ago: left out
	track("2", old, "COMPLETED", &recentEnd)               // submitted long ago, ended two days ago: kept
	track("3", old, "RUNNING", nil)                        // not ended: kept however old
	track("4", old, "", nil)                               // never collected (or unknown to Slurm): kept
	track("5", old.Add(-day), "FAILED", nil)               // ended, no end time: its submission's is old
	track("6", now.Add(-time.Hour), "CANCELLED by 0", nil) // ended, no end time, submitted an hour ago: kept
	tracked, _ := h.Tracked(context.Background(), history.TrackedFilter{})
	kept, left := Recent(tracked, now.Add(-RecentWindow))
	var ids []string
	for _, k := range kept {
		ids = append(ids, k.JobID)
	}
	if strings.Join(ids, " ") != "2 3 4 6" || left != 2 {
		t.Errorf("kept %v, left out %d", ids, left)
	}
}

// A submission recorded without a time (a sweep.json without one) has no
// time in status: never year 1 or 1970.
func TestStatusOfASubmissionWithoutATime(t *testing.T) {
	for _, at := range []time.Time{{}, time.Unix(0, 0), time.Unix(time.Time{}.Unix(), 0)} {
		r := StatusOf(history.Tracked{Submission: history.Submission{JobID: "1", Submitted: at}}, Live{OK: true}, Outcomes{})
		data, _ := json.Marshal(r)
		if !r.Submitted.IsZero() || strings.Contains(string(data), "submitted") {
			t.Errorf("%v: %+v\n%s", at, r.Submitted, data)
		}
	}
}

// A submission's state: squeue's while queued (running wins over pending
// among an array's tasks), accounting's once ended, and "ended (collect)"
// in between.
func TestStatusOfFollowsTheQueueThenAccounting(t *testing.T) {
	tr := history.Tracked{Submission: history.Submission{JobID: "7"}}
	live := Live{OK: true, Jobs: map[string][]slurm.QueuedJob{"7": {{ID: "7_1", State: "PENDING", Reason: "Priority"}, {ID: "7_2", State: "RUNNING", Reason: "None"}}}}
	if r := StatusOf(tr, live, Outcomes{}); r.State != "RUNNING" {
		t.Errorf("queued: %+v", r)
	}
	if r := StatusOf(tr, Live{OK: true}, Outcomes{}); r.State != StateCollect {
		t.Errorf("out of the queue: %+v", r)
	}
	if r := StatusOf(tr, Live{}, Outcomes{}); r.State != StateUnknown {
		t.Errorf("no squeue: %+v", r)
	}
	tr.Jobs = []history.TrackedJob{{Key: "7_1", ID: "7_1", State: "COMPLETED"}, {Key: "7_2", ID: "7_2", State: "FAILED"}, {Key: "7_3", ID: "7_3", State: "COMPLETED"}}
	if r := StatusOf(tr, Live{OK: true}, Outcomes{}); r.State != "COMPLETED 2, FAILED 1" {
		t.Errorf("ended: %+v", r)
	}
}

// fakeQueue is squeue and accounting as status asks them: queued jobs by
// id, the ids accounting lacks, and what was asked.
type fakeQueue struct {
	queued           map[string]string // id -> state
	lacks            []string
	err              error
	askedQ, askedAcc []string
}

func (q *fakeQueue) Queue(_ context.Context, ids []string) ([]slurm.QueuedJob, error) {
	q.askedQ = append(q.askedQ, ids...)
	if q.err != nil {
		return nil, q.err
	}
	var out []slurm.QueuedJob
	for _, id := range ids {
		if st, ok := q.queued[id]; ok {
			out = append(out, slurm.QueuedJob{ID: id, Raw: id, State: st})
		}
	}
	return out, nil
}

func (q *fakeQueue) Lacks(_ context.Context, ids []string) ([]string, error) {
	q.askedAcc = append(q.askedAcc, ids...)
	var out []string
	for _, id := range ids {
		if slices.Contains(q.lacks, id) {
			out = append(out, id)
		}
	}
	return out, nil
}

// statusWorld tracks five jobs: 1 ended long ago, 2 runs, 3 is queued
// with no record yet, 4 is unknown to Slurm, 5 left the queue uncollected.
func statusWorld() (*fakeHistory, *fakeQueue, time.Time) {
	now := time.Date(2026, 11, 24, 12, 0, 0, 0, time.UTC)
	long := now.Add(-30 * 24 * time.Hour)
	h := &fakeHistory{}
	for _, id := range []string{"1", "2", "3", "4", "5"} {
		h.subs = append(h.subs, history.Submission{Cluster: "c", JobID: id, Submitted: long, SweepDir: "/s/" + id})
	}
	end := long.Add(time.Hour)
	h.records = []history.JobRecord{{Cluster: "c", Key: "1", JobID: "1", State: "COMPLETED", End: &end}, {Cluster: "c", Key: "2", JobID: "2", State: "RUNNING"}}
	return h, &fakeQueue{queued: map[string]string{"2": "RUNNING", "3": "PENDING"}, lacks: []string{"4"}}, now
}

func statesOf(rows []JobStatus) string {
	var out []string
	for _, r := range rows {
		out = append(out, r.JobID+":"+r.State)
	}
	return strings.Join(out, " ")
}

// squeue is asked about the jobs not ended; accounting only about those
// neither squeue nor the history has; the job ended weeks ago is counted,
// not listed.
func TestStatusAsksSqueueThenAccounting(t *testing.T) {
	h, q, now := statusWorld()
	res, err := Status(context.Background(), StatusQuery{Now: now}, StatusDeps{Slurm: q, History: h})
	if err != nil {
		t.Fatal(err)
	}
	if got := statesOf(res.Rows); got != "2:RUNNING 3:PENDING 4:"+StateNotInSlurm+" 5:"+StateCollect || res.Tracked != 5 || res.Left != 1 || res.QueueErr != nil {
		t.Errorf("rows %s, tracked %d, left %d, %v", got, res.Tracked, res.Left, res.QueueErr)
	}
	if strings.Join(q.askedQ, " ") != "2 3 4 5" || strings.Join(q.askedAcc, " ") != "4 5" {
		t.Errorf("asked squeue about %v and accounting about %v", q.askedQ, q.askedAcc)
	}
}

// Jobs named by id or sweep, and --all, list however long ago they ended.
func TestStatusOfNamedJobsIgnoresTheWindow(t *testing.T) {
	for _, c := range []struct {
		q    StatusQuery
		want string
	}{
		{StatusQuery{JobIDs: []string{"1"}}, "1:COMPLETED"},
		{StatusQuery{SweepDir: "/s/1"}, "1:COMPLETED"},
		{StatusQuery{All: true}, "1:COMPLETED 2:RUNNING 3:PENDING 4:" + StateNotInSlurm + " 5:" + StateCollect},
	} {
		h, q, now := statusWorld()
		c.q.Now = now
		res, err := Status(context.Background(), c.q, StatusDeps{Slurm: q, History: h})
		if err != nil {
			t.Fatal(err)
		}
		if got := statesOf(res.Rows); got != c.want || res.Left != 0 {
			t.Errorf("%+v: rows %s, left %d", c.q, got, res.Left)
		}
	}
}

// A squeue that fails leaves the states to the history, says why, and
// asks accounting nothing.
func TestStatusWithoutSqueue(t *testing.T) {
	h, q, now := statusWorld()
	q.err = errors.New("squeue: command not found")
	res, err := Status(context.Background(), StatusQuery{Now: now}, StatusDeps{Slurm: q, History: h})
	if err != nil {
		t.Fatal(err)
	}
	if got := statesOf(res.Rows); got != "2:RUNNING 3:unknown 4:unknown 5:unknown" || res.QueueErr != q.err || len(q.askedAcc) != 0 {
		t.Errorf("rows %s, %v, accounting asked about %v", got, res.QueueErr, q.askedAcc)
	}
}

// Seen: `status --all` showed "SUBMITTED 2026-12-07 21:40", the time of
// `track`, for jobs accounting says were submitted on 2026-11-21.
func TestStatusDatesASubmissionByAccounting(t *testing.T) {
	tracked := time.Date(2026, 12, 7, 21, 40, 0, 0, time.UTC)
	submit := time.Date(2026, 11, 21, 9, 0, 0, 0, time.UTC)
	tr := history.Tracked{Submission: history.Submission{JobID: "7", Submitted: tracked},
		Jobs: []history.TrackedJob{{ID: "7_1", Submit: submit.Unix() + 60}, {ID: "7_0", Submit: submit.Unix()}}}
	if r := StatusOf(tr, Live{OK: true}, Outcomes{}); !r.Submitted.Equal(submit) {
		t.Errorf("submitted %v, want accounting's %v", r.Submitted, submit)
	}
	tr.Jobs = nil
	if r := StatusOf(tr, Live{OK: true}, Outcomes{}); !r.Submitted.Equal(tracked) {
		t.Errorf("no accounting yet: submitted %v, want the tracked time %v", r.Submitted, tracked)
	}
}
