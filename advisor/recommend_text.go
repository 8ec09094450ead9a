package advisor

import (
	"cmp"
	"fmt"
	"io"
	"slices"
	"strings"
	"text/tabwriter"

	"github.com/migadvisor/migadvisor/advisor/base/memory"
	"github.com/migadvisor/migadvisor/advisor/base/outcome"
	"github.com/migadvisor/migadvisor/catalog"
	"github.com/migadvisor/migadvisor/slurm"
)

// WriteText writes the recommendation as recommend prints it: what it rests
// on, a row per profile (* marks the one recommended), the advice and why,
// the change to make in the script, and what comes next.
func (r *Recommendation) WriteText(w io.Writer) {
	if r.CPUOnly { // no profile was judged: a table of dashes says nothing
		fmt.Fprintf(w, "%s on %s: no recommendation: %s\n", r.Script, r.Site, r.Reason)
		r.writeNotes(w) // a --gres sbatch ignores, an empty script: what it asks for is not what was meant
		return
	}
	fmt.Fprintf(w, "%s on %s: %s\n", r.Script, r.Site, r.restsOn())
	r.writeTable(w)
	if r.Recommended != nil {
		fmt.Fprintf(w, "\nrecommend %s: %s\n", *r.Recommended, r.Reason)
	} else {
		fmt.Fprintf(w, "\nno recommendation: %s\n", r.Reason)
	}
	r.writeChange(w)
	// what predicted runtimes rest on (a profile with no runtime says why in its reason)
	if slices.ContainsFunc(r.Profiles, func(pa ProfileAdvice) bool { return pa.RuntimeSource == BasisPredicted }) {
		fmt.Fprintln(w, "runtimes predicted: "+r.RuntimeWhy)
	}
	if r.Next != "" {
		fmt.Fprintf(w, "next: %s\n", r.Next)
	}
	r.writeNotes(w)
}

// writeNotes writes a line per note.
func (r *Recommendation) writeNotes(w io.Writer) {
	for _, n := range r.Notes {
		fmt.Fprintf(w, "note: %s\n", n)
	}
}

// writeTable is a row per profile, with SU per work where it is known.
func (r *Recommendation) writeTable(w io.Writer) {
	t := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	workUnit := ""
	for _, pa := range r.Profiles {
		workUnit = cmp.Or(pa.WorkUnit, workUnit)
	}
	header := "PROFILE\tRUNS\tOUTCOME\tGPU NEED/USABLE\tOOM RISK\tRUNTIME\tSU"
	if workUnit != "" {
		header += "\tSU/" + workUnit
	}
	fmt.Fprintln(t, header)
	for _, pa := range r.Profiles {
		mark := " "
		if r.Recommended != nil && *r.Recommended == pa.Profile {
			mark = "*"
		}
		runs := fmt.Sprint(pa.Runs)
		if r.Prior != nil { // "ref": the reference benchmark's measurement the prior stands on
			runs = map[bool]string{true: "ref", false: "-"}[pa.Runs > 0]
		}
		ended := outcome.Tally{Runs: pa.Runs, Completed: pa.Completed, GPUOOMs: pa.GPUOOMs, TimedOut: pa.TimedOut, HostOOM: pa.HostOOM,
			Emulated: pa.Emulated != ""}
		need := memory.NeedCell(pa.GPUMemNeedMiB, pa.GPUMemCeilingMiB, r.GPUMemNeed != nil && r.GPUMemNeed.Kind == memory.NeedOOM)
		fmt.Fprintf(t, "%s%s\t%s\t%s\t%s/%s\t%s\t%s\t%s", mark, pa.Profile, runs, ended, need,
			memory.ShortMiB(&pa.UsableMiB), pa.OOMRisk, pa.runtimeCell(), suCell(pa.SU, pa.RuntimeAtLeast))
		if workUnit != "" { // SU per work is a bound where the runtime is one
			fmt.Fprintf(t, "\t%s", suCell(pa.SUPerWork, pa.RuntimeAtLeast))
		}
		fmt.Fprintln(t)
	}
	t.Flush()
}

// restsOn says what the advice rests on, in the words the table uses.
// "basis: none" is left out where the script has runs: nothing was
// recommended, and the line that says why follows the table.
func (r *Recommendation) restsOn() string {
	basis := "; basis: " + r.Basis
	if r.Basis == BasisNone && r.Runs > 0 {
		basis = ""
	}
	// What measured the memory, whether its figure is the need or only a
	// ceiling of it (a framework's peak).
	if n := cmp.Or(r.GPUMemNeed, r.GPUMemCeiling); n != nil && n.By != "" && r.Prior == nil {
		basis += ", GPU memory measured (" + n.By + ")"
	}
	switch {
	case r.Basis == BasisPrior || r.Prior != nil:
		return fmt.Sprintf("no runs of this script yet; the figures are the %s reference benchmark's (basis: prior)", r.Prior.Benchmark)
	case r.Runs == 0:
		return "no runs of this script in the history" + basis
	case r.EarlierRuns == r.Runs:
		return fmt.Sprintf("%s of an earlier version of this script in the history%s", plural(r.Runs, "run"), basis)
	case r.EarlierRuns > 0:
		return fmt.Sprintf("%s in the history, %d of them of an earlier version%s", plural(r.Runs, "run"), r.EarlierRuns, basis)
	}
	return fmt.Sprintf("%s in the history%s", plural(r.Runs, "run"), basis)
}

