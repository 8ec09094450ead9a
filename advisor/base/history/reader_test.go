package history

import (
	"context"
	"path/filepath"
	"reflect"
	"slices"
	"strings"
	"testing"
	"time"
)

// readerHistory holds jobs 4242-4246 under cluster a, 4242-4244 under b
// too (4244 submitted a day later there: another job, the newest), a
// submission that links 4242 under b to a script, and 4242's output
// scanned under a: 4242 and 4243 are one job of two rows each, 4242's
// record a's (its output) with b's link.
func readerHistory(t *testing.T) *Store {
	t.Helper()
	s := openTemp(t)
	importAs(t, s, "a", dumpLines("4242 4243 4244 4245 4246", same))
	importAs(t, s, "b", dumpLines("4242 4243 4244", func(l string) string {
		return strings.Replace(l, "2026-11-21T04:00:00", "2026-11-22T04:00:00", 1)
	}))
	ctx := context.Background()
	at := time.Date(2026, 11, 23, 12, 0, 0, 0, time.UTC)
	if err := s.RecordSubmissions(ctx, []Submission{{Cluster: "b", JobID: "4242", Fingerprint: "fp", Source: "/u/train.sh", Script: "/u/train.sh", Submitted: at}}); err != nil {
		t.Fatal(err)
	}
	if err := s.RecordOutput(ctx, "a", "4242", "/u/slurm-4242.out", 10, at, scanned(t, "done\n")); err != nil {
		t.Fatal(err)
	}
	return s
}

// A Reader's two passes read what History reads: Jobs each job once in
// its order, with the fields it lists as History has them and the rows it
// came from; Records the whole records again, in the order of the rows
// asked for.
func TestReaderReadsWhatHistoryReads(t *testing.T) {
	ctx := context.Background()
	s := readerHistory(t)
	for _, f := range []HistoryFilter{{}, {GPU: true, Ended: Period{From: time.Date(2026, 11, 21, 3, 0, 0, 0, time.UTC)}}} {
		want, err := s.History(ctx, f)
		if err != nil {
			t.Fatal(err)
		}
		rd, err := s.Reader(ctx)
		if err != nil {
			t.Fatal(err)
		}
		var got []JobRecord
		var sets [][]int64
		err = rd.Jobs(ctx, f, func(r *JobRecord, rows []int64) error {
			got = append(got, *r)
			sets = append(sets, slices.Clone(rows))
			return nil
		})
		if err != nil {
			t.Fatal(err)
		}
		if len(got) != len(want) {
			t.Fatalf("%+v: Jobs read %v, History %v", f, jobIDs(got), jobIDs(want))
		}
		for i := range want {
			w, g := want[i], got[i]
			light := JobRecord{Cluster: w.Cluster, Key: w.Key, JobID: w.JobID, Name: w.Name, User: w.User, Partition: w.Partition, QOS: w.QOS,
				State: w.State, Submit: w.Submit, End: w.End, ElapsedS: w.ElapsedS, CPUs: w.CPUs, ReqMemMiB: w.ReqMemMiB, GPUType: w.GPUType,
				GPUCount: w.GPUCount, Profile: w.Profile, Stub: w.Stub, Fingerprint: w.Fingerprint, Script: w.Script,
				RequestedProfile: w.RequestedProfile, SweepDir: w.SweepDir, Workload: w.Workload, Stdout: w.Stdout, OutputPath: w.OutputPath}
			if !reflect.DeepEqual(g, light) {
				t.Errorf("%+v: Jobs' %s is\n%+v, want\n%+v", f, w.JobID, g, light)
			}
			if n := 1 + btoi(w.JobID == "4242" || w.JobID == "4243"); len(sets[i]) != n {
				t.Errorf("%+v: %s/%s came from rows %v, want %d", f, w.Cluster, w.JobID, sets[i], n)
			}
		}
		// Whole again, each job alone and all of them as one set, reversed.
		alone, err := rd.Records(ctx, sets)
		if err != nil {
			t.Fatal(err)
		}
		for i := range want {
			if len(alone[i]) != 1 || !reflect.DeepEqual(alone[i][0], want[i]) {
				t.Errorf("%+v: Records of %s: %+v, want %+v", f, want[i].JobID, alone[i], want[i])
			}
		}
		var all []int64
		for i := len(sets) - 1; i >= 0; i-- {
			all = append(all, sets[i]...)
		}
		one, err := rd.Records(ctx, [][]int64{all})
		if err != nil {
			t.Fatal(err)
		}
		back := slices.Clone(want)
		slices.Reverse(back)
		if !reflect.DeepEqual(one[0], back) {
			t.Errorf("%+v: Records of every row, reversed: %v, want %v", f, jobIDs(one[0]), jobIDs(back))
		}
		if err := rd.Close(); err != nil {
			t.Fatal(err)
		}
	}
}

