package accuracy

import (
	"fmt"
	"io"
	"math"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"text/tabwriter"

	"github.com/migadvisor/migadvisor/catalog"
)

// GatedRatio is one ratio of the gate's table: the emulation's, as it ran
// and as the model corrects it, beside the ratios of the baselines that
// need no emulation, each a ratio of the real slices' SMs.
type GatedRatio struct {
	Ratio
	Role EmulationRole
	// SMRatio is the naive baseline, time ∝ 1/SM: the reference profile's
	// SMs over the profile's; SqrtSM its square root, time ∝ 1/√SM.
	SMRatio, SqrtSM float64
}

// Errors are the row's errors against the published ratio, as fractions,
// in the order of RoleScore's: as emulated, the model, 1/SM, 1/√SM.
func (r GatedRatio) Errors() [4]float64 {
	return [4]float64{r.PlainError(), r.CorrectedError(), r.SMRatio/r.Published - 1, r.SqrtSM/r.Published - 1}
}

// ReadGated reads every workload of EmulationGate from the capture in dir
// and compares it with its published case. It fails where the capture
// holds a workload the gate does not name, or a workload of the gate yields
// no ratio: the gate's set is fixed, nothing is left out.
func ReadGated(site *catalog.Site, dir string, published map[string]Case) ([]GatedRatio, error) {
	entries, err := os.ReadDir(dir)
	if err != nil {
		return nil, err
	}
	var names []string
	for _, e := range entries {
		if e.IsDir() {
			names = append(names, e.Name())
		}
	}
	for _, n := range names {
		if !slices.ContainsFunc(EmulationGate, func(w GatedWorkload) bool { return w.captures(n) }) {
			return nil, fmt.Errorf("%s: %s is no workload of the emulation gate", dir, n)
		}
	}
	var rows []GatedRatio
	for _, w := range EmulationGate {
		got, err := w.read(site, dir, names, published)
		if err != nil {
			return nil, err
		}
		rows = append(rows, got...)
	}
	return rows, nil
}

// repeatSuffix ends the directory of a workload's second emulation and
// after: "-2", "-3"...
var repeatSuffix = regexp.MustCompile(`^-\d+$`)

// captures says whether a capture's directory is an emulation of w.
func (w GatedWorkload) captures(dir string) bool {
	rest, ok := strings.CutPrefix(dir, w.Dir)
	return ok && (rest == "" || repeatSuffix.MatchString(rest))
}

func (w GatedWorkload) name() string {
	if w.Name != "" {
		return w.Name
	}
	return w.Published
}

// read is w's ratios from its emulations among the capture's directories.
func (w GatedWorkload) read(site *catalog.Site, dir string, names []string, published map[string]Case) ([]GatedRatio, error) {
	pub, ok := published[w.Published]
	if !ok {
		return nil, fmt.Errorf("%s: no published case %q", w.name(), w.Published)
	}
	var dirs []string
	for _, n := range names {
		if w.captures(n) {
			dirs = append(dirs, filepath.Join(dir, n))
		}
	}
	c, err := ReadEmulations(site, w.name(), regexp.MustCompile(w.Rate), dirs...)
	if err != nil {
		return nil, err
	}
	ratios := CompareEmulation(site, c, pub)
	if len(ratios) == 0 {
		return nil, fmt.Errorf("%s: %s yields no ratio to compare (%d emulations, %d profiles completed)", dir, w.name(), len(dirs), len(c.Points))
	}
	var rows []GatedRatio
	for _, r := range ratios {
		sm := smShare(site, r.Against) / smShare(site, r.Profile)
		rows = append(rows, GatedRatio{Ratio: r, Role: w.Role, SMRatio: sm, SqrtSM: math.Sqrt(sm)})
	}
	return rows, nil
}

func smShare(site *catalog.Site, profile string) float64 {
	p, _ := site.Profile(profile)
	return site.Shares(p).SM
}

// CheckMeasuring is the gate's check of the measuring: every Measuring row
// within MeasuringTolerance of its construction.
func CheckMeasuring(rows []GatedRatio) error {
	for _, r := range rows {
		if r.Role == Measuring && math.Abs(r.CorrectedError()) > MeasuringTolerance {
			return fmt.Errorf("%s on %s: corrected %+.0f%% off its construction, over the %.0f%% the measuring is allowed",
				r.Workload, r.Profile, 100*r.CorrectedError(), 100*MeasuringTolerance)
		}
	}
	return nil
}

// RoleScore is the mean absolute error (a fraction) of each way of taking a
// role's ratios: as emulated, the model, 1/SM and 1/√SM.
type RoleScore struct {
	Role EmulationRole
	Rows int
	MAE  [4]float64
}

// ScoreNames name RoleScore.MAE's entries and GatedRatio.Errors'.
var ScoreNames = [4]string{"as emulated", "migadvisor", "naive 1/SM", "1/√SM"}

// Claimed says whether the gate lets the model be claimed for the role:
// its error below every other's.
func (s RoleScore) Claimed() bool {
	return s.Role != Measuring && s.MAE[1] < s.MAE[0] && s.MAE[1] < s.MAE[2] && s.MAE[1] < s.MAE[3]
}

// Best is the way other than the model with the least error.
func (s RoleScore) Best() (name string, mae float64) {
	best := 0
	for _, i := range []int{2, 3} {
		if s.MAE[i] < s.MAE[best] {
			best = i
		}
	}
	return ScoreNames[best], s.MAE[best]
}

// ScoreRoles scores each role the rows hold, in the gate's order of roles.
func ScoreRoles(rows []GatedRatio) []RoleScore {
	var out []RoleScore
	for _, role := range []EmulationRole{Training, Kernel, Measuring} {
		s := RoleScore{Role: role}
		for _, r := range rows {
			if r.Role != role {
				continue
			}
			s.Rows++
			for i, e := range r.Errors() {
				s.MAE[i] += math.Abs(e)
			}
		}
		if s.Rows == 0 {
			continue
		}
		for i := range s.MAE {
			s.MAE[i] /= float64(s.Rows)
		}
		out = append(out, s)
	}
	return out
}

// PrintGated writes the gate's rows and the scores of each role as text
// (make accuracy).
func PrintGated(w io.Writer, rows []GatedRatio) error {
	t := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	fmt.Fprintln(t, "ROLE\tWORKLOAD\tPROFILE\tOVER\tPUBLISHED\tEMULATED\tMIGADVISOR\tNAIVE 1/SM\t1/√SM\tMODEL")
	for _, r := range rows {
		e := r.Errors()
		fmt.Fprintf(t, "%s\t%s\t%s\t%s\t%.2f\t%.2f %+.0f%%\t%.2f %+.0f%%\t%.2f %+.0f%%\t%.2f %+.0f%%\t%s\n", r.Role, r.Workload, r.Profile, r.Against,
			r.Published, r.Plain, 100*e[0], r.Corrected, 100*e[1], r.SMRatio, 100*e[2], r.SqrtSM, 100*e[3], r.Why)
	}
	fmt.Fprintln(t)
	fmt.Fprintln(t, "ROLE\tROWS\tEMULATED\tMIGADVISOR\tNAIVE 1/SM\t1/√SM\tMODEL CLAIMED")
	for _, s := range ScoreRoles(rows) {
		fmt.Fprintf(t, "%s\t%d\t%.1f%%\t%.1f%%\t%.1f%%\t%.1f%%\t%v\n", s.Role, s.Rows, 100*s.MAE[0], 100*s.MAE[1], 100*s.MAE[2], 100*s.MAE[3], s.Claimed())
	}
	return t.Flush()
}