// writeChange shows the lines to change in the script and what that saves.
func (r *Recommendation) writeChange(w io.Writer) {
	ch := r.Change
	switch {
	case ch == nil:
		return
	case len(ch.Lines) == 0 && r.NextStep.Kind == NextProbe && len(r.NextStep.Profiles) > 0:
		// Not "nothing to change": a slice not yet ruled out may cost less.
		fmt.Fprintf(w, "the script already asks for %s, the cheapest profile proven so far; %s may cost less: measure it (next)\n",
			ch.To, strings.Join(r.NextStep.Profiles, ", "))
		return
	case len(ch.Lines) == 0:
		fmt.Fprintf(w, "the script already asks for %s: nothing to change\n", ch.To)
		return
	case ch.To == "":
		fmt.Fprintf(w, "change %s before you measure it:\n", r.Script)
	default:
		fmt.Fprintf(w, "change %s:\n", r.Script)
	}
	t := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	for _, l := range ch.Lines {
		switch {
		case l.Line == 0:
			fmt.Fprintf(t, "  add\t%s\n", l.New)
		case l.New == "":
			fmt.Fprintf(t, "  line %d\t%s\t(remove)\n", l.Line, l.Old)
		default:
			fmt.Fprintf(t, "  line %d\t%s\t→ %s\n", l.Line, l.Old, l.New)
		}
	}
	t.Flush()
	if s := ch.savingsText(); s != "" {
		fmt.Fprintln(w, s)
	}
}

// savingsText is what the change saves, per run and at the user's rate.
func (ch *Change) savingsText() string {
	if ch.SUPerRun == nil || *ch.SUPerRun == 0 {
		return ch.Because
	}
	per := *ch.SUPerRun
	if per < 0 {
		return fmt.Sprintf("it costs about %s SU a run more than %s: %s", catalog.FormatSU(-per), ch.Asks, ch.Because)
	}
	text := fmt.Sprintf("saves about %s SU a run against %s", catalog.FormatSU(per), ch.Asks)
	if ch.SUPerMonth != nil {
		text += fmt.Sprintf("; at your rate of %s in 30 days, about %s SU a month", plural(ch.RunsPerMonth, "run"), catalog.FormatSU(*ch.SUPerMonth))
	}
	if ch.Because != "" {
		text += " (" + ch.Because + ")"
	}
	return text
}

// runtimeCell is the runtime and how sure it is: the runs it is the median
// of, or how it was found, and the --time it needs.
func (pa ProfileAdvice) runtimeCell() string {
	if pa.RuntimeS == nil {
		return "-"
	}
	if pa.RuntimeAtLeast {
		return "≥" + slurm.FormatSeconds(*pa.RuntimeS) + " time limit"
	}
	text := slurm.FormatSeconds(*pa.RuntimeS)
	switch {
	case pa.RuntimeRuns > 1 && pa.RuntimeSpread != nil:
		text += fmt.Sprintf(" (%d runs, spread %.0f%%)", pa.RuntimeRuns, 100**pa.RuntimeSpread)
	case pa.RuntimeRuns == 1:
		text += " (1 run)"
	case pa.RuntimeSource != BasisMeasured:
		text += " " + pa.RuntimeSource
		if rg := pa.RuntimeRangeS; rg != nil && slurm.FormatSeconds(rg[0]) != slurm.FormatSeconds(rg[1]) {
			text += fmt.Sprintf(" %s–%s", slurm.FormatSeconds(rg[0]), slurm.FormatSeconds(rg[1]))
		}
	}
	switch {
	case pa.pastLimit:
		text += ", beyond the partition's time limit"
	case pa.beyondLimit != "":
		text += ", needs more than the partition's --time=" + pa.TimeLimit
	case pa.TimeLimit != "":
		text += ", needs --time=" + pa.TimeLimit
	}
	return text
}

// suCell is an SU figure as the JSON holds it, "≥" when only a lower bound.
func suCell(su *float64, atLeast bool) string {
	switch {
	case su == nil:
		return "-"
	case atLeast:
		return "≥" + catalog.FormatSU(*su)
	}
	return catalog.FormatSU(*su)
}
