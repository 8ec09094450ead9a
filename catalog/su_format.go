package catalog

import (
	"math"
	"strconv"
)

// RoundSU rounds an SU figure to what people read and every output prints:
// three significant digits (0.0697, 2.36, 11.3), whole units from 100 on.
//
// The same figure reached in another order (recommend's rate × seconds per
// work, the docs' SU ÷ work) may differ in its last bits, 31.249999999999996
// against 31.25; it is taken to 12 significant digits first, so that both
// round alike (31.3).
func RoundSU(x float64) float64 {
	if x == 0 || math.IsInf(x, 0) || math.IsNaN(x) {
		return x
	}
	x = roundSignificant(x, 12)
	if math.Abs(x) >= 100 {
		return math.Round(x)
	}
	scale := math.Pow(10, 3-math.Ceil(math.Log10(math.Abs(x))))
	if v := math.Round(x*scale) / scale; v != 0 {
		return v
	}
	return x
}

// roundSignificant rounds x to n significant digits.
func roundSignificant(x float64, n int) float64 {
	scale := math.Pow(10, float64(n)-math.Ceil(math.Log10(math.Abs(x))))
	return math.Round(x*scale) / scale
}

// FormatSU prints an SU figure as RoundSU rounds it, never with an exponent.
func FormatSU(x float64) string {
	return strconv.FormatFloat(RoundSU(x), 'f', -1, 64)
}
