package report

import (
	"fmt"
	"strconv"

	gpumem "github.com/migadvisor/migadvisor/advisor/base/memory"
	"github.com/migadvisor/migadvisor/internal/textutil"
)

// Takeaways are the report's conclusions in sentences (Markdown): the
// smallest profile that fits, the most SU-efficient one, and the speed-up of
// the full GPU (or the largest profile measured) over each smaller one.
func (rep *Report) Takeaways() ([]string, error) {
	l, err := rep.layout()
	if err != nil {
		return nil, err
	}
	var out []string
	if s := rep.fitTakeaway(); s != "" {
		out = append(out, s)
	}
	if s := rep.efficiencyTakeaway(l); s != "" {
		out = append(out, s)
	}
	if s := rep.speedupTakeaway(l); s != "" {
		out = append(out, s)
	}
	return out, nil
}

func (rep *Report) fitTakeaway() string {
	var ooms, others []string // smaller profiles: out of memory; ended otherwise (timeout, failed)
	for _, pr := range rep.Profiles {
		if pr.Completed == 0 {
			if pr.OOM {
				ooms = append(ooms, pr.Profile.Name)
			} else if pr.Runs > 0 {
				others = append(others, fmt.Sprintf("%s (%s)", pr.Profile.Name, pr.Outcome))
			}
			continue
		}
		fits := fmt.Sprintf("**Smallest profile that fits: %s**", pr.Profile.Name)
		if len(ooms) == 0 && len(others) > 0 {
			// A timeout says nothing about fit: the smaller profiles may fit.
			fits = fmt.Sprintf("**Smallest profile that completed: %s**", pr.Profile.Name)
		}
		switch {
		case len(ooms) > 0:
			fits += fmt.Sprintf("; it ran out of GPU memory on %s", textutil.JoinAnd(ooms))
		case pr == rep.Profiles[0]:
			fits += ", the smallest measured"
		}
		if len(others) > 0 {
			fits += fmt.Sprintf("; it did not complete on %s", textutil.JoinAnd(others))
		}
		if peak := allocatedElsePeak(pr); peak >= 0 {
			fits += fmt.Sprintf(" (peak %s of %s usable)", gpumem.FormatMiB(peak), gpumem.FormatMiB(pr.Profile.UsableMemory.MiB()))
		}
		return fits + "."
	}
	if len(ooms) > 0 {
		return fmt.Sprintf("**No profile fits yet**: it ran out of GPU memory on %s and completed on none.", textutil.JoinAnd(ooms))
	}
	return "**No run completed**, so nothing can be said about fit or cost yet."
}

// efficiencyTakeaway names the profile with the least SU per unit of work
// (or per run), in the figures and unit recommend would print: SU per 1M
// samples at three significant digits, the unit scaled as the generic
// table's column is.
func (rep *Report) efficiencyTakeaway(l layout) string {
	var best, largest *ProfileResult
	var bestV, largestV float64
	var unit string
	for _, pr := range rep.Profiles {
		if pr.Completed == 0 {
			continue
		}
		v, u := l.efficiency(rep, pr)
		if v < 0 {
			continue
		}
		unit = u
		if best == nil || v < bestV {
			best, bestV = pr, v
		}
		largest, largestV = pr, v
	}
	if best == nil {
		return ""
	}
	scale, what := scaledWork{factor: 1}, "SU per run"
	if unit != "" {
		scale = rep.workScale(unit, func(pr *ProfileResult) float64 { v, _ := l.efficiency(rep, pr); return v })
		what = "SU per " + scale.unit
	}
	s := fmt.Sprintf("**Most SU-efficient: %s**, %s %s", best.Profile.Name, scale.text(bestV), what)
	if largest != best {
		// The ratio of the figures as printed, so that the text adds up.
		ratio := largestV / bestV
		if b := scale.value(bestV); b > 0 {
			ratio = scale.value(largestV) / b
		}
		s += fmt.Sprintf(" against %s on %s (%s)", scale.text(largestV), largest.Profile.Name,
			ratioText(ratio, "as much"))
	}
	return s + "."
}

// speedupTakeaway compares the full GPU (else the largest profile
// measured) with each smaller profile: by the rate of work the runs
// reported where every one did (a run that did more work took longer, and
// its wall time says nothing of its speed), else by the layout's time.
func (rep *Report) speedupTakeaway(l layout) string {
	speed, by := rep.speedOf(l)
	ref, ok := rep.Full()
	against := "The full GPU"
	if !ok || speed(ref) <= 0 {
		ref = nil
		for _, pr := range rep.Profiles {
			if speed(pr) > 0 {
				ref = pr
			}
		}
		if ref == nil {
			return ""
		}
		against = fmt.Sprintf("%s (the largest profile measured; no full-GPU run)", ref.Profile.Name)
	}
	var parts []string
	for _, pr := range rep.Profiles {
		if pr == ref || speed(pr) <= 0 || pr.Profile.BilledMemory >= ref.Profile.BilledMemory {
			continue
		}
		ratio, rate := speed(ref)/speed(pr), ratioText(ref.Rate/pr.Rate, "")
		if ratio < 1.05 {
			parts = append(parts, fmt.Sprintf("no faster than %s (%s its speed) at %s the SU rate",
				pr.Profile.Name, ratioText(ratio, ""), rate))
			continue
		}
		parts = append(parts, fmt.Sprintf("%s as fast as %s at %s the SU rate", ratioText(ratio, ""), pr.Profile.Name, rate))
	}
	if len(parts) == 0 {
		return ""
	}
	if by != "" {
		return fmt.Sprintf("**Speed-up** (in %s): %s ran it %s.", by, against, textutil.JoinAnd(parts))
	}
	return fmt.Sprintf("**Speed-up:** %s ran it %s.", against, textutil.JoinAnd(parts))
}

// speedOf is how fast a profile's completed runs went, higher faster, and
// the rate it is in: the rate of work they reported (ns/day) where every
// profile that completed reported one in the same unit, else the inverse
// of the layout's time and "". A profile with no figure is ≤ 0.
func (rep *Report) speedOf(l layout) (func(*ProfileResult) float64, string) {
	unit := ""
	for _, pr := range rep.Profiles {
		if pr.Completed == 0 {
			continue
		}
		v, u := workRate(pr)
		if v <= 0 || unit != "" && u != unit {
			unit = ""
			break
		}
		unit = u
	}
	if unit != "" {
		return func(pr *ProfileResult) float64 {
			if v, u := workRate(pr); pr.Completed > 0 && u == unit {
				return v
			}
			return -1
		}, unit
	}
	return func(pr *ProfileResult) float64 {
		if d := l.duration(pr); pr.Completed > 0 && d > 0 {
			return 1 / d
		}
		return -1
	}, ""
}

// workRate is the rate of work a profile's runs reported, and its unit:
// their work where it is a rate (samples/s), else GROMACS' ns/day; < 0
// where they reported none.
func workRate(pr *ProfileResult) (float64, string) {
	if pr.IsRate() && pr.Work > 0 {
		return pr.Work, pr.WorkUnit
	}
	if v := pr.Metric(MetricNsPerDay); v > 0 {
		return v, "ns/day"
	}
	return -1, ""
}

// ratioText is 2.1×, with a suffix ("2.1× as much").
func ratioText(r float64, suffix string) string {
	s := strconv.FormatFloat(r, 'f', 1, 64) + "×"
	if suffix != "" {
		s += " " + suffix
	}
	return s
}
