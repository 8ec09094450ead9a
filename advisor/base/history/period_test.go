package history

import (
	"context"
	"testing"
	"time"

	"github.com/migadvisor/migadvisor/slurm/sacctgen"
)

func TestMonthPeriod(t *testing.T) {
	day := func(y int, m time.Month, d int) time.Time { return time.Date(y, m, d, 0, 0, 0, 0, time.Local) }
	now := time.Date(2026, 1, 15, 12, 0, 0, 0, time.Local)
	cases := []struct {
		month        string
		from, before time.Time
		ok           bool
	}{
		{"2026-10", day(2026, 10, 1), day(2026, 11, 1), true},
		{"2026-12", day(2026, 12, 1), day(2027, 1, 1), true},
		{"last", day(2025, 12, 1), day(2026, 1, 1), true}, // across the year
		{"2026-13", time.Time{}, time.Time{}, false},
		{"October", time.Time{}, time.Time{}, false},
		{"", time.Time{}, time.Time{}, false},
	}
	for _, c := range cases {
		p, err := MonthPeriod(c.month, now)
		if (err == nil) != c.ok || !p.From.Equal(c.from) || !p.Before.Equal(c.before) {
			t.Errorf("MonthPeriod(%q) = %v – %v, %v; want %v – %v, ok %v", c.month, p.From, p.Before, err, c.from, c.before, c.ok)
		}
	}
}

// The jobs a history holds with no end (a dump without End) are counted
// apart from those that ended: an empty report says why, not "no job".
func TestHeldInCountsTheJobsWithNoEnd(t *testing.T) {
	s := openTemp(t)
	importText(t, s, sacctgen.WithoutFields(devDump(t), "End"))
	held, err := s.HeldIn(context.Background(), Period{})
	if err != nil {
		t.Fatal(err)
	}
	if held.Jobs != 0 || held.NoEnd != 14 {
		t.Errorf("held %+v, want no ended job and 14 with no end", held)
	}
}
