package plan

import (
	"fmt"
	"io"
	"math"
	"slices"
	"strings"
	"text/tabwriter"

	"github.com/migadvisor/migadvisor/catalog"
	"github.com/migadvisor/migadvisor/internal/textutil"
)

// WriteText writes the plan as an admin reads it: today's layout, the
// proposal and the next best with their waits and SU, the calculator's,
// then the proposal's slices and what applies it.
func (p *Plan) WriteText(w io.Writer) error {
	b := &strings.Builder{}
	d := p.Demand
	fmt.Fprintf(b, "%s of the period replayed as Slurm's backfill starts them: %d on the slice the report moves them to, %d where they ran (right-sized), %d as they asked because their fit is unknown, %d of several GPUs",
		textutil.Plural(d.Jobs, "GPU job"), d.Moved, d.Kept, d.Unknown, d.Whole)
	if d.OOM > 0 {
		fmt.Fprintf(b, ", %d that ran out of GPU memory (where they ran, for the time they ran: a rerun needs a larger slice, for longer)", d.OOM)
	}
	b.WriteString(".\n")
	if len(d.Left) > 0 {
		fmt.Fprintf(b, "Left out: %s.\n", leftOut(d.Left))
	}
	b.WriteString("\n")
	tw := tabwriter.NewWriter(b, 0, 0, 2, ' ', 0)
	fmt.Fprintln(tw, "\tGPUs\tp50 wait\tp95 wait (runtime range)\tSU\tstranded GPU-h\tre-cut\tfit nowhere")
	row := func(label string, o *Outcome) {
		fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%s\t%s\t%d\t%d\n", label, o.Layout, duration(o.WaitP50S), waitRange(o), catalog.FormatSU(o.SU),
			hours(o.StrandedGPUHours), o.Changes, o.Unplaced)
	}
	row("today", p.Current)
	if p.Proposed != nil {
		row("proposed", p.Proposed)
	}
	for i, o := range p.Others {
		row(fmt.Sprintf("next %d", i+1), o)
	}
	if c := p.Calculator; c != nil && c.Outcome != nil && c.GPUs > 0 {
		row("MIG calculator", c.Outcome)
	}
	tw.Flush()
	fmt.Fprintf(b, "SU: the period's jobs as each layout runs them, on the slice the report moves them to where the layout has it; as they ran, they spent %s SU.\n",
		catalog.FormatSU(d.SpentSU))
	p.writeVerdict(b)
	if c := p.Calculator; c != nil {
		fmt.Fprintf(b, "\nPrinceton's MIG calculator: %.0f%% of the whole GPUs' %s GPU-hours could run on a 40 GB slice, so %s to cut into two %s each",
			c.Share*100, hours(c.GPUHours), textutil.Plural(c.GPUs, "GPU"), c.Profile)
		if c.Outcome != nil && c.Outcome.Changes != c.GPUs {
			fmt.Fprintf(b, " (%d replayed: whole nodes)", c.Outcome.Changes)
		}
		if c.NoEvidence > 0 {
			fmt.Fprintf(b, " (%s without GPU memory or utilisation figures count as not movable)", textutil.Plural(c.NoEvidence, "job"))
		}
		b.WriteString(".\n")
	}
	p.writeFidelity(b)
	if o := p.Proposed; o != nil {
		b.WriteString("\nThe proposal's slices:\n")
		writeProfiles(b, o)
		fmt.Fprintf(b, "\nTo apply it (mig-parted.yaml, slurm.conf, gres.conf: --json or --page DIR writes them):\n")
		for i, s := range p.Configs.Steps {
			fmt.Fprintf(b, "  %d. %s\n", i+1, s)
		}
		if names := p.Configs.MadeUpNames; len(names) > 0 {
			fmt.Fprintf(b, "The node names (%s) are made up, not Slurm's: put the nodes' own in their place, or name them in the site file's [[gpu_nodes]] as a Slurm hostlist (n[0101-0124]).\n",
				textutil.JoinAnd(firstNames(names, 3)))
		}
	}
	_, err := io.WriteString(w, b.String())
	return err
}

