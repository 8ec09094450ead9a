// Package accuracy scores runtime predictions on measured times: each case
// is one job's times on the profiles of a site, and a protocol hides some of
// them and asks a predictor for each from the rest. The runtime model is
// only worth its complexity where it beats the naive one (time ∝ 1 / the
// profile's SM count, from the measured profile nearest in SMs), so every
// score is printed beside the naive model's on the same trials.
package accuracy

import (
	"cmp"
	"fmt"
	"io"
	"math"
	"slices"
	"strings"
	"text/tabwriter"

	"github.com/migadvisor/migadvisor/advisor"
	"github.com/migadvisor/migadvisor/catalog"
)

// Case is one job's measured times, one point per profile.
type Case struct {
	Name   string
	Points []advisor.Point
}

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
	Known  []advisor.Point
	Target advisor.Point
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
				out = append(out, Trial{c.Name, []advisor.Point{k}, target})
			}
		case TwoKnown:
			for a := 0; a < len(others); a++ {
				for b := a + 1; b < len(others); b++ {
					out = append(out, Trial{c.Name, []advisor.Point{others[a], others[b]}, target})
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
	Predict(c Case, known []advisor.Point, target advisor.Point) (seconds, lo, hi float64, ok bool)
}

// Naive scales the time of the known profile nearest in SMs by the ratio of
// SM counts: time ∝ 1/SMs.
type Naive struct{ Site *catalog.Site }

func (Naive) Name() string { return "naive 1/SM" }

func (n Naive) Predict(_ Case, known []advisor.Point, target advisor.Point) (float64, float64, float64, bool) {
	sms := func(p advisor.Point) float64 {
		if prof, ok := n.Site.Profile(p.Profile); ok {
			return float64(prof.SMs)
		}
		return 0
	}
	to := sms(target)
	if to <= 0 || len(known) == 0 {
		return 0, 0, 0, false
	}
	from := slices.MinFunc(known, func(a, b advisor.Point) int {
		return cmp.Compare(math.Abs(math.Log(sms(a)/to)), math.Abs(math.Log(sms(b)/to)))
	})
	if sms(from) <= 0 {
		return 0, 0, 0, false
	}
	t := from.Seconds * sms(from) / to
	return t, t, t, true
}

// Model is migadvisor's runtime model as recommend uses it: the scaling
// fitted on the known points, or with one point the prior from the site's
// reference benchmarks, the case's own left out when it is one of them.
type Model struct{ Site *catalog.Site }

func (Model) Name() string { return "migadvisor" }

func (m Model) Predict(c Case, known []advisor.Point, target advisor.Point) (float64, float64, float64, bool) {
	s, ok := advisor.FitScaling(known)
	if !ok {
		s = advisor.ReferencePrior(m.Site, c.Name)
	}
	if len(known) == 0 {
		return 0, 0, 0, false
	}
	sec, lo, hi, _ := s.Predict(known, target.Capacity)
	return sec, lo, hi, true
}

// Score is a predictor's error over a protocol's trials.
type Score struct {
	Trials  int
	MAPE    float64 // mean absolute percentage error, %
	Worst   float64 // the signed error of largest size, %
	Covered int     // measured times inside the printed range
}

// Evaluate runs pred on every trial of the protocol on the cases.
func Evaluate(pred Predictor, p Protocol, cases []Case) Score {
	var s Score
	var sum float64
	for _, c := range cases {
		for _, t := range Trials(p, c) {
			sec, lo, hi, ok := pred.Predict(c, t.Known, t.Target)
			if !ok {
				continue
			}
			e := 100 * (sec - t.Target.Seconds) / t.Target.Seconds
			s.Trials++
			sum += math.Abs(e)
			if math.Abs(e) > math.Abs(s.Worst) {
				s.Worst = e
			}
			if lo <= t.Target.Seconds && t.Target.Seconds <= hi {
				s.Covered++
			}
		}
	}
	if s.Trials > 0 {
		s.MAPE = sum / float64(s.Trials)
	}
	return s
}

// Row is one protocol's scores, the model beside the naive one (and the
// candidate that is to replace the model).
type Row struct {
	Set       string
	Protocol  Protocol
	Model     Score
	Naive     Score
	Candidate Score
}

// Compare scores the predictors on every protocol.
func Compare(set string, site *catalog.Site, cases []Case) []Row {
	var rows []Row
	for _, p := range []Protocol{LeaveOneOut, TwoKnown, OneKnown} {
		rows = append(rows, Row{set, p, Evaluate(Model{site}, p, cases), Evaluate(Naive{site}, p, cases),
			Evaluate(Candidate{site}, p, cases)})
	}
	return rows
}

// Print writes the rows as a table: MAPE, worst error and range coverage.
func Print(w io.Writer, rows []Row) error {
	t := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	fmt.Fprintln(t, "SET\tPROTOCOL\tTRIALS\tMIGADVISOR MAPE\tWORST\tIN RANGE\tNAIVE 1/SM MAPE\tWORST\tCANDIDATE MAPE\tWORST\tIN RANGE")
	for _, r := range rows {
		fmt.Fprintf(t, "%s\t%s\t%d\t%.1f%%\t%+.1f%%\t%s\t%.1f%%\t%+.1f%%\t%.1f%%\t%+.1f%%\t%s\n", r.Set, r.Protocol, r.Model.Trials,
			r.Model.MAPE, r.Model.Worst, coverage(r.Model), r.Naive.MAPE, r.Naive.Worst, r.Candidate.MAPE, r.Candidate.Worst, coverage(r.Candidate))
	}
	return t.Flush()
}

func coverage(s Score) string {
	if s.Trials == 0 {
		return "-"
	}
	return fmt.Sprintf("%d%%", 100*s.Covered/s.Trials)
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
		if points := advisor.BenchmarkPoints(site, b); len(points) >= 2 {
			cases = append(cases, Case{Name: b.Name, Points: points})
		}
	}
	return cases
}
