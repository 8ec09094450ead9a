package report

import (
	"fmt"
	"math"
	"slices"
	"sort"
	"strconv"
	"strings"

	"github.com/migadvisor/migadvisor/catalog"
	"github.com/migadvisor/migadvisor/slurm"
)

// A layout is a site's published table format: its columns, how it names
// profiles and in which order it lists them. The built-in ones are the Wulver
// tables' (see catalog/data/reference/wulver), so generated CSVs drop into
// the same docs pages.
type layout struct {
	first      string // the profile column's name
	label      func(*Report, *ProfileResult) string
	largestTop bool // the PyTorch tables list the largest profile first
	columns    func(*Report) []column
	// duration is the run time the table reports; the chart and the
	// speed-ups use it too.
	duration func(*ProfileResult) float64
	// efficiency is the cost of the work, for the "most SU-efficient"
	// takeaway: lower is better. It is SU per unit of work and the unit
	// (tokens, simulated ns), which the takeaway scales as recommend does,
	// or SU per run and "".
	efficiency func(*Report, *ProfileResult) (float64, string)
}

// column is one table column. A measured column shows OOM on a profile that
// ran out of memory; the others (prices, counts) do not depend on the run.
type column struct {
	name     string
	measured bool
	cell     func(*Report, *ProfileResult) string
}

// Layouts names the built-in table layouts, for flags and docs.
var Layouts = []string{"pytorch", "llm", "gromacs", "generic"}

var layouts = map[string]layout{
	"pytorch": {first: "MIG Profile", label: shortLabel, largestTop: true, duration: (*ProfileResult).TrainingSeconds,
		efficiency: perRun(trainingSU), columns: func(*Report) []column {
			return []column{
				{"Training Time (s)", true, num(2, (*ProfileResult).TrainingSeconds)},
				{"Test Accuracy (%)", true, num(2, metricOf(MetricAccuracy))},
				{"Memory Used (GB)", true, num(3, gb(allocatedElsePeak))},
				{"SU Rate (/hr)", false, trimmed(3, rate)},
				{"SU", true, num(3, trainingSU)},
				{"Cost/Performance", true, num(5, perAccuracy)},
			}
		}},
	"llm": {first: "GPU Profile", label: longLabel, duration: seconds,
		efficiency: per((*ProfileResult).SUPerWork, "tokens"), columns: func(*Report) []column {
			return []column{
				{"Walltime (h)", true, num(3, hours)},
				{"SU Total", true, num(2, (*ProfileResult).SU)},
				{"Tokens Processed", true, num(0, work)},
				{"Tokens/s", true, num(1, tokensPerS)},
				{"Peak Allocated (GB)", true, num(2, gb(func(pr *ProfileResult) float64 { return pr.AllocatedMiB }))},
				{"Peak Reserved (GB)", true, num(2, gb(reservedElsePeak))},
				{"SU per 1M Tokens", true, num(2, perMillion)},
			}
		}},
	"gromacs": {first: "GPU Profile", label: longLabel, duration: gromacsWall,
		efficiency: per(suPerNs, "simulated ns"), columns: func(*Report) []column {
			return []column{
				{"Nodes", false, num(0, func(pr *ProfileResult) float64 { return positive(float64(pr.Nodes)) })},
				{"Cores", false, num(0, metricOf(MetricMPIRanks))},
				{"Threads", false, num(0, threads)},
				{"Performance (ns/day)", true, trimmed(3, nsPerDay)},
				{"Walltime (s)", true, trimmed(3, gromacsWall)},
				// Wulver's "SU Consumption" is the hourly rate, and its
				// Cost/Performance the SU of a simulated ns at that rate.
				{"SU Consumption", false, trimmed(3, rate)},
				{"Cost/Performance", true, trimmed(9, suPerNs)},
			}
		}},
	"generic": {first: "Profile", label: func(_ *Report, pr *ProfileResult) string { return pr.Profile.Name },
		duration: seconds, efficiency: genericEfficiency, columns: genericColumns},
}