func (p *Plan) writeVerdict(b *strings.Builder) {
	cur := p.Current
	if p.Proposed == nil {
		fmt.Fprintf(b, "\nKeep today's layout: no layout of the %d replayed waits less at no more SU and holds every job it holds.\n", p.Replays)
		p.writeUnknown(b)
		return
	}
	o := p.Proposed
	fmt.Fprintf(b, "\nProposed: %s. p95 wait %s instead of %s, %s SU instead of %s; %s re-cut (best of %d replayed layouts).\n",
		o.Layout, duration(o.WaitP95S), duration(cur.WaitP95S), catalog.FormatSU(o.SU), catalog.FormatSU(cur.SU),
		textutil.Plural(o.Changes, "GPU"), p.Replays)
	switch {
	case o.Unplaced < cur.Unplaced:
		fmt.Fprintf(b, "It holds %s of the %d that fit no slice of today's layout: today's SU and waits leave them out.\n",
			textutil.Plural(cur.Unplaced-o.Unplaced, "job"), cur.Unplaced)
	case o.Unplaced > 0:
		fmt.Fprintf(b, "%s fit no slice of it (today: %d).\n", textutil.Plural(o.Unplaced, "job"), cur.Unplaced)
	}
	p.writeUnknown(b)
}

// writeFidelity says how close the replay of the period as it ran on
// today's layout came to the waits Slurm recorded.
func (p *Plan) writeFidelity(b *strings.Builder) {
	f := p.Fidelity
	if f == nil || f.Jobs == 0 {
		return
	}
	fmt.Fprintf(b, "\nThe replay against Slurm: the period's %s replayed as they ran on today's layout wait within %s of what Slurm recorded (median; mean wait %s)",
		textutil.Plural(f.Jobs, "job"), duration(int64(f.MedianAbsErrS)), duration(int64(f.MeanWaitS)))
	if f.OK {
		fmt.Fprintf(b, ", inside the bound of %s.\n", duration(int64(f.BoundS)))
		return
	}
	fmt.Fprintf(b, ", beyond the bound of %s: today's layout as given may not be the one they ran on, or partitions, QoS, fairshare or reservations shaped the queue, which the replay does not model; weigh the waits above accordingly.\n",
		duration(int64(f.BoundS)))
}

// writeUnknown says how many jobs kept what they asked for want of
// evidence, and where to find what to measure.
func (p *Plan) writeUnknown(b *strings.Builder) {
	if u := p.Demand.Unknown; u > 0 && 5*u >= p.Demand.Jobs {
		fmt.Fprintf(b, "%s of %d kept what they asked for because their fit is unknown: the plan can only be as small as the evidence; report lists what to measure (its \"worth measuring\").\n",
			textutil.Plural(u, "job"), p.Demand.Jobs)
	}
}

// firstNames are the first n names, and "…" where there are more.
func firstNames(names []string, n int) []string {
	if len(names) <= n {
		return names
	}
	return append(slices.Clone(names[:n]), "…")
}

// hours is a figure of hours as a table shows it: 0.4, 12.5, 4,680.
func hours(h float64) string {
	if h < 100 {
		return textutil.Number(math.Round(h*10) / 10)
	}
	return catalog.FormatSU(math.Round(h))
}

func writeProfiles(b *strings.Builder, o *Outcome) {
	tw := tabwriter.NewWriter(b, 0, 0, 2, ' ', 0)
	fmt.Fprintln(tw, "  profile\tslices\tjobs\tp50 wait\tp95 wait\tbusy")
	for _, ps := range o.Profiles {
		fmt.Fprintf(tw, "  %s\t%d\t%d\t%s\t%s\t%.0f%%\n", ps.Profile, ps.Slots, ps.Jobs, duration(ps.WaitP50S), duration(ps.WaitP95S), ps.Busy*100)
	}
	tw.Flush()
}

func waitRange(o *Outcome) string {
	s := duration(o.WaitP95S)
	if r := o.Range; r != nil && (r.WaitP95S[0] != o.WaitP95S || r.WaitP95S[1] != o.WaitP95S) {
		s += fmt.Sprintf(" (%s–%s)", duration(r.WaitP95S[0]), duration(r.WaitP95S[1]))
	}
	return s
}

// duration is a wait as h:mm, or minutes and seconds under an hour.
func duration(s int64) string {
	switch {
	case s < 60:
		return fmt.Sprintf("%ds", s)
	case s < 3600:
		return fmt.Sprintf("%dm%02ds", s/60, s%60)
	case s < 24*3600:
		return fmt.Sprintf("%d:%02d", s/3600, s%3600/60)
	}
	return fmt.Sprintf("%dd %d:%02d", s/86400, s%86400/3600, s%3600/60)
}

func leftOut(why map[string]int) string {
	var parts []string
	for w, n := range why {
		parts = append(parts, fmt.Sprintf("%s (%s)", textutil.Plural(n, "job"), w))
	}
	slices.Sort(parts)
	return textutil.JoinAnd(parts)
}
