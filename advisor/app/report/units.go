package report

import (
	"github.com/migadvisor/migadvisor/advisor"
	"github.com/migadvisor/migadvisor/catalog"
)

// How the report writes its figures: SU as recommend and history round
// them (catalog.FormatSU), memory as every other command writes it
// (memory.FormatMiB: 9.5 GiB), and SU per unit of work per the multiple of
// the unit that recommend shows it in (SU per 1M samples, not 3.47e-07 SU per
// samples). The published table layouts keep their own units and rounding.

// scaledWork is the figures' scale, and the unit as "SU per ..." reads it.
type scaledWork struct {
	factor float64
	unit   string // "1M samples", "sample", "simulated ns"
}

func scaleFor(unit string, perWork []float64) scaledWork {
	f, prefix := advisor.WorkScale(perWork)
	return scaledWork{factor: f, unit: advisor.WorkUnitText(prefix + unit)}
}

// value is SU per unit of work at the scale, rounded as recommend rounds it.
func (s scaledWork) value(perWork float64) float64 {
	return catalog.RoundSU(perWork * s.factor)
}

// text is the figure as printed: 0.347, never an exponent.
func (s scaledWork) text(perWork float64) string {
	return catalog.FormatSU(perWork * s.factor)
}
