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

	"github.com/migadvisor/migadvisor/advisor/runmodel"
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

// Naive scales the time of the known profile nearest in SMs by the ratio of
// SM counts: time ∝ 1/SMs.
type Naive struct{ Site *catalog.Site }

func (Naive) Name() string { return "naive 1/SM" }

func (n Naive) Predict(_ Case, known []runmodel.Point, target runmodel.Point) (float64, float64, float64, bool) {
	sms := func(p runmodel.Point) float64 {
		if prof, ok := n.Site.Profile(p.Profile); ok {
			return float64(prof.SMs)
		}
		return 0
	}
	to := sms(target)
	if to <= 0 || len(known) == 0 {
		return 0, 0, 0, false
	}
	from := slices.MinFunc(known, func(a, b runmodel.Point) int {
		return cmp.Compare(math.Abs(math.Log(sms(a)/to)), math.Abs(math.Log(sms(b)/to)))
	})
	if sms(from) <= 0 {
		return 0, 0, 0, false
	}
	t := from.Seconds * sms(from) / to
	return t, t, t, true
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
	var peers [][]runmodel.Point
	for _, o := range m.Cases {
		if o.Name != c.Name {
			peers = append(peers, o.Points)
		}
	}
	refs := runmodel.ReferencesOf(m.Site, c.benchmark()).WithPeers(peers)
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

// Score is a predictor's error over a protocol's trials.
type Score struct {
	Trials  int     `json:"trials"`
	MAPE    float64 `json:"mape_pct"`           // mean absolute percentage error
	Worst   float64 `json:"worst_pct"`          // the signed error of largest size, %
	Covered *int    `json:"in_range,omitempty"` // measured times inside the printed range (nil: it prints none)
}

// Evaluate runs pred on every trial of the protocols on the cases.
func Evaluate(pred Predictor, cases []Case, protocols ...Protocol) Score {
	var s Score
	var sum float64
	covered := 0
	for _, p := range protocols {
		for _, c := range cases {
			for _, t := range Trials(p, c) {
				sec, lo, hi, ok := pred.Predict(c, t.Known, t.Target)
				e := 100 * (sec - t.Target.Seconds) / t.Target.Seconds
				if !ok || math.IsInf(e, 0) || math.IsNaN(e) {
					continue
				}
				s.Trials++
				sum += math.Abs(e)
				if math.Abs(e) > math.Abs(s.Worst) {
					s.Worst = e
				}
				if lo*(1-1e-9) <= t.Target.Seconds && t.Target.Seconds <= hi*(1+1e-9) {
					covered++
				}
			}
		}
	}
	if s.Trials > 0 {
		s.MAPE = sum / float64(s.Trials)
	}
	if _, ranged := pred.(Model); ranged {
		s.Covered = &covered
	}
	return s
}

// Row is one protocol's scores on a set: the model beside the naive one,
// the model before (geometric mean) and the best in hindsight.
type Row struct {
	Set       string `json:"set"`
	Protocol  string `json:"protocol"`
	Model     Score  `json:"migadvisor"`
	Naive     Score  `json:"naive"`
	Before    Score  `json:"geometric_mean"`
	Hindsight *Score `json:"best_in_hindsight,omitempty"` // with two profiles known or more
}

// Overall is the protocol name of the row that pools all three.
const Overall = "all three"

// Compare scores the predictors on every protocol, then on all of them.
func Compare(set string, site *catalog.Site, cases []Case) []Row {
	cases = identified(site, cases)
	row := func(name string, ps ...Protocol) Row {
		r := Row{set, name, Evaluate(Model{site, cases}, cases, ps...), Evaluate(Naive{site}, cases, ps...),
			Evaluate(GeometricMean{site}, cases, ps...), nil}
		if !slices.Contains(ps, OneKnown) { // hindsight has nothing to choose among from one profile
			h := Evaluate(Hindsight{}, cases, ps...)
			r.Hindsight = &h
		}
		return r
	}
	var rows []Row
	for _, p := range []Protocol{LeaveOneOut, TwoKnown, OneKnown} {
		if r := row(p.String(), p); r.Model.Trials > 0 {
			rows = append(rows, r)
		}
	}
	return append(rows, row(Overall, LeaveOneOut, TwoKnown, OneKnown))
}

// Print writes the rows as a table: MAPE, worst error and range coverage.
func Print(w io.Writer, rows []Row) error {
	t := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	fmt.Fprintln(t, "SET\tPROTOCOL\tTRIALS\tMIGADVISOR\tWORST\tIN RANGE\tNAIVE 1/SM\tWORST\tGEOMETRIC MEAN\tBEST IN HINDSIGHT")
	for _, r := range rows {
		fmt.Fprintf(t, "%s\t%s\t%d\t%s\t%+.1f%%\t%s\t%s\t%+.1f%%\t%s\t%s\n", r.Set, r.Protocol, r.Model.Trials,
			mape(r.Model), r.Model.Worst, coverage(r.Model), mape(r.Naive), r.Naive.Worst, mape(r.Before), hindsight(r.Hindsight))
	}
	return t.Flush()
}

func mape(s Score) string {
	if s.Trials == 0 {
		return "-"
	}
	return fmt.Sprintf("%.1f%%", s.MAPE)
}

func coverage(s Score) string {
	if s.Trials == 0 || s.Covered == nil {
		return "-"
	}
	return fmt.Sprintf("%.0f%%", 100*float64(*s.Covered)/float64(s.Trials))
}

func hindsight(s *Score) string {
	if s == nil {
		return "-"
	}
	return mape(*s)
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
