package collect

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/migadvisor/migadvisor/advisor/history"
	"github.com/migadvisor/migadvisor/slurm"
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
