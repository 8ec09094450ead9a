package collect

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/migadvisor/migadvisor/advisor/base/history"
	"github.com/migadvisor/migadvisor/slurm"
	"github.com/migadvisor/migadvisor/slurm/slurmtest"
)

// fakeSacct is a sacct that logs each call's arguments (a line per call)
// and prints window.psv, or recheck.psv when asked about jobs by id; it
// fails when a file named fail exists.
func fakeSacct(t *testing.T) (dir string, calls func() []string) {
	t.Helper()
	dir = t.TempDir()
	script := `#!/bin/sh
d=$(dirname "$0")
echo "$*" >> "$d/calls"
[ -e "$d/fail" ] && { echo "sacct: error: slurmdbd is down" >&2; exit 1; }
case "$*" in *--jobs=*) cat "$d/recheck.psv" ;; *) cat "$d/window.psv" ;; esac
`
	write(t, filepath.Join(dir, "sacct"), script)
	os.Chmod(filepath.Join(dir, "sacct"), 0o755)
	return dir, func() []string {
		data, _ := os.ReadFile(filepath.Join(dir, "calls"))
		os.Remove(filepath.Join(dir, "calls"))
		return strings.Split(strings.TrimSpace(string(data)), "\n")
	}
}

const windowHeader = "JobIDRaw|JobID|User|State|ElapsedRaw|AllocTRES|JobName\n"

func TestImportWindowResumesFromTheWatermark(t *testing.T) {
	ctx := context.Background()
	col := testCollector(t)
	bin, calls := fakeSacct(t)
	col.Slurm = &slurm.Client{Bin: bin}
	q := slurm.SacctQuery{AllUsers: true}
	t1 := time.Date(2026, 11, 20, 12, 0, 0, 0, time.Local)
	opt := WindowOptions{Overlap: 10 * time.Minute, Now: func() time.Time { return t1 }}

	// The first collect: --since given; job 100 is still running.
	write(t, filepath.Join(bin, "window.psv"), windowHeader+
		"100|100|ann|RUNNING|60|gres/gpu:a100_10g=1|train\n101|101|bob|COMPLETED|30||prep\n")
	first := q
	first.Since = t1.Add(-48 * time.Hour)
	res, w, err := col.ImportWindow(ctx, first, opt)
	if err != nil || res.New != 2 || w.FromWatermark || !w.Since.Equal(first.Since) || w.Rechecked != 0 {
		t.Fatalf("first collect: %+v %+v %v", res, w, err)
	}
	if want := t1.Add(-10 * time.Minute); !w.Watermark.Equal(want) {
		t.Fatalf("watermark %v, want %v", w.Watermark, want)
	}
	if c := calls(); len(c) != 1 || !strings.Contains(c[0], "--starttime=2026-11-18T12:00:00") || !strings.Contains(c[0], "--allusers") {
		t.Fatalf("sacct calls %q", c)
	}

	// The next one starts at the watermark. Job 100 ended before it, and
	// the window does not return it: it is asked about by id.
	t2 := t1.Add(time.Hour)
	opt.Now = func() time.Time { return t2 }
	write(t, filepath.Join(bin, "window.psv"), windowHeader+"102|102|ann|COMPLETED|5||eval\n")
	write(t, filepath.Join(bin, "recheck.psv"), windowHeader+"100|100|ann|COMPLETED|3600|gres/gpu:a100_10g=1|train\n")
	res, w, err = col.ImportWindow(ctx, q, opt)
	if err != nil || res.New != 1 || res.Updated != 1 || !w.FromWatermark || w.Rechecked != 1 {
		t.Fatalf("incremental collect: %+v %+v %v", res, w, err)
	}
	c := calls()
	if len(c) != 2 || !strings.Contains(c[0], "--starttime=2026-11-20T11:50:00") || !strings.Contains(c[1], "--jobs=100") {
		t.Fatalf("sacct calls %q", c)
	}
	if state := jobState(t, col.Store, "100"); state != "COMPLETED" {
		t.Errorf("job 100 is %s", state)
	}

	// A failed sacct leaves the watermark where it was.
	write(t, filepath.Join(bin, "fail"), "")
	if _, _, err := col.ImportWindow(ctx, q, WindowOptions{Now: func() time.Time { return t2.Add(time.Hour) }}); err == nil {
		t.Fatal("a failed sacct was not an error")
	}
	calls()
	os.Remove(filepath.Join(bin, "fail"))
	mark, _, _ := col.Store.Watermark(ctx, w.Scope)
	if !mark.Equal(t2.Add(-10 * time.Minute)) {
		t.Errorf("watermark after a failure %v, want %v", mark, t2.Add(-10*time.Minute))
	}

	// An explicit --since after the watermark would skip a stretch: kept.
	late := q
	late.Since = t2.Add(time.Hour)
	if _, w, err = col.ImportWindow(ctx, late, opt); err != nil || !w.Gap.Equal(mark) || !w.Watermark.IsZero() {
		t.Fatalf("late --since: %+v %v", w, err)
	}
	if after, _, _ := col.Store.Watermark(ctx, w.Scope); !after.Equal(mark) {
		t.Errorf("watermark moved to %v", after)
	}
	data, _ := json.Marshal(w)
	var back map[string]any
	json.Unmarshal(data, &back)
	if _, ok := back["watermark"]; ok || back["watermark_kept"] == nil || back["from_watermark"] != false {
		t.Errorf("--json window: %s", data)
	}
}

