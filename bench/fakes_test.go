package bench

import (
	"context"
	"fmt"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/migadvisor/migadvisor/advisor/app/collect"
	"github.com/migadvisor/migadvisor/advisor/base/history"
	"github.com/migadvisor/migadvisor/slurm"
)

// fakeClock starts at a fixed time and moves only when slept on; onSleep
// (when set) runs before each sleep, with the number of sleeps so far.
type fakeClock struct {
	now     time.Time
	sleeps  []time.Duration
	onSleep func(n int)
}

func newFakeClock() *fakeClock {
	return &fakeClock{now: time.Date(2026, 11, 24, 9, 0, 0, 0, time.UTC)}
}

func (c *fakeClock) Now() time.Time { return c.now }

func (c *fakeClock) Sleep(ctx context.Context, d time.Duration) error {
	c.sleeps = append(c.sleeps, d)
	if c.onSleep != nil {
		c.onSleep(len(c.sleeps))
	}
	if err := ctx.Err(); err != nil {
		return err
	}
	c.now = c.now.Add(d)
	return nil
}

// fakeSlurm numbers submissions from 100, keeps each job in the queue for
// polls looks (running after the first), and forgets the ids in forgotten.
type fakeSlurm struct {
	mu        sync.Mutex
	next      int
	submitted []string          // the variants' files, in order
	profileOf map[string]string // job id -> profile (the variant's file name)
	polls     int               // how many looks a job stays queued
	seen      map[string]int
	queueErr  error
}

func newFakeSlurm(polls int) *fakeSlurm {
	return &fakeSlurm{next: 100, profileOf: map[string]string{}, polls: polls, seen: map[string]int{}}
}

func (s *fakeSlurm) Submit(_ context.Context, _, script string, _ ...string) (slurm.JobRef, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	id := fmt.Sprint(s.next)
	s.next++
	s.submitted = append(s.submitted, script)
	s.profileOf[id] = strings.TrimSuffix(filepath.Base(script), ".sh")
	return slurm.JobRef{ID: id, Cluster: "fake"}, nil
}

func (s *fakeSlurm) ShowJob(_ context.Context, id string) (map[string]string, error) {
	return map[string]string{"StdOut": "/out/slurm-" + id + ".out"}, nil
}

func (s *fakeSlurm) ClusterName(context.Context) (string, error) { return "fake", nil }

func (s *fakeSlurm) Queue(_ context.Context, ids []string) ([]slurm.QueuedJob, error) {
	if s.queueErr != nil {
		return nil, s.queueErr
	}
	var out []slurm.QueuedJob
	for _, id := range ids {
		n := s.seen[id]
		s.seen[id]++
		if _, ok := s.profileOf[id]; !ok || n >= s.polls {
			continue // ended and gone, or never had
		}
		state := "RUNNING"
		if n == 0 {
			state = "PENDING"
		}
		out = append(out, slurm.QueuedJob{ID: id, Raw: id, State: state})
	}
	return out, nil
}

// fakeHistory holds sweeps, submissions and job records in memory.
type fakeHistory struct {
	sweeps  []history.Sweep
	subs    []history.Submission
	records []history.JobRecord
	failOn  string // a method that fails: "RecordSweep", "RecordSubmissions", "Tracked"
	reads   int    // calls of Tracked
}

func (h *fakeHistory) RecordSweep(_ context.Context, sw history.Sweep) error {
	if h.failOn == "RecordSweep" {
		return fmt.Errorf("database is locked")
	}
	h.sweeps = append(h.sweeps, sw)
	return nil
}

func (h *fakeHistory) RecordSubmissions(_ context.Context, subs []history.Submission) error {
	if h.failOn == "RecordSubmissions" {
		return fmt.Errorf("database is locked")
	}
	h.subs = append(h.subs, subs...)
	return nil
}

func (h *fakeHistory) History(_ context.Context, f history.HistoryFilter) ([]history.JobRecord, error) {
	var out []history.JobRecord
	for _, r := range h.records {
		key := [2]string{r.Cluster, r.Key}
		if (f.Fingerprint == "" || r.Fingerprint == f.Fingerprint) && (f.Keys == nil || slices.Contains(f.Keys, key)) {
			out = append(out, r)
		}
	}
	return out, nil
}

func (h *fakeHistory) Tracked(_ context.Context, f history.TrackedFilter) ([]history.Tracked, error) {
	h.reads++
	if h.failOn == "Tracked" {
		return nil, fmt.Errorf("database is locked")
	}
	var out []history.Tracked
	for _, s := range h.subs {
		if len(f.JobIDs) > 0 && !slices.Contains(f.JobIDs, s.JobID) || f.SweepDir != "" && s.SweepDir != f.SweepDir {
			continue
		}
		t := history.Tracked{Submission: s}
		for _, r := range h.records {
			if r.Cluster == s.Cluster && r.JobID == s.JobID {
				var end int64
				if r.End != nil {
					end = r.End.Unix()
				}
				t.Jobs = append(t.Jobs, history.TrackedJob{Key: r.Key, ID: r.JobID, State: r.State, Stub: r.Stub, Profile: r.Profile, End: end})
			}
		}
		out = append(out, t)
	}
	return out, nil
}

// fakeAccounting "collects" each ended job as the record its profile's
// ending gives (see ending), into h.
type fakeAccounting struct {
	h       *fakeHistory
	slurm   *fakeSlurm
	ends    map[string]string // profile -> ending: completed, gpu-oom, no-command, timeout
	unknown []string          // ids accounting never had
	scanned int
}

func (a *fakeAccounting) WaitFinal(_ context.Context, ids []string, _ time.Duration) (open, unknown []string, err error) {
	for _, id := range ids {
		profile, ok := a.slurm.profileOf[id]
		if !ok || slices.Contains(a.unknown, id) {
			unknown = append(unknown, id)
			continue
		}
		a.h.records = append(a.h.records, ending(a.ends[profile], id, profile, a.h.fingerprintOf(id)))
	}
	return nil, unknown, nil
}

func (a *fakeAccounting) FileTogether(context.Context) ([]history.Refiled, error) { return nil, nil }

func (a *fakeAccounting) ScanOutputs(context.Context, []string, [][2]string) (collect.OutputResult, error) {
	a.scanned++
	return collect.OutputResult{}, nil
}

func (h *fakeHistory) fingerprintOf(id string) string {
	for _, s := range h.subs {
		if s.JobID == id {
			return s.Fingerprint
		}
	}
	return ""
}

// ending is the record of a job that ended as named.
func ending(how, id, profile, fingerprint string) history.JobRecord {
	end := time.Date(2026, 11, 24, 10, 0, 0, 0, time.UTC)
	code, elapsed, limit := int64(0), int64(600), int64(60)
	r := history.JobRecord{Cluster: "fake", Key: id, JobID: id, State: "COMPLETED", Profile: profile, GPUCount: 1,
		Fingerprint: fingerprint, RequestedProfile: profile, End: &end, ExitCode: &code, ElapsedS: &elapsed, TimeLimitMin: &limit}
	switch how {
	case "gpu-oom":
		r.State, r.GPUOOM, code = "FAILED", "PyTorch", 1
	case "no-command":
		r.State, code = "FAILED", 127
	case "timeout":
		r.State, elapsed = "TIMEOUT", 3630
	case "completed-emulated":
		r.Emulated = []history.EmulatedRun{{Profile: "1g.10gb"}}
	}
	return r
}
