// Package accuracy scores runtime predictions on measured times: each case
// is one job's times on the profiles of a site, and a protocol hides some of
// them and asks a predictor for each from the rest. The runtime model is
// only worth its complexity where it beats the simple rules (Baselines:
// time ∝ 1/SMs, 1/√SMs, 1/bandwidth share, and a fixed part taken from the
// peers), so every score is printed beside theirs on the same trials, and
// the model is said to win only where it beats the best of them.
package accuracy

import (
	"cmp"
	"math"
	"slices"
	"strings"

	"github.com/migadvisor/migadvisor/advisor/base/runmodel"
	"github.com/migadvisor/migadvisor/catalog"
)

// Case is one job's measured times, one point per profile.
type Case struct {
	Name      string
	Benchmark string // the reference benchmark it is, if any: left out of what predicts it ("": Name)
	Points    []runmodel.Point
}

// benchmark is the reference benchmark a prediction of the case must not learn from.
func (c Case) benchmark() string { return cmp.Or(c.Benchmark, c.Name) }

// Protocol is which times a trial knows.
type Protocol int

const (
	LeaveOneOut Protocol = iota // all but one profile known → that one
	TwoKnown                    // two profiles known → each of the others
	OneKnown                    // one profile known → each of the others
)

func (p Protocol) String() string {
	return [...]string{"leave one profile out", "two profiles known", "one profile known"}[p]
}

// Trial is one prediction: the target's time from the known points.
type Trial struct {
	Case   string
	Known  []runmodel.Point
	Target runmodel.Point
}

// Trials are the protocol's predictions on a case.
func Trials(p Protocol, c Case) []Trial {
	var out []Trial
	n := len(c.Points)
	for i, target := range c.Points {
		others := slices.Delete(slices.Clone(c.Points), i, i+1)
		switch p {
		case LeaveOneOut:
			if n >= 3 {
				out = append(out, Trial{c.Name, others, target})
			}
		case OneKnown:
			for _, k := range others {
				out = append(out, Trial{c.Name, []runmodel.Point{k}, target})
			}
		case TwoKnown:
			for a := 0; a < len(others); a++ {
				for b := a + 1; b < len(others); b++ {
					out = append(out, Trial{c.Name, []runmodel.Point{others[a], others[b]}, target})
				}
			}
		}
	}
	return out
}

// Predictor predicts a target's time from known points; lo and hi are the
// range it prints (equal when it gives none).
type Predictor interface {
	Name() string
	Predict(c Case, known []runmodel.Point, target runmodel.Point) (seconds, lo, hi float64, ok bool)
}

// Model is migadvisor's runtime model as recommend uses it: the
// explanation the known points support, or with one point the prior from
// the job's peers (the set's other cases, as recommend's are the history's
// other scripts), else from the site's reference benchmarks; the case's own
// benchmark is left out of the references and of the ranges' calibration
// when it is one of them.
type Model struct {
	Site  *catalog.Site
	Cases []Case // the set scored: each case's peers are the others
}

func (Model) Name() string { return "migadvisor" }

func (m Model) Predict(c Case, known []runmodel.Point, target runmodel.Point) (float64, float64, float64, bool) {
	if len(known) == 0 {
		return 0, 0, 0, false
	}
	refs := peerReferences(m.Site, m.Cases, c)
	s, ok := runmodel.ExplainTimes(known, refs)
	if !ok {
		s = refs.Prior()
	}
	sec, lo, hi, _ := s.Predict(known, target.Shares)
	return sec, lo, hi, true
}

// GeometricMean is the model before issue 20: every job bound by the
// geometric mean of its SM and bandwidth shares.
type GeometricMean struct{ Site *catalog.Site }

func (GeometricMean) Name() string { return "geometric mean" }

func (m GeometricMean) Predict(c Case, known []runmodel.Point, target runmodel.Point) (float64, float64, float64, bool) {
	if len(known) == 0 {
		return 0, 0, 0, false
	}
	s, ok := runmodel.FitOn(catalog.Mixed, known)
	if !ok {
		s = runmodel.ReferencesOf(m.Site, c.benchmark()).Prior()
	}
	sec, _, _, _ := s.Predict(known, target.Shares)
	return sec, sec, sec, true
}

// Hindsight is the best of the explanations' fits for each trial, chosen
// knowing the answer: no model that picks one of them can do better, so it
// shows what the data allow.
type Hindsight struct{}

func (Hindsight) Name() string { return "best in hindsight" }

func (Hindsight) Predict(_ Case, known []runmodel.Point, target runmodel.Point) (float64, float64, float64, bool) {
	best, ok := math.Inf(1), false
	if len(known) < 2 {
		return 0, 0, 0, false
	}
	for _, s := range runmodel.FitEach(known) {
		sec, _, _, _ := s.Predict(known, target.Shares)
		if math.Abs(math.Log(sec/target.Seconds)) < math.Abs(math.Log(best/target.Seconds)) {
			best, ok = sec, true
		}
	}
	return best, best, best, ok
}

// identified names each case after the site's reference benchmark it is,
// when its times are one's (a published table under another file name), so
// that the benchmark does not predict itself.
func identified(site *catalog.Site, cases []Case) []Case {
	refs := ReferenceCases(site)
	out := slices.Clone(cases)
	for i, c := range out {
		for _, ref := range refs {
			if samePoints(c.Points, ref.Points) {
				out[i].Benchmark = ref.Name
			}
		}
	}
	return out
}

func samePoints(a, b []runmodel.Point) bool {
	return len(a) == len(b) && !slices.ContainsFunc(a, func(p runmodel.Point) bool {
		return !slices.ContainsFunc(b, func(q runmodel.Point) bool {
			return q.Profile == p.Profile && math.Abs(q.Seconds/p.Seconds-1) < 1e-6
		})
	})
}

// ReferenceCases are the site's reference benchmarks as cases: each
// benchmark's completed profiles.
func ReferenceCases(site *catalog.Site) []Case {
	set, ok := catalog.ReferenceFor(site)
	if !ok {
		return nil
	}
	var cases []Case
	for i := range set.Benchmarks {
		b := &set.Benchmarks[i]
		if !b.IsPrior() || strings.Contains(b.Name, "@") {
			continue
		}
		if points := runmodel.BenchmarkPoints(site, b); len(points) >= 2 {
			cases = append(cases, Case{Name: b.Name, Points: points})
		}
	}
	return cases
}
