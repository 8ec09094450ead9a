package advisor

import (
	"math"
	"strconv"
)

// RoundSU rounds an SU figure to what people read and every output prints:
// three significant digits (0.0697, 2.36, 11.3), whole units from 100 on.
func RoundSU(x float64) float64 {
	if x == 0 || math.IsInf(x, 0) || math.IsNaN(x) {
		return x
	}
	if math.Abs(x) >= 100 {
		return math.Round(x)
	}
	scale := math.Pow(10, 3-math.Ceil(math.Log10(math.Abs(x))))
	if v := math.Round(x*scale) / scale; v != 0 {
		return v
	}
	return x
}

// FormatSU prints an SU figure as RoundSU rounds it, never with an exponent.
func FormatSU(x float64) string {
	return strconv.FormatFloat(RoundSU(x), 'f', -1, 64)
}

// workScales are the multiples a work unit is shown in.
var workScales = []struct {
	factor float64
	prefix string
}{{1, ""}, {1e3, "1k "}, {1e6, "1M "}, {1e9, "1B "}}

// scaleWork expresses SU per unit of work per a multiple of the unit that
// puts the smallest figure at 0.1 or more (SU per 1M samples, not 3.47e-07
// SU per sample), the same multiple for every profile, and rounds them.
func (a *analysis) scaleWork() {
	least := math.Inf(1)
	for _, pa := range a.rec.Profiles {
		if pa.SUPerWork != nil && *pa.SUPerWork > 0 {
			least = min(least, *pa.SUPerWork)
		}
	}
	if math.IsInf(least, 1) {
		return
	}
	scale := workScales[len(workScales)-1]
	for _, s := range workScales {
		if least*s.factor >= 0.1 {
			scale = s
			break
		}
	}
	for i := range a.rec.Profiles {
		if pa := &a.rec.Profiles[i]; pa.SUPerWork != nil {
			pa.SUPerWork = ptr(RoundSU(*pa.SUPerWork * scale.factor))
			pa.WorkUnit = scale.prefix + pa.WorkUnit
		}
	}
}