// genericColumns suit any workload: runtime, memory, SU, work and the
// metrics the jobs printed. The table is ours, not a published one: its
// figures read as the other commands print them (SU as recommend rounds
// them, memory in GiB, SU per work per 1k or 1M of the unit).
func genericColumns(rep *Report) []column {
	cols := []column{
		{"Runs", false, func(_ *Report, pr *ProfileResult) string { return strconv.Itoa(pr.Runs) }},
		{"Outcome", false, func(_ *Report, pr *ProfileResult) string { return pr.Outcome }},
		{"Runtime (s)", true, num(1, seconds)},
		{"Peak GPU Memory (GiB)", true, memory(func(pr *ProfileResult) float64 { return pr.PeakMiB })},
		{"SU Rate (/hr)", false, suCell(rate)},
		{"SU", true, suCell((*ProfileResult).SU)},
	}
	if unit := rep.WorkUnit(); unit != "" {
		cols = append(cols, column{workTitle(rep, unit), true, trimmed(3, work)})
	}
	if unit := rep.DoneUnit(); unit != "" {
		scale := rep.workScale(unit, (*ProfileResult).SUPerWork)
		cols = append(cols, column{"SU per " + scale.unit, true, func(_ *Report, pr *ProfileResult) string {
			if v := pr.SUPerWork(); v >= 0 {
				return scale.text(v)
			}
			return ""
		}})
	}
	for _, m := range rep.metricNames() {
		if memoryMetrics[m] {
			cols = append(cols, column{metricTitle(m), true, memory(metricOf(m))})
			continue
		}
		cols = append(cols, column{metricTitle(m), true, sig(6, metricOf(m))})
	}
	return cols
}

// memoryMetrics are the metrics in MiB, which the generic table prints in
// GiB.
var memoryMetrics = map[string]bool{MetricReserved: true, slurm.AllocatedMetric: true}

// workScale is the scale of SU per unit of work for the report's figures
// (perWork of each profile that did not run out of memory), as recommend
// picks it: the one unit for the whole table and its takeaway.
func (rep *Report) workScale(unit string, perWork func(*ProfileResult) float64) scaledWork {
	var vs []float64
	for _, pr := range rep.Profiles {
		if !pr.OOM {
			vs = append(vs, perWork(pr))
		}
	}
	return scaleFor(unit, vs)
}

// Layout is the layout a report's table uses.
func (rep *Report) layout() (layout, error) {
	name := rep.Workload.Table
	if name == "" {
		name = "generic"
	}
	l, ok := layouts[name]
	if !ok {
		return layout{}, fmt.Errorf("no table layout %q (%s)", name, strings.Join(Layouts, ", "))
	}
	return l, nil
}

// Table is the report as rows of cells, the header first, in its layout.
// A missing figure is an empty cell; a profile that ran out of memory shows
// OOM in the columns its run would have filled.
func (rep *Report) Table() ([][]string, error) {
	l, err := rep.layout()
	if err != nil {
		return nil, err
	}
	cols := l.columns(rep)
	head := []string{l.first}
	for _, c := range cols {
		head = append(head, c.name)
	}
	rows := [][]string{head}
	profiles := slices.Clone(rep.Profiles)
	if l.largestTop {
		slices.Reverse(profiles)
	}
	for _, pr := range profiles {
		row := []string{l.label(rep, pr)}
		for _, c := range cols {
			if c.measured && pr.OOM {
				row = append(row, "OOM")
				continue
			}
			row = append(row, c.cell(rep, pr))
		}
		rows = append(rows, row)
	}
	return rows, nil
}

// WorkUnit is the unit the runs reported work in, "" if none did.
func (rep *Report) WorkUnit() string {
	for _, pr := range rep.Profiles {
		if pr.WorkUnit != "" {
			return pr.WorkUnit
		}
	}
	return ""
}

// DoneUnit is the unit of the work the runs did (a rate's: "ns" of
// ns/day), "" if none reported work.
func (rep *Report) DoneUnit() string {
	for _, pr := range rep.Profiles {
		if pr.DoneUnit != "" {
			return pr.DoneUnit
		}
	}
	return ""
}

