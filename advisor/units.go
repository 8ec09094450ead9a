package advisor

import (
	"math"
	"strings"

	"github.com/migadvisor/migadvisor/internal/textutil"
)

// plural is textutil.Plural under the short name the advisor's sentences use.
var plural = textutil.Plural

// workScales are the multiples a work unit is shown in.
var workScales = []struct {
	factor float64
	prefix string
}{{1, ""}, {1e3, "1k "}, {1e6, "1M "}, {1e9, "1G "}} // SI prefixes: 1B read as a byte or a billion

// WorkScale is the multiple of a work unit that puts the least of the
// figures (SU per unit of work) at 0.1 or more: SU per 1M samples, not
// 3.47e-07 SU per sample. Figures ≤ 0 or not finite are ignored; with
// none, the unit itself. recommend and the docs show work alike through it.
func WorkScale(perWork []float64) (factor float64, prefix string) {
	least := math.Inf(1)
	for _, v := range perWork {
		if v > 0 && !math.IsInf(v, 0) && !math.IsNaN(v) {
			least = min(least, v)
		}
	}
	if math.IsInf(least, 1) {
		return 1, ""
	}
	for _, s := range workScales {
		if least*s.factor >= 0.1 {
			return s.factor, s.prefix
		}
	}
	last := workScales[len(workScales)-1]
	return last.factor, last.prefix
}

// WorkUnitText is a work unit as "SU per ..." reads it: a multiple keeps
// its plural (1k samples), a single unit is singular (SU per sample, per
// token); a unit of symbols or one that reads as singular (ns, ns/day,
// simulated ns) is kept.
func WorkUnitText(unit string) string {
	unit = strings.TrimSpace(unit)
	if first, _, ok := strings.Cut(unit, " "); ok {
		for _, s := range workScales {
			if s.prefix != "" && first == strings.TrimSpace(s.prefix) {
				return unit
			}
		}
	}
	if strings.ContainsAny(unit, "/") {
		return unit
	}
	i := strings.LastIndexByte(unit, ' ') + 1
	return unit[:i] + singular(unit[i:])
}

// singular is an English plural's singular, for the words work is counted
// in (samples, tokens, images, batches, queries); a word of three letters or
// fewer (ns, ops, us) or one not ending in s is kept.
func singular(word string) string {
	lower := strings.ToLower(word)
	switch {
	case len(word) <= 3 || !strings.HasSuffix(lower, "s") || strings.HasSuffix(lower, "ss") ||
		strings.HasSuffix(lower, "us") || strings.HasSuffix(lower, "is"):
		return word
	case strings.HasSuffix(lower, "ies"):
		return word[:len(word)-3] + "y"
	case strings.HasSuffix(lower, "ches"), strings.HasSuffix(lower, "shes"), strings.HasSuffix(lower, "xes"):
		return word[:len(word)-2]
	}
	return word[:len(word)-1]
}
