package collect

import (
	"context"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/migadvisor/migadvisor/advisor/base/history"
	"github.com/migadvisor/migadvisor/slurm"
	"github.com/migadvisor/migadvisor/slurm/slurmtest"
)

// A plain collect (no --since) goes on from where the user's last collect
// by time left off: a session no submission tracks reaches the history.
// A user who never collected by time gets the tracked jobs alone.
func TestPlainCollectContinuesTheOwnWindow(t *testing.T) {
	ctx := context.Background()
	dump := sessionDump("alice|31|jupyter|/w")
	fake := slurmtest.New().Cluster("c1").On("sacct", func(slurm.Call) slurmtest.Reply { return slurmtest.Reply{Stdout: dump} })
	col := testCollector(t)
	col.Slurm = &slurm.Client{Runner: fake}
	run := func(q slurm.SacctQuery, me string) Report {
		t.Helper()
		rep, err := Run(ctx, col, RunOptions{Selection: NewSelection("", q, nil, me), Cluster: "c1"})
		if err != nil {
			t.Fatal(err)
		}
		return rep
	}
	userArgs := func() []string {
		var users []string
		for _, c := range fake.Calls("sacct") {
			users = append(users, slices.DeleteFunc(slices.Clone(c.Args), func(a string) bool { return !strings.HasPrefix(a, "--user") })...)
		}
		return users
	}

	if rep := run(slurm.SacctQuery{}, "alice"); rep.Window != nil || len(userArgs()) != 0 {
		t.Fatalf("a plain collect before any by time read a window (%+v) or asked sacct for %q", rep.Window, userArgs())
	}
	run(slurm.SacctQuery{Since: time.Now().Add(-2 * time.Hour)}, "alice")
	dump = sessionDump("alice|31|jupyter|/w", "alice|32|jupyter|/w")
	rep := run(slurm.SacctQuery{}, "alice")
	if rep.Window == nil || !rep.Window.FromWatermark {
		t.Fatalf("the plain collect after one by time read no window from the watermark: %+v", rep.Window)
	}
	jobs, err := col.Store.History(ctx, history.HistoryFilter{})
	if err != nil || len(jobs) != 2 {
		t.Fatalf("%d jobs, %v; want both sessions", len(jobs), err)
	}
	before := len(fake.Calls("sacct"))
	if rep := run(slurm.SacctQuery{}, "bob"); rep.Window != nil || len(fake.Calls("sacct")) != before {
		t.Errorf("bob, who never collected by time, read a window: %+v", rep.Window)
	}
}