// rateUnit is the unit of the rate the runs reported their work in
// (ns/day), "" if they reported an amount or nothing.
func (rep *Report) rateUnit() string {
	for _, pr := range rep.Profiles {
		if pr.IsRate() {
			return pr.WorkUnit
		}
	}
	return ""
}

// workTitle heads the column of the work the runs reported: a rate is
// no amount of work, so it reads as one.
func workTitle(rep *Report, unit string) string {
	if rep.rateUnit() == unit {
		return "Rate (" + unit + ")"
	}
	return "Work (" + unit + ")"
}

func (rep *Report) metricNames() []string {
	seen := map[string]bool{}
	var out []string
	for _, pr := range rep.Profiles {
		for k := range pr.Metrics {
			if !seen[k] {
				seen[k] = true
				out = append(out, k)
			}
		}
	}
	sort.Strings(out)
	return out
}

// gpuName is the site's GPU as the tables name it: "A100" for A100-SXM4-80GB.
func gpuName(rep *Report) string {
	if m, ok := rep.Site.Model(); ok {
		name, _, _ := strings.Cut(m.Name, "-")
		return name
	}
	return "GPU"
}

// nominalGB is the profile's memory as its name gives it: 10, 20, 40, 80.
func nominalGB(pr *ProfileResult) int {
	return int(math.Round(pr.Profile.BilledMemory.GiB()))
}

// shortLabel is the PyTorch tables' "A100_40GB".
func shortLabel(rep *Report, pr *ProfileResult) string {
	return fmt.Sprintf("%s_%dGB", gpuName(rep), nominalGB(pr))
}

// longLabel is the LLM and GROMACS tables' "A100_10gb MIG" and "A100_80gb full GPU".
func longLabel(rep *Report, pr *ProfileResult) string {
	kind := "MIG"
	if !pr.Profile.IsMIG() {
		kind = "full GPU"
	}
	return fmt.Sprintf("%s_%dgb %s", gpuName(rep), nominalGB(pr), kind)
}

// Cell formats. A value < 0 is unknown: an empty cell.

// formatted is a cell of f's value in strconv's format and precision.
func formatted(format byte, prec int, f func(*ProfileResult) float64) func(*Report, *ProfileResult) string {
	return func(_ *Report, pr *ProfileResult) string {
		v := f(pr)
		if v < 0 || math.IsNaN(v) || math.IsInf(v, 0) {
			return ""
		}
		return strconv.FormatFloat(v, format, prec, 64)
	}
}

// num has a fixed number of decimals: 63.44, 0.024.
func num(decimals int, f func(*ProfileResult) float64) func(*Report, *ProfileResult) string {
	return formatted('f', decimals, f)
}

// sig keeps significant digits, for figures of any size.
func sig(digits int, f func(*ProfileResult) float64) func(*Report, *ProfileResult) string {
	return formatted('g', digits, f)
}

// suCell is an SU figure as recommend and history print it: 0.00583, 2.36, 1250.
func suCell(f func(*ProfileResult) float64) func(*Report, *ProfileResult) string {
	return func(_ *Report, pr *ProfileResult) string {
		v := f(pr)
		if v < 0 || math.IsNaN(v) || math.IsInf(v, 0) {
			return ""
		}
		return catalog.FormatSU(v)
	}
}

// memory is a size in MiB as a number of GiB, in the column's unit and
// rounded as the other commands print GiB (2.1): a CSV that charts it
// needs a number, not "2.1 GiB".
func memory(f func(*ProfileResult) float64) func(*Report, *ProfileResult) string {
	return trimmed(2, func(pr *ProfileResult) float64 {
		if v := f(pr); v >= 0 && !math.IsNaN(v) && !math.IsInf(v, 0) {
			return v / 1024
		}
		return -1
	})
}

// trimmed is num without trailing zeros: 43.28, 6, 3.327171904.
func trimmed(decimals int, f func(*ProfileResult) float64) func(*Report, *ProfileResult) string {
	n := num(decimals, f)
	return func(rep *Report, pr *ProfileResult) string { return trimZeros(n(rep, pr)) }
}