// Each selection has its own watermark: one user's collect does not move
// the whole cluster's.
func TestWindowScopes(t *testing.T) {
	all := WindowScope("c1", slurm.SacctQuery{AllUsers: true})
	ann := WindowScope("c1", slurm.SacctQuery{Users: []string{"bob", "ann", "bob"}})
	if all != "clusters=c1 users=all" || ann != "clusters=c1 users=ann,bob" {
		t.Errorf("scopes %q, %q", all, ann)
	}
	if m := WindowScope("c1", slurm.SacctQuery{AllUsers: true, Clusters: []string{"b", "a"}}); m != "clusters=a,b users=all" {
		t.Errorf("multi-cluster scope %q", m)
	}
}

func jobState(t *testing.T, st *history.Store, key string) string {
	t.Helper()
	recs, err := st.History(context.Background(), history.HistoryFilter{})
	if err != nil {
		t.Fatal(err)
	}
	for _, r := range recs {
		if r.Key == key {
			return r.State
		}
	}
	return ""
}

// slurmdbdAt is accounting as slurmdbd keeps it when its clock reads now():
// sacct answers the jobs of jobs (one a line: id|submit|start|end, times
// unix seconds, end 0 while running) that were not over before its
// --starttime, and refuses a start after now, as sacct 22.05 does
// ("Start time (...) requested is after end time (...)").
func slurmdbdAt(now func() time.Time, jobs *[]string) *slurmtest.Fake {
	const layout = "2006-01-02T15:04:05"
	return slurmtest.New().On("sacct", func(c slurm.Call) slurmtest.Reply {
		var since time.Time
		for _, a := range c.Args {
			if v, ok := strings.CutPrefix(a, "--starttime="); ok {
				since, _ = time.ParseInLocation(layout, v, time.Local)
			}
		}
		if since.After(now()) {
			return slurmtest.Reply{Status: 1, Stderr: fmt.Sprintf("sacct: error: Start time (%s) requested is after end time (%s).\n",
				since.Format(layout), now().Format(layout))}
		}
		out := "JobIDRaw|JobID|User|State|Submit|Start|End|ElapsedRaw|AllocTRES|JobName\n"
		for _, j := range *jobs {
			f := strings.Split(j, "|")
			at := func(i int) (time.Time, string) {
				sec, _ := strconv.ParseInt(f[i], 10, 64)
				if sec == 0 {
					return time.Time{}, "Unknown"
				}
				return time.Unix(sec, 0), time.Unix(sec, 0).Format(layout)
			}
			end, endText := at(3)
			_, submit := at(1)
			_, start := at(2)
			if !end.IsZero() && end.Before(since) {
				continue
			}
			state := "COMPLETED"
			if end.IsZero() {
				state = "RUNNING"
			}
			out += strings.Join([]string{f[0], f[0], "ann", state, submit, start, endText, "60", "", "j" + f[0]}, "|") + "\n"
		}
		return slurmtest.Reply{Stdout: out}
	})
}