func btoi(b bool) int {
	if b {
		return 1
	}
	return 0
}

// A Reader reads the history as it stood at its first read: jobs a collect
// removes or adds meanwhile are read as they were, or not at all.
func TestReaderReadsOneSnapshot(t *testing.T) {
	ctx := context.Background()
	s := readerHistory(t)
	rd, err := s.Reader(ctx)
	if err != nil {
		t.Fatal(err)
	}
	defer rd.Close()
	var sets [][]int64
	err = rd.Jobs(ctx, HistoryFilter{}, func(r *JobRecord, rows []int64) error {
		sets = append(sets, slices.Clone(rows))
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := s.db.Exec(`DELETE FROM jobs WHERE job_key = '4243'`); err != nil {
		t.Fatal(err)
	}
	importAs(t, s, "a", strings.ReplaceAll(dumpLines("4246", same), "4246", "4247"))
	recs, err := rd.Records(ctx, sets)
	if err != nil {
		t.Fatal(err)
	}
	var ids []string
	for _, set := range recs {
		ids = append(ids, jobIDs(set)...)
	}
	if want := []string{"b/4244", "a/4246", "a/4245", "a/4244", "a/4243", "a/4242"}; !slices.Equal(ids, want) {
		t.Errorf("read %v, want %v as they were", ids, want)
	}
	if now, _ := s.History(ctx, HistoryFilter{}); !slices.Equal(jobIDs(now), []string{"b/4244", "a/4247", "a/4246", "a/4245", "a/4244", "a/4242"}) {
		t.Errorf("beside the reader, the history holds %v", jobIDs(now))
	}
}

// A Reader reads a history opened read-only (the site history plan and
// report read), a published snapshot (immutable) and an empty one in
// memory as it reads the one its writer opened.
func TestReaderReadsEveryKindOfHistory(t *testing.T) {
	ctx := context.Background()
	s := readerHistory(t)
	want, err := s.History(ctx, HistoryFilter{})
	if err != nil {
		t.Fatal(err)
	}
	snapshot := filepath.Join(t.TempDir(), "site.db")
	if err := s.Snapshot(ctx, snapshot); err != nil {
		t.Fatal(err)
	}
	empty, _, err := OpenToRead(ctx, filepath.Join(t.TempDir(), "none.db"))
	if err != nil {
		t.Fatal(err)
	}
	defer empty.Close()
	for _, c := range []struct {
		name string
		path string
		st   *Store
		want []JobRecord
	}{{name: "read-only", path: s.Path(), want: want}, {name: "snapshot", path: snapshot, want: want}, {name: "empty", st: empty}} {
		st := c.st
		if st == nil {
			if st, err = OpenWith(ctx, c.path, Options{ReadOnly: true}); err != nil {
				t.Fatal(err)
			}
			defer st.Close()
		}
		rd, err := st.Reader(ctx)
		if err != nil {
			t.Fatalf("%s: %v", c.name, err)
		}
		var sets [][]int64
		err = rd.Jobs(ctx, HistoryFilter{}, func(r *JobRecord, rows []int64) error {
			sets = append(sets, slices.Clone(rows))
			return nil
		})
		if err != nil {
			t.Fatalf("%s: %v", c.name, err)
		}
		recs, err := rd.Records(ctx, [][]int64{slices.Concat(sets...)})
		if err != nil {
			t.Fatalf("%s: %v", c.name, err)
		}
		if !reflect.DeepEqual(recs[0], c.want) && !(len(recs[0]) == 0 && len(c.want) == 0) {
			t.Errorf("%s: read %v, want %v", c.name, jobIDs(recs[0]), jobIDs(c.want))
		}
		// The history's other reads go on beside the Reader's.
		if _, err := st.History(ctx, HistoryFilter{GPU: true}); err != nil {
			t.Errorf("%s: beside the reader: %v", c.name, err)
		}
		if err := rd.Close(); err != nil {
			t.Errorf("%s: %v", c.name, err)
		}
	}
}
