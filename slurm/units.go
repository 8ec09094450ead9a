package slurm

import (
	"fmt"
	"math"
	"strconv"
	"strings"
	"time"
)

// TimeLimit is a Slurm time limit. The zero value means "not given".
type TimeLimit struct {
	Duration  time.Duration
	Unlimited bool // INFINITE, UNLIMITED or 0
}

// IsSet reports whether the limit was given at all.
func (t TimeLimit) IsSet() bool { return t.Unlimited || t.Duration > 0 }

// Hours is the limit in hours (0 when unlimited or unset).
func (t TimeLimit) Hours() float64 { return t.Duration.Hours() }

// String formats the limit the way Slurm prints it: [D-]HH:MM:SS.
func (t TimeLimit) String() string {
	if t.Unlimited {
		return "UNLIMITED"
	}
	return FormatDuration(t.Duration)
}

// FormatDuration formats d as Slurm's [D-]HH:MM:SS, rounding up to whole seconds.
func FormatDuration(d time.Duration) string {
	s := int64((d + time.Second - 1) / time.Second)
	days, s := s/86400, s%86400
	h, s := s/3600, s%3600
	m, s := s/60, s%60
	if days > 0 {
		return fmt.Sprintf("%d-%02d:%02d:%02d", days, h, m, s)
	}
	return fmt.Sprintf("%02d:%02d:%02d", h, m, s)
}

// FormatSeconds is FormatDuration of a number of seconds, rounded.
func FormatSeconds(s float64) string {
	return FormatDuration(time.Duration(math.Round(s)) * time.Second)
}

// ParseTimeLimit parses every time format sbatch accepts for --time:
// MM, MM:SS, HH:MM:SS, D-HH, D-HH:MM, D-HH:MM:SS, and INFINITE/UNLIMITED.
// A limit of 0 means no limit, as in sbatch.
func ParseTimeLimit(s string) (TimeLimit, error) {
	v := strings.TrimSpace(s)
	switch strings.ToLower(v) {
	case "infinite", "unlimited":
		return TimeLimit{Unlimited: true}, nil
	case "":
		return TimeLimit{}, fmt.Errorf("empty time limit")
	}
	days := 0
	rest := v
	hasDays := false
	if i := strings.IndexByte(v, '-'); i >= 0 {
		d, err := atoiField(v[:i])
		if err != nil {
			return TimeLimit{}, fmt.Errorf("time limit %q: bad days: %w", s, err)
		}
		days, rest, hasDays = d, v[i+1:], true
	}
	parts := strings.Split(rest, ":")
	if len(parts) > 3 {
		return TimeLimit{}, fmt.Errorf("time limit %q: too many fields", s)
	}
	nums := make([]int, len(parts))
	for i, p := range parts {
		n, err := atoiField(p)
		if err != nil {
			return TimeLimit{}, fmt.Errorf("time limit %q: %w", s, err)
		}
		nums[i] = n
	}
	var h, m, sec int
	switch {
	case hasDays && len(nums) == 1: // D-HH
		h = nums[0]
	case hasDays && len(nums) == 2: // D-HH:MM
		h, m = nums[0], nums[1]
	case len(nums) == 3: // [D-]HH:MM:SS
		h, m, sec = nums[0], nums[1], nums[2]
	case len(nums) == 2: // MM:SS
		m, sec = nums[0], nums[1]
	default: // MM
		m = nums[0]
	}
	d := time.Duration(days)*24*time.Hour + time.Duration(h)*time.Hour +
		time.Duration(m)*time.Minute + time.Duration(sec)*time.Second
	if d == 0 {
		return TimeLimit{Unlimited: true}, nil
	}
	return TimeLimit{Duration: d}, nil
}

func atoiField(s string) (int, error) {
	if s == "" {
		return 0, fmt.Errorf("empty field")
	}
	for _, c := range s {
		if c < '0' || c > '9' {
			return 0, fmt.Errorf("%q is not a whole number", s)
		}
	}
	n, err := strconv.Atoi(s)
	if err != nil {
		return 0, fmt.Errorf("%q is out of range", s)
	}
	return n, nil
}

// ParseMemoryMiB parses a Slurm memory size (--mem, --mem-per-cpu, --mem-per-gpu):
// a whole number with an optional K, M, G or T suffix (1024-based), megabytes when
// there is no suffix. sbatch rejects fractions, and so does this.
func ParseMemoryMiB(s string) (int64, error) {
	v := strings.TrimSpace(s)
	if v == "" {
		return 0, fmt.Errorf("empty memory size")
	}
	mult := 1.0
	switch last := v[len(v)-1]; last {
	case 'K', 'k':
		mult = 1.0 / 1024
	case 'M', 'm':
		mult = 1
	case 'G', 'g':
		mult = 1024
	case 'T', 't':
		mult = 1024 * 1024
	}
	if mult != 1 || v[len(v)-1] == 'M' || v[len(v)-1] == 'm' {
		v = v[:len(v)-1]
	}
	n, err := atoiField(v)
	if err != nil {
		return 0, fmt.Errorf("memory size %q: %w (use a whole number with K, M, G or T)", s, err)
	}
	mib := float64(n) * mult
	if mult < 1 {
		// Slurm rounds kilobytes up to whole megabytes.
		return int64(mib + 0.999999), nil
	}
	return int64(mib), nil
}

// FormatMiB prints a size in MiB the way a person would read it (e.g. 4G, 4000M).
func FormatMiB(mib int64) string {
	switch {
	case mib >= 1024*1024 && mib%(1024*1024) == 0:
		return fmt.Sprintf("%dT", mib/(1024*1024))
	case mib >= 1024 && mib%1024 == 0:
		return fmt.Sprintf("%dG", mib/1024)
	default:
		return fmt.Sprintf("%dM", mib)
	}
}
