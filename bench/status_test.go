package bench

import (
	"context"
	"encoding/json"
	"strings"
	"testing"
	"time"

	"github.com/migadvisor/migadvisor/advisor/history"
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
	outcomes, err := ExplainEnded(context.Background(), h, nil, tracked)
	if err != nil {
		t.Fatal(err)
	}
	kept, left := Recent(tracked, outcomes, now.Add(-RecentWindow))
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
