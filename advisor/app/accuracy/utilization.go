package accuracy

import (
	"fmt"
	"io"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"text/tabwriter"

	"github.com/migadvisor/migadvisor/advisor/base/runmodel"
	"github.com/migadvisor/migadvisor/catalog"
	"github.com/migadvisor/migadvisor/slurm"
)

// A job measured on one profile is predicted on the others from its GPU's
// utilization there, where it is known (runmodel.PriorScaling: the busy
// share bounds how much of the time scales). Wulver's published tables
// carry no utilization, so it is scored with what the reference workloads
// showed when run under the monitor (testdata/nvml's emulations of them on
// an H100): each published time on a profile, the utilization the same
// workload had on that profile's emulated slice, and the published times
// of the others to predict, beside the baselines on the same trials. The
// matrix-multiplication rows are left out: their published figures are
// peak rates, not a job's time, and rates.py's utilization is the share of
// a fixed time it ran kernels.

// Busy is a run's mean GPU and memory utilization (percent; memory -1
// when unknown) and the shares of the site's GPU it ran at.
type Busy struct {
	GPU, Memory float64
	At          catalog.Shares
}

// On is the utilization the job would have shown on a profile of shares to,
// under the model PriorScaling reads it by: its GPU busy for a part of its
// time that all scales with the resource its utilizations say it waits on,
// idle for the rest, which does not. The memory's keeps its ratio to the
// GPU's, which is what says that resource.
func (b Busy) On(to catalog.Shares) (gpu, memory float64) {
	r := catalog.SMs
	if b.Memory >= 0 {
		r = runmodel.BoundBy(b.GPU, b.Memory)
	}
	u, x, y := b.GPU/100, b.At.Of(r), to.Of(r)
	if u <= 0 || u >= 1 || !(x > 0) || !(y > 0) {
		return b.GPU, b.Memory
	}
	f := (1 - u) / (u*x + 1 - u)
	on := (1 - f) / y / (f + (1-f)/y)
	memory = b.Memory
	if memory >= 0 {
		memory *= on / u
	}
	return 100 * on, memory
}

// ReadBusy reads the utilization of a workload's runs in its emulations
// (dirs, each an emulation's record and its runs' monitor summaries), per
// profile: the median over the emulations of each figure, as recommend
// takes a profile's median. A run that did not complete, or whose summary
// has no utilization, is left out.
func ReadBusy(site *catalog.Site, dirs ...string) (map[string]Busy, error) {
	runs := map[string][]Busy{}
	for _, dir := range dirs {
		path := filepath.Join(dir, slurm.EmulationRecordName)
		data, err := os.ReadFile(path)
		if err != nil {
			return nil, err
		}
		rec, err := slurm.ParseEmulationRecord(path, data)
		if err != nil {
			return nil, err
		}
		for _, run := range rec.Runs {
			p, ok := site.Profile(run.Profile)
			if !ok || run.Outcome != slurm.EmulatedCompleted {
				continue
			}
			if u, m, ok := utilizationOf(filepath.Join(dir, run.Summary)); ok {
				runs[run.Profile] = append(runs[run.Profile], Busy{GPU: u, Memory: m, At: ranAt(site, rec, run, p)})
			}
		}
	}
	out := map[string]Busy{}
	for profile, bs := range runs {
		median := func(f func(Busy) float64) float64 {
			v := make([]float64, len(bs))
			for i, b := range bs {
				v[i] = f(b)
			}
			slices.Sort(v)
			return runmodel.Median(v)
		}
		out[profile] = Busy{GPU: median(func(b Busy) float64 { return b.GPU }), Memory: median(func(b Busy) float64 { return b.Memory }),
			At: catalog.Shares{SM: median(func(b Busy) float64 { return b.At.SM }), Bandwidth: median(func(b Busy) float64 { return b.At.Bandwidth })}}
	}
	return out, nil
}

// UtilizationModel is what recommend predicts for a job measured on one
// profile whose GPU utilization there is known: runmodel.PriorScaling,
// with the references the Model has (the case's own benchmark left out, so
// that no job is scaled like itself). Busy holds each case's utilization
// per profile; a trial whose known profile has none is not its to predict.
type UtilizationModel struct {
	Site  *catalog.Site
	Cases []Case
	Busy  map[string]map[string]Busy // by case, then profile
}

func (UtilizationModel) Name() string { return "migadvisor, with the utilization" }

