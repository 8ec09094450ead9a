package cliargs

import (
	"errors"
	"fmt"
	"time"
)

// ErrNotSince is a value that is neither a date, a time nor an age.
var ErrNotSince = errors.New("use a date (2026-11-01), a time (2026-11-01T08:00) or an age (30m, 36h, 7d, 2w)")

// ParseSince reads a --since value: a date (2026-11-01), a date and time
// (2026-11-01T08:00) in local time, or an age before now (30m, 36h, 7d,
// 2w). "" is the zero time: no bound.
func ParseSince(v string, now time.Time) (time.Time, error) {
	if v == "" {
		return time.Time{}, nil
	}
	for _, layout := range []string{"2006-01-02", "2006-01-02T15:04", "2006-01-02T15:04:05"} {
		if t, err := time.ParseInLocation(layout, v, time.Local); err == nil {
			return t, nil
		}
	}
	unit := map[byte]time.Duration{'m': time.Minute, 'h': time.Hour, 'd': 24 * time.Hour, 'w': 7 * 24 * time.Hour}
	if n := len(v); n > 1 {
		if u, ok := unit[v[n-1]]; ok {
			var k int
			if _, err := fmt.Sscanf(v[:n-1], "%d", &k); err == nil && k >= 0 && fmt.Sprint(k) == v[:n-1] {
				return now.Add(-time.Duration(k) * u), nil
			}
		}
	}
	return time.Time{}, ErrNotSince
}