// trimZeros drops a decimal number's trailing zeros (and a bare point).
func trimZeros(s string) string {
	if strings.Contains(s, ".") {
		s = strings.TrimRight(strings.TrimRight(s, "0"), ".")
	}
	return s
}

func metricOf(name string) func(*ProfileResult) float64 {
	return func(pr *ProfileResult) float64 { return pr.Metric(name) }
}

func positive(v float64) float64 {
	if v <= 0 {
		return -1
	}
	return v
}

func gb(f func(*ProfileResult) float64) func(*ProfileResult) float64 {
	return func(pr *ProfileResult) float64 {
		if v := f(pr); v >= 0 {
			return v * (1 << 20) / 1e9 // PyTorch's GB: 10⁹ bytes
		}
		return -1
	}
}

func rate(pr *ProfileResult) float64    { return pr.Rate }
func seconds(pr *ProfileResult) float64 { return pr.Seconds }
func work(pr *ProfileResult) float64    { return pr.Work }

func hours(pr *ProfileResult) float64 {
	if pr.Seconds < 0 {
		return -1
	}
	return pr.Seconds / 3600
}

func allocatedElsePeak(pr *ProfileResult) float64 {
	if pr.AllocatedMiB >= 0 {
		return pr.AllocatedMiB
	}
	return pr.PeakMiB
}

func reservedElsePeak(pr *ProfileResult) float64 {
	if v := pr.Metric(MetricReserved); v >= 0 {
		return v
	}
	return pr.PeakMiB
}

// trainingSU is the PyTorch tables' SU: the rate over the training time.
func trainingSU(pr *ProfileResult) float64 {
	if t := pr.TrainingSeconds(); t >= 0 {
		return pr.Rate * t / 3600
	}
	return -1
}

func perAccuracy(pr *ProfileResult) float64 {
	su, acc := trainingSU(pr), pr.Metric(MetricAccuracy)
	if su < 0 || acc <= 0 {
		return -1
	}
	return su / acc
}

func tokensPerS(pr *ProfileResult) float64 {
	if v := pr.Metric(MetricTokensPerS); v >= 0 {
		return v
	}
	if pr.Work > 0 && pr.Seconds > 0 {
		return pr.Work / pr.Seconds
	}
	return -1
}

func perMillion(pr *ProfileResult) float64 {
	if v := pr.SUPerWork(); v >= 0 {
		return v * 1e6
	}
	return -1
}

func threads(pr *ProfileResult) float64 {
	if v := pr.Metric(MetricOMPThreads); v > 0 {
		return v
	}
	return positive(float64(pr.CPUs))
}

func nsPerDay(pr *ProfileResult) float64 {
	if v := pr.Metric(MetricNsPerDay); v >= 0 {
		return v
	}
	if pr.WorkUnit == "ns/day" {
		return pr.Work
	}
	return -1
}

func gromacsWall(pr *ProfileResult) float64 {
	if v := pr.Metric(MetricWallS); v >= 0 {
		return v
	}
	return pr.Seconds
}

func suPerNs(pr *ProfileResult) float64 {
	if p := nsPerDay(pr); p > 0 {
		return pr.Rate * 24 / p
	}
	return -1
}

// perRun is SU per run.
func perRun(f func(*ProfileResult) float64) func(*Report, *ProfileResult) (float64, string) {
	return per(f, "")
}

func per(f func(*ProfileResult) float64, unit string) func(*Report, *ProfileResult) (float64, string) {
	return func(_ *Report, pr *ProfileResult) (float64, string) { return f(pr), unit }
}

// genericEfficiency is SU per unit of work done when every profile reported work,
// else SU per run (the same work each time).
func genericEfficiency(rep *Report, pr *ProfileResult) (float64, string) {
	unit := rep.DoneUnit()
	for _, p := range rep.Profiles {
		if p.Completed > 0 && p.SecondsPerWork <= 0 {
			unit = ""
		}
	}
	if unit == "" {
		return pr.SU(), ""
	}
	return pr.SUPerWork(), unit
}
