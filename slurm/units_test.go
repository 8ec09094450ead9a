package slurm

import (
	"testing"
	"time"
)

func TestParseTimeLimit(t *testing.T) {
	tests := []struct {
		in   string
		want time.Duration
	}{
		{"30", 30 * time.Minute},
		{"59:00", 59 * time.Minute},
		{"5:30", 5*time.Minute + 30*time.Second},
		{"01:00:00", time.Hour},
		{"72:00:00", 72 * time.Hour},
		{"2-12", 2*24*time.Hour + 12*time.Hour},
		{"1-02:30", 26*time.Hour + 30*time.Minute},
		{"3-00:00:00", 72 * time.Hour},
		{"0-00:00:10", 10 * time.Second},
	}
	for _, tc := range tests {
		got, err := ParseTimeLimit(tc.in)
		if err != nil || got.Duration != tc.want || got.Unlimited {
			t.Errorf("ParseTimeLimit(%q) = %v, %v; want %v", tc.in, got, err, tc.want)
		}
	}
	for _, in := range []string{"UNLIMITED", "infinite", "0"} {
		if got, err := ParseTimeLimit(in); err != nil || !got.Unlimited {
			t.Errorf("ParseTimeLimit(%q) = %+v, %v; want unlimited", in, got, err)
		}
	}
	for _, in := range []string{"", "1:2:3:4", "a", "1-", "-5", "1:xx", "1.5"} {
		if _, err := ParseTimeLimit(in); err == nil {
			t.Errorf("ParseTimeLimit(%q) succeeded, want an error", in)
		}
	}
}

func TestFormatDuration(t *testing.T) {
	for d, want := range map[time.Duration]string{
		59 * time.Minute:                     "00:59:00",
		72 * time.Hour:                       "3-00:00:00",
		26*time.Hour + 1500*time.Millisecond: "1-02:00:02",
	} {
		if got := FormatDuration(d); got != want {
			t.Errorf("FormatDuration(%v) = %q, want %q", d, got, want)
		}
	}
}

func TestParseMemoryMiB(t *testing.T) {
	tests := map[string]int64{
		"4000": 4000, "4000M": 4000, "4000m": 4000, "4G": 4096, "64G": 65536,
		"1T": 1048576, "2048K": 2, "1K": 1, "0": 0,
	}
	for in, want := range tests {
		if got, err := ParseMemoryMiB(in); err != nil || got != want {
			t.Errorf("ParseMemoryMiB(%q) = %d, %v; want %d", in, got, err, want)
		}
	}
	for _, in := range []string{"", "1.5G", "G", "4X", "-4G", "4GB"} {
		if _, err := ParseMemoryMiB(in); err == nil {
			t.Errorf("ParseMemoryMiB(%q) succeeded, want an error", in)
		}
	}
}
