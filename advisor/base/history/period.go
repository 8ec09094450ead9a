package history

import (
	"context"
	"database/sql"
	"fmt"
	"math"
	"time"
)

// MonthPeriod is a calendar month in local time: "2026-10", or "last" for
// the month before now's.
func MonthPeriod(month string, now time.Time) (Period, error) {
	start, err := time.ParseInLocation("2006-01", month, time.Local)
	if month == "last" {
		start, err = time.Date(now.Year(), now.Month()-1, 1, 0, 0, 0, 0, time.Local), nil
	}
	if err != nil {
		return Period{}, fmt.Errorf("%q is not a month: give one as 2026-10, or last", month)
	}
	return Period{From: start, Before: start.AddDate(0, 1, 0)}, nil
}

// Held is what a history holds of ended jobs: how many, the first and the
// last end, and how many of them ended in a period; and how many jobs it
// holds with no end. An empty report says from it why it is empty: a
// history filled from later on, jobs with no end (not ended yet, or read
// from a dump without End), or none at all.
type Held struct {
	Jobs     int        `json:"jobs"`
	First    *time.Time `json:"first_end,omitempty"`
	Last     *time.Time `json:"last_end,omitempty"`
	InPeriod int        `json:"ended_in_period"` // of any kind: GPU or not
	NoEnd    int        `json:"without_end,omitempty"`
}

// HeldIn counts the history's ended jobs (placeholders aside), their first
// and last end, those that ended in p, and the jobs with no end. It reads
// every job's end: an empty report's question, asked once.
func (s *Store) HeldIn(ctx context.Context, p Period) (Held, error) {
	from, before := int64(math.MinInt64), int64(math.MaxInt64)
	if !p.From.IsZero() {
		from = p.From.Unix()
	}
	if !p.Before.IsZero() {
		before = p.Before.Unix()
	}
	var h Held
	var first, last sql.NullInt64
	err := s.db.QueryRowContext(ctx, `SELECT count(j.end), min(j.end), max(j.end),
		coalesce(sum(CASE WHEN j.end >= ? AND j.end < ? THEN 1 ELSE 0 END), 0), count(*) - count(j.end)
		FROM jobs j WHERE j.stub = 0`, from, before).Scan(&h.Jobs, &first, &last, &h.InPeriod, &h.NoEnd)
	if err != nil {
		return h, fmt.Errorf("count the history's jobs: %w", err)
	}
	h.First, h.Last = timePtr(first), timePtr(last)
	return h, nil
}
