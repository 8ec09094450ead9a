package accuracy

import (
	"cmp"
	"fmt"
	"io"
	"math"
	"slices"
	"strings"
	"text/tabwriter"

	"github.com/migadvisor/migadvisor/catalog"
)

// Score is a predictor's error over a protocol's trials.
type Score struct {
	Trials  int     `json:"trials"`
	MAPE    float64 `json:"mape_pct"`           // mean absolute percentage error
	Worst   float64 `json:"worst_pct"`          // the signed error of largest size, %
	Covered *int    `json:"in_range,omitempty"` // measured times inside the printed range (nil: it prints none)
	// Width is the printed range's mean width, (hi − lo) / the prediction,
	// in % (nil: it prints none): a range covers more by being wider.
	Width *float64 `json:"range_width_pct,omitempty"`
}

// Evaluate runs pred on every trial of the protocols on the cases.
func Evaluate(pred Predictor, cases []Case, protocols ...Protocol) Score {
	var trials []caseTrial
	for _, p := range protocols {
		for _, c := range cases {
			for _, t := range Trials(p, c) {
				trials = append(trials, caseTrial{c, t})
			}
		}
	}
	return scoreTrials(pred, trials)
}

// caseTrial is a trial and the case it is of.
type caseTrial struct {
	c Case
	t Trial
}

// scoreTrials runs pred on the trials.
func scoreTrials(pred Predictor, trials []caseTrial) Score {
	var s Score
	var sum, widths float64
	covered := 0
	for _, ct := range trials {
		c, t := ct.c, ct.t
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
		if sec > 0 {
			widths += 100 * (hi - lo) / sec
		}
	}
	if s.Trials > 0 {
		s.MAPE = sum / float64(s.Trials)
		widths /= float64(s.Trials)
	}
	switch pred.(type) {
	case Model, UtilizationModel: // the predictors that print a range
		s.Covered, s.Width = &covered, &widths
	}
	return s
}

// Baseline is a baseline's score on a row's trials.
type Baseline struct {
	Name string `json:"name"`
	Score
}

// Row is one protocol's scores on a set: the model beside each baseline
// (Baselines), the model before (geometric mean) and the best in
// hindsight.
type Row struct {
	Set       string     `json:"set"`
	Protocol  string     `json:"protocol"`
	Model     Score      `json:"migadvisor"`
	Baselines []Baseline `json:"baselines"`
	// Naive is the first baseline's score (naive 1/SM), as the rows had it
	// before there were others.
	Naive        Score  `json:"naive"`
	BestBaseline string `json:"best_baseline"`       // the baseline of least MAPE
	BeatsBest    bool   `json:"beats_best_baseline"` // the model's MAPE is below the best baseline's, as printed
	Before       Score  `json:"geometric_mean"`
	Hindsight    *Score `json:"best_in_hindsight,omitempty"` // with two profiles known or more
}

// Overall is the protocol name of the row that pools all three.
const Overall = "all three"

// Compare scores the predictors on every protocol, then on all of them.
func Compare(set string, site *catalog.Site, cases []Case) []Row {
	cases = identified(site, cases)
	row := func(name string, ps ...Protocol) Row {
		r := Row{Set: set, Protocol: name, Model: Evaluate(Model{site, cases}, cases, ps...),
			Before: Evaluate(GeometricMean{site}, cases, ps...)}
		for _, b := range Baselines(site, cases) {
			r.Baselines = append(r.Baselines, Baseline{b.Name(), Evaluate(b, cases, ps...)})
		}
		r.Naive = r.Baselines[0].Score
		best := r.Best()
		r.BestBaseline, r.BeatsBest = best.Name, r.Standing() == "beats"
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

// Best is the baseline of least MAPE on the row's trials (the first of
// equal ones; one of no trials is never best but where all are).
func (r Row) Best() Baseline {
	key := func(s Score) float64 {
		if s.Trials == 0 {
			return math.Inf(1)
		}
		return s.MAPE
	}
	return slices.MinFunc(r.Baselines, func(a, b Baseline) int { return cmp.Compare(key(a.Score), key(b.Score)) })
}

// Standing is how the model compares with the best baseline: "beats",
// "matches" (the two round alike, to 0.1%) or "does not beat".
func (r Row) Standing() string {
	best := r.Best()
	switch m, b := fmt.Sprintf("%.1f", r.Model.MAPE), fmt.Sprintf("%.1f", best.MAPE); {
	case m == b:
		return "matches"
	case r.Model.MAPE > best.MAPE:
		return "does not beat"
	}
	return "beats"
}

// Verdict says in a line whether migadvisor beat the best baseline on the row.
func (r Row) Verdict() string {
	best := r.Best()
	return fmt.Sprintf("%s, %s: migadvisor %s the best baseline, %s: %.1f%% mean error against %.1f%%, over %d trials",
		r.Set, r.Protocol, r.Standing(), best.Name, r.Model.MAPE, best.MAPE, r.Model.Trials)
}

// Print writes the rows as a table: each predictor's MAPE with its worst
// error, the model's range coverage and width, the best baseline and
// whether the model beats it.
func Print(w io.Writer, rows []Row) error {
	t := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	fmt.Fprint(t, "SET\tPROTOCOL\tTRIALS\tMIGADVISOR\tIN RANGE\tWIDTH")
	if len(rows) > 0 {
		for _, b := range rows[0].Baselines {
			fmt.Fprintf(t, "\t%s", strings.ToUpper(b.Name))
		}
	}
	fmt.Fprintln(t, "\tBEST BASELINE\tBEATS IT\tGEOMETRIC MEAN\tBEST IN HINDSIGHT")
	for _, r := range rows {
		fmt.Fprintf(t, "%s\t%s\t%d\t%s\t%s\t%s", r.Set, r.Protocol, r.Model.Trials, withWorst(r.Model), coverage(r.Model), width(r.Model))
		for _, b := range r.Baselines {
			fmt.Fprintf(t, "\t%s", withWorst(b.Score))
		}
		fmt.Fprintf(t, "\t%s\t%s\t%s\t%s\n", r.BestBaseline, yesNo(r.Standing()), mape(r.Before), hindsight(r.Hindsight))
	}
	return t.Flush()
}

// WriteText writes the rows as a table (Print), then for each row whether
// migadvisor beat the best baseline.
func WriteText(w io.Writer, rows []Row) error {
	if err := Print(w, rows); err != nil {
		return err
	}
	fmt.Fprintln(w)
	for _, r := range rows {
		fmt.Fprintln(w, r.Verdict())
	}
	return nil
}

func yesNo(standing string) string {
	return map[string]string{"beats": "yes", "matches": "tie", "does not beat": "no"}[standing]
}

func mape(s Score) string {
	if s.Trials == 0 {
		return "-"
	}
	return fmt.Sprintf("%.1f%%", s.MAPE)
}

func withWorst(s Score) string {
	if s.Trials == 0 {
		return "-"
	}
	return fmt.Sprintf("%.1f%% (%+.1f%%)", s.MAPE, s.Worst)
}

func coverage(s Score) string {
	if s.Trials == 0 || s.Covered == nil {
		return "-"
	}
	return fmt.Sprintf("%.0f%%", 100*float64(*s.Covered)/float64(s.Trials))
}

func width(s Score) string {
	if s.Trials == 0 || s.Width == nil {
		return "-"
	}
	return fmt.Sprintf("%.0f%%", *s.Width)
}

func hindsight(s *Score) string {
	if s == nil {
		return "-"
	}
	return mape(*s)
}