// A host whose clock ran ahead of slurmdbd's, then set back: the jobs that
// end meanwhile are collected all the same. The watermark is kept by
// slurmdbd's clock (the latest time a job of the window holds), not by this
// host's alone, which would leave it after jobs no collect would read; and
// a watermark this host's clock has not reached yet (one an older
// migadvisor left), where sacct refuses to start, is read from where the
// history's jobs end instead, and said.
func TestImportWindowWhenTheClockMovesBack(t *testing.T) {
	ctx := context.Background()
	col := testCollector(t)
	dbd := time.Date(2026, 11, 20, 12, 0, 0, 0, time.Local) // slurmdbd's clock, right
	jobs := []string{
		fmt.Sprintf("1|%d|%d|%d", dbd.Add(-3*time.Hour).Unix(), dbd.Add(-2*time.Hour).Unix(), dbd.Add(-time.Hour).Unix()),
		fmt.Sprintf("2|%d|%d|0", dbd.Add(-30*time.Minute).Unix(), dbd.Add(-20*time.Minute).Unix()),
	}
	fake := slurmdbdAt(func() time.Time { return dbd }, &jobs)
	col.Slurm = &slurm.Client{Runner: fake}
	q := slurm.SacctQuery{AllUsers: true}
	ahead := dbd.Add(24 * time.Hour) // this host's clock, a day ahead
	opt := WindowOptions{Overlap: 10 * time.Minute, Now: func() time.Time { return ahead }}
	q1 := q
	q1.Since = dbd.Add(-48 * time.Hour)
	res, w, err := col.ImportWindow(ctx, q1, opt)
	if err != nil || res.New != 2 {
		t.Fatalf("the collect on a clock ahead: %+v %v", res, err)
	}
	// Job 2 started at 11:40, slurmdbd's latest time: the watermark is
	// 10 minutes before it, not before this host's tomorrow.
	if want := dbd.Add(-30 * time.Minute); !w.Watermark.Equal(want) {
		t.Fatalf("watermark %v, want %v (slurmdbd's latest time, less the overlap)", w.Watermark, want)
	}
	// The clock is set right; meanwhile job 3 ran and ended, job 2 too.
	dbd = dbd.Add(2 * time.Hour)
	jobs[1] = fmt.Sprintf("2|%d|%d|%d", dbd.Add(-150*time.Minute).Unix(), dbd.Add(-140*time.Minute).Unix(), dbd.Add(-90*time.Minute).Unix())
	jobs = append(jobs, fmt.Sprintf("3|%d|%d|%d", dbd.Add(-110*time.Minute).Unix(), dbd.Add(-100*time.Minute).Unix(), dbd.Add(-60*time.Minute).Unix()))
	opt.Now = func() time.Time { return dbd }
	res, w, err = col.ImportWindow(ctx, q, opt)
	if err != nil || res.New != 1 || !w.FromWatermark || jobState(t, col.Store, "3") != "COMPLETED" || jobState(t, col.Store, "2") != "COMPLETED" {
		t.Fatalf("the collect after the clock was set back: %+v %+v %v", res, w, err)
	}

	// A watermark after now, as an older migadvisor on a clock ahead left it.
	if err := col.Store.SetWatermark(ctx, w.Scope, dbd.Add(24*time.Hour)); err != nil {
		t.Fatal(err)
	}
	jobs = append(jobs, fmt.Sprintf("4|%d|%d|%d", dbd.Add(-5*time.Minute).Unix(), dbd.Add(-4*time.Minute).Unix(), dbd.Add(-time.Minute).Unix()))
	dbd = dbd.Add(time.Hour)
	res, w, err = col.ImportWindow(ctx, q, opt)
	// The history's jobs end at job 3's end (dbd-2h, then): from 10 minutes before.
	if want := dbd.Add(-130 * time.Minute); err != nil || res.New != 1 || w.FromWatermark || !w.Since.Equal(want) ||
		!w.Ahead.Equal(dbd.Add(23*time.Hour)) || jobState(t, col.Store, "4") != "COMPLETED" {
		t.Fatalf("a watermark ahead of the clock: %+v %+v %v (want the window from %v)", res, w, err, want)
	}
	var text strings.Builder
	w.writeText(&text)
	if !strings.Contains(text.String(), "later than this host's clock (set back since?)") {
		t.Errorf("the window says %q", text.String())
	}
}
