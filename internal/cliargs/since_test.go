package cliargs

import (
	"errors"
	"testing"
	"time"
)

func TestParseSince(t *testing.T) {
	now := time.Date(2026, 11, 21, 12, 0, 0, 0, time.Local)
	for in, want := range map[string]time.Time{
		"":                    {},
		"2026-11-01":          time.Date(2026, 11, 1, 0, 0, 0, 0, time.Local),
		"2026-11-01T08:30":    time.Date(2026, 11, 1, 8, 30, 0, 0, time.Local),
		"2026-11-01T08:30:05": time.Date(2026, 11, 1, 8, 30, 5, 0, time.Local),
		"30m":                 now.Add(-30 * time.Minute),
		"36h":                 now.Add(-36 * time.Hour),
		"0d":                  now,
		"7d":                  now.Add(-7 * 24 * time.Hour),
		"2w":                  now.Add(-14 * 24 * time.Hour),
	} {
		if got, err := ParseSince(in, now); err != nil || !got.Equal(want) {
			t.Errorf("ParseSince(%q) = %v, %v; want %v", in, got, err, want)
		}
	}
	for _, bad := range []string{"yesterday", "7x", "-3d", "d", "+3d", "03d", "3 d", "2026-13-01"} {
		if _, err := ParseSince(bad, now); !errors.Is(err, ErrNotSince) {
			t.Errorf("ParseSince(%q): %v, want ErrNotSince", bad, err)
		}
	}
}