func (m UtilizationModel) Predict(c Case, known []runmodel.Point, target runmodel.Point) (float64, float64, float64, bool) {
	if len(known) != 1 {
		return 0, 0, 0, false
	}
	b, ok := m.Busy[c.Name][known[0].Profile]
	if !ok {
		return 0, 0, 0, false
	}
	gpu, memory := b.On(known[0].Shares)
	s := runmodel.PriorScaling(peerReferences(m.Site, m.Cases, c), gpu, memory, known)
	sec, lo, hi, _ := s.Predict(known, target.Shares)
	return sec, lo, hi, true
}

// UtilizationRow is the utilization's scores on one capture's trials: a
// published time predicted from another profile's, with the utilization
// the workload had on that profile, beside each baseline on the same
// trials (the peers' fixed part is the model's prediction without it).
type UtilizationRow struct {
	Capture   string     `json:"capture"`
	Known     string     `json:"known"` // which profiles are known: UtilizationFromAny or UtilizationFromWhole
	Model     Score      `json:"migadvisor"`
	Baselines []Baseline `json:"baselines"`
}

// Which known profiles a row's trials are from.
const (
	UtilizationFromAny   = "any profile"
	UtilizationFromWhole = "the whole GPU"
)

// row is the scores as a Row, to compare as the main table's rows are.
func (r UtilizationRow) row() Row { return Row{Model: r.Model, Baselines: r.Baselines} }

// Best is the baseline of least error on the row's trials.
func (r UtilizationRow) Best() Baseline { return r.row().Best() }

// Standing is how the model compares with the best baseline (Row.Standing).
func (r UtilizationRow) Standing() string { return r.row().Standing() }

// CompareUtilization scores the utilization on the published cases whose
// utilization busy holds (by case, then profile), from a capture: every
// trial with one profile known that has it, then those from the whole GPU
// alone, where a site's monitor, jobstats and sacct report it (an A100's
// MIG slices report none).
func CompareUtilization(site *catalog.Site, capture string, published []Case, busy map[string]map[string]Busy) []UtilizationRow {
	cases := identified(site, published)
	var any, whole []caseTrial
	for _, c := range cases {
		for _, t := range Trials(OneKnown, c) {
			if _, ok := busy[c.Name][t.Known[0].Profile]; !ok {
				continue
			}
			any = append(any, caseTrial{c, t})
			if p, ok := site.Profile(t.Known[0].Profile); ok && !p.IsMIG() {
				whole = append(whole, caseTrial{c, t})
			}
		}
	}
	var rows []UtilizationRow
	for _, set := range []struct {
		known  string
		trials []caseTrial
	}{{UtilizationFromAny, any}, {UtilizationFromWhole, whole}} {
		if len(set.trials) == 0 {
			continue
		}
		r := UtilizationRow{Capture: capture, Known: set.known, Model: scoreTrials(UtilizationModel{site, cases, busy}, set.trials)}
		for _, b := range Baselines(site, cases) {
			r.Baselines = append(r.Baselines, Baseline{b.Name(), scoreTrials(b, set.trials)})
		}
		rows = append(rows, r)
	}
	return rows
}

// PrintUtilization writes the rows as a table, then for each whether the
// model beats the best baseline (make accuracy).
func PrintUtilization(w io.Writer, rows []UtilizationRow) error {
	t := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	fmt.Fprint(t, "CAPTURE\tKNOWN\tTRIALS\tWITH UTILIZATION\tIN RANGE\tWIDTH")
	if len(rows) > 0 {
		for _, b := range rows[0].Baselines {
			fmt.Fprintf(t, "\t%s", strings.ToUpper(b.Name))
		}
	}
	fmt.Fprintln(t, "\tBEST BASELINE\tBEATS IT")
	for _, r := range rows {
		fmt.Fprintf(t, "%s\t%s\t%d\t%s\t%s\t%s", r.Capture, r.Known, r.Model.Trials, withWorst(r.Model), coverage(r.Model), width(r.Model))
		for _, b := range r.Baselines {
			fmt.Fprintf(t, "\t%s", withWorst(b.Score))
		}
		fmt.Fprintf(t, "\t%s\t%s\n", r.Best().Name, yesNo(r.Standing()))
	}
	if err := t.Flush(); err != nil {
		return err
	}
	fmt.Fprintln(w)
	for _, r := range rows {
		best := r.Best()
		fmt.Fprintf(w, "%s, one profile known (%s), with its utilization: migadvisor %s the best baseline, %s: %.1f%% mean error against %.1f%%, over %d trials\n",
			r.Capture, r.Known, r.Standing(), best.Name, r.Model.MAPE, best.MAPE, r.Model.Trials)
	}
	return nil
}
