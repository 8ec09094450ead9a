package catalog

import (
	"fmt"
	"math"
	"strconv"
	"strings"

	"github.com/migadvisor/migadvisor/slurm"
)

// Size is an amount of memory in MiB. In a site file it is written with a unit:
// "9.5GiB", "514000M", "4G" (K/M/G/T are 1024-based, as in Slurm).
type Size float64

// MiB is the size in mebibytes.
func (s Size) MiB() float64 { return float64(s) }

// GiB is the size in gibibytes.
func (s Size) GiB() float64 { return float64(s) / 1024 }

// UnmarshalText reads a size with a unit.
func (s *Size) UnmarshalText(b []byte) error {
	v, err := ParseSize(string(b))
	*s = v
	return err
}

// MarshalText writes the size exactly, in the largest unit that keeps it whole.
func (s Size) MarshalText() ([]byte, error) {
	switch mib := float64(s); {
	case mib >= 1024 && math.Mod(mib, 1024) == 0:
		return []byte(fmt.Sprintf("%gG", mib/1024)), nil
	default:
		return []byte(fmt.Sprintf("%gM", mib)), nil
	}
}

// String is the size for people: GiB with at most two decimals from 1 GiB up.
func (s Size) String() string {
	gib := s.GiB()
	switch {
	case s == 0:
		return "0"
	case gib >= 1024 && math.Mod(gib, 1024) == 0:
		return fmt.Sprintf("%gTiB", gib/1024)
	case gib >= 1:
		return strings.TrimSuffix(strings.TrimRight(fmt.Sprintf("%.2f", gib), "0"), ".") + "GiB"
	default:
		return fmt.Sprintf("%gMiB", math.Round(float64(s)*100)/100)
	}
}

// ParseSize parses a memory size with a unit: K, M, G, T (1024-based, as Slurm
// uses them), optionally followed by "iB" or "B". A number without a unit is MiB.
func ParseSize(text string) (Size, error) {
	v := strings.TrimSpace(text)
	num := strings.TrimRightFunc(v, func(r rune) bool { return (r < '0' || r > '9') && r != '.' })
	unit := strings.ToUpper(strings.TrimSpace(v[len(num):]))
	unit = strings.TrimSuffix(strings.TrimSuffix(unit, "B"), "I")
	mult := map[string]float64{"": 1, "K": 1.0 / 1024, "M": 1, "G": 1024, "T": 1024 * 1024}[unit]
	f, err := strconv.ParseFloat(num, 64)
	if err != nil || mult == 0 || f < 0 {
		return 0, fmt.Errorf("%q is not a memory size (write it like 9.5GiB, 4G or 514000M)", text)
	}
	return Size(f * mult), nil
}

// Walltime is a Slurm time limit in a site file ("3-00:00:00", "72:00:00").
type Walltime struct{ slurm.TimeLimit }

// UnmarshalText reads any Slurm time format.
func (w *Walltime) UnmarshalText(b []byte) error {
	t, err := slurm.ParseTimeLimit(string(b))
	if err != nil {
		return err
	}
	w.TimeLimit = t
	return nil
}

// MarshalText writes the limit as [D-]HH:MM:SS.
func (w Walltime) MarshalText() ([]byte, error) { return []byte(w.String()), nil }
