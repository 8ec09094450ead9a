package savings

import (
	"fmt"
	"io"
	"path/filepath"
	"strings"
	"text/tabwriter"

	"github.com/migadvisor/migadvisor/catalog"
	"github.com/migadvisor/migadvisor/internal/textutil"
	"github.com/migadvisor/migadvisor/slurm"
)

// WriteText writes the report as an admin reads it: the headline, the
// listed scripts, the totals per profile and per user, the jobs that ran
// out of GPU memory, and what was not judged. from names the history the
// report was read from.
func (rep *Report) WriteText(w io.Writer, from string) {
	whose := ""
	if rep.User != "" {
		whose = " of " + rep.User
	}
	fmt.Fprintf(w, "GPU jobs%s that ended %s, site %s, from %s: %s, %s SU\n", whose, rep.Period(), rep.Site, from,
		textutil.Plural(rep.Total.Jobs, "job"), catalog.FormatSU(rep.Total.SU))
	if rep.Total.Jobs == 0 {
		rep.writeEmpty(w)
		rep.writeUnjudged(w)
		return
	}
	t := rep.Total
	switch {
	case t.Smaller > 0 && t.Larger == 0:
		fmt.Fprintf(w, "a smaller slice would have done %d of them: %s SU spent, about %s SU there; saves about %s SU (%s of what the GPU jobs spent)\n",
			t.Smaller, catalog.FormatSU(t.SmallerSU), catalog.FormatSU(t.SmallerSUThere), catalog.FormatSU(t.Saved), t.SavedShare())
	case t.Smaller > 0:
		fmt.Fprintf(w, "a smaller slice would have done %d of them: %s SU spent, about %s SU there\n",
			t.Smaller, catalog.FormatSU(t.SmallerSU), catalog.FormatSU(t.SmallerSUThere))
	default:
		fmt.Fprintln(w, "no job was judged to fit a smaller slice for less SU")
	}
	if t.Larger > 0 {
		fmt.Fprintf(w, "a larger slice would have cost less for %s (they run that much faster there): %s SU spent, about %s SU there\n",
			textutil.Plural(t.Larger, "job"), catalog.FormatSU(t.LargerSU), catalog.FormatSU(t.LargerSUThere))
		fmt.Fprintf(w, "together they save about %s SU (%s of what the GPU jobs spent)\n", catalog.FormatSU(t.Saved), t.SavedShare())
	}
	if t.OOM > 0 {
		fmt.Fprintf(w, "ran out of GPU memory: %s, %s SU\n", textutil.Plural(t.OOM, "job"), catalog.FormatSU(t.OOMSU))
	}
	if m := rep.Measurements; m.Jobs > 0 {
		fmt.Fprintf(w, "probes' and sweeps' variants: %s, %s SU, measurements of their scripts (evidence, not judged as jobs)\n",
			textutil.Plural(m.Jobs, "job"), catalog.FormatSU(m.SU))
	}
	rep.writeScripts(w)
	rep.writeProfiles(w)
	rep.writeUsers(w)
	rep.writeOOMs(w)
	rep.writeToMeasure(w)
	rep.writeUnjudged(w)
}

// writeEmpty says why no GPU job is in the report, from what the history
// holds (Held): no job at all, none with an end, none that ended in the
// period (a first collect reads the last 7 days: a report of last month
// after it finds nothing), or none of those on a GPU; and the collect that
// reads the period's accounting, into the history the report read.
func (rep *Report) writeEmpty(w io.Writer) {
	collect := "collect --all-users"
	if !rep.From.IsZero() {
		collect += " --since " + rep.From.Format("2006-01-02")
	}
	fill := "migadvisor " + collect + " (a collect with no --since reads the last 7 days, and then goes on from where it left off)"
	switch {
	case rep.Snapshot:
		fill = "this is a published snapshot, which no collect writes: a " + collect + " into the live history it is published from, with --publish, reads it"
	case rep.DB != "":
		fill = "MIGADVISOR_DB=" + slurm.ShellWord(rep.DB) + " " + fill
	}
	h := rep.Held
	switch {
	case rep.User != "":
		fmt.Fprintf(w, "nothing to judge: no GPU job of %s ended in the period in this history\n", rep.User)
	case h == nil:
		fmt.Fprintln(w, "nothing to judge: no GPU job ended in the period in this history (a site history is filled by 'collect --all-users')")
	case h.Jobs == 0 && h.NoEnd > 0:
		fmt.Fprintf(w, "nothing to judge: none of the %s this history holds has an end (not ended yet, or read from a dump without End), "+
			"and a job is judged in the period it ended; to read the period's accounting into it: %s\n", textutil.Plural(h.NoEnd, "job"), fill)
	case h.Jobs == 0:
		fmt.Fprintf(w, "nothing to judge: this history holds no job yet; to read the period's accounting into it: %s\n", fill)
	case h.InPeriod > 0:
		fmt.Fprintf(w, "nothing to judge: %s ended in the period in this history, none on a GPU\n", textutil.Plural(h.InPeriod, "job"))
	default:
		fmt.Fprintf(w, "nothing to judge: no job ended in the period in this history, whose %s ended from %s to %s; "+
			"to read the period's accounting into it: %s\n", textutil.Plural(h.Jobs, "job"), h.First.Format("2006-01-02"), h.Last.Format("2006-01-02"), fill)
	}
}

// writeToMeasure lists the scripts worth measuring: the unknowns turned
// into next steps, most SU possible first.
func (rep *Report) writeToMeasure(w io.Writer) {
	if len(rep.ToMeasure) == 0 {
		return
	}
	var possible float64
	for _, m := range rep.ToMeasure {
		possible += m.SUPossible
	}
	fmt.Fprintf(w, "\nworth measuring: %s whose fit or runtime on a cheaper slice is not known yet, up to %s SU:\n",
		textutil.Plural(len(rep.ToMeasure), "script"), catalog.FormatSU(catalog.RoundSU(possible)))
	tw := newTable(w)
	fmt.Fprintln(tw, "USER\tSCRIPT\tJOBS\tRAN ON\tTRY\tSU POSSIBLE\tMEASURE WITH")
	for _, m := range rep.ToMeasure {
		name := m.Name
		if m.Script != "" {
			name = m.Script
		}
		fmt.Fprintf(tw, "%s\t%s\t%d\t%s\t%s\t%s\t%s\n", m.User, name, m.Jobs, strings.Join(m.RanOn, ","), m.Profile,
			catalog.FormatSU(m.SUPossible), m.Command)
	}
	tw.Flush()
}

// newTable aligns the text's tables: columns two spaces apart.
func newTable(w io.Writer) *tabwriter.Writer { return tabwriter.NewWriter(w, 0, 0, 2, ' ', 0) }

// writeScripts lists the scripts at or above the thresholds, and counts
// those below.
func (rep *Report) writeScripts(w io.Writer) {
	if len(rep.Scripts) > 0 {
		fmt.Fprintln(w)
		tw := newTable(w)
		fmt.Fprintln(tw, "USER\tSCRIPT\tJOBS\tRAN ON\tUSE\tSU SPENT\tSU THERE\tSAVED\tWHY")
		for _, s := range rep.Scripts {
			fmt.Fprintf(tw, "%s\t%s\t%d\t%s\t%s\t%s\t%s\t%s\t%s\n", s.User, s.label(), s.Jobs, strings.Join(s.RanOn, ","), s.Recommended,
				catalog.FormatSU(s.SUSpent), catalog.FormatSU(s.SUThere), catalog.FormatSU(s.SUSaved), s.Why)
		}
		tw.Flush()
	}
	if rep.Below.Scripts > 0 {
		fmt.Fprintf(w, "not listed: %s saving under %s SU each (min_su_saved): %s, %s SU saved, counted in the totals\n",
			textutil.Plural(rep.Below.Scripts, "script"), catalog.FormatSU(rep.Thresholds.MinSUSaved), textutil.Plural(rep.Below.Jobs, "job"),
			catalog.FormatSU(rep.Below.Saved))
	}
}

// label names a script for an admin: its file, else its job name, with
// the start of its fingerprint; sessions by their name.
func (s Script) label() string {
	name := s.Name
	if f := s.File(); f != "" {
		name = filepath.Base(f)
	}
	if s.Session {
		return name + " (sessions)"
	}
	if fp := s.Fingerprint; len(fp) >= 8 {
		return name + " (" + fp[:8] + ")"
	}
	return name + " (by name)"
}

// writeProfiles tallies the jobs by the profile they ran on, then all.
func (rep *Report) writeProfiles(w io.Writer) {
	fmt.Fprintln(w)
	tw := newTable(w)
	fmt.Fprintln(tw, "RAN ON\tJOBS\tSU\tMOVED\tTHEIR SU\tSU THERE\tSAVED\tOOM")
	row := func(name string, t Tally) {
		moved, su, there := t.Moved()
		fmt.Fprintf(tw, "%s\t%d\t%s\t%d\t%s\t%s\t%s\t%d\n", name, t.Jobs, catalog.FormatSU(t.SU), moved, catalog.FormatSU(su),
			catalog.FormatSU(there), catalog.FormatSU(t.Saved), t.OOM)
	}
	for _, p := range rep.Profiles {
		row(p.Profile, p.Tally)
	}
	row("all", rep.Total)
	tw.Flush()
}

// writeUsers lists the users another slice or more memory concerns, most
// SU saved first, and says how many users and jobs it leaves out: a site
// of hundreds of users would drown those in the others.
func (rep *Report) writeUsers(w io.Writer) {
	tw := newTable(w)
	shown := false
	var left Tally
	leftUsers := 0
	for _, u := range rep.Users {
		if u.Smaller == 0 && u.Larger == 0 && u.OOM == 0 {
			leftUsers, left.Jobs, left.SU = leftUsers+1, left.Jobs+u.Jobs, left.SU+u.SU
			continue
		}
		if !shown {
			fmt.Fprintln(w)
			fmt.Fprintln(tw, "USER\tJOBS\tSU\tMOVED\tTHEIR SU\tSU THERE\tSAVED\tOOM\tSCRIPTS LISTED")
			shown = true
		}
		moved, su, there := u.Moved()
		fmt.Fprintf(tw, "%s\t%d\t%s\t%d\t%s\t%s\t%s\t%d\t%d\n", u.User, u.Jobs, catalog.FormatSU(u.SU), moved, catalog.FormatSU(su),
			catalog.FormatSU(there), catalog.FormatSU(u.Saved), u.OOM, u.Scripts)
	}
	tw.Flush()
	if shown && leftUsers > 0 {
		fmt.Fprintf(w, "not shown: %s with %s (%s SU), none that another slice would have done for less or that ran out of GPU memory\n",
			textutil.Plural(leftUsers, "user"), textutil.Plural(left.Jobs, "job"), catalog.FormatSU(left.SU))
	}
}

// writeOOMs lists the jobs that ran out of GPU memory, with the profile
// they fit on ("-": none known).
func (rep *Report) writeOOMs(w io.Writer) {
	if len(rep.OOMs) == 0 {
		return
	}
	fmt.Fprintln(w, "\nran out of GPU memory:")
	tw := newTable(w)
	fmt.Fprintln(tw, "USER\tJOB\tNAME\tPROFILE\tSU\tFITS ON")
	for _, o := range rep.OOMs {
		fits := o.Fits
		if fits == "" {
			fits = "-"
		}
		fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%s\t%s\n", o.User, o.JobID, o.Name, o.Profile, catalog.FormatSU(o.SU), fits)
	}
	tw.Flush()
}

// writeUnjudged says which jobs were not judged, and why: never silently.
func (rep *Report) writeUnjudged(w io.Writer) {
	if len(rep.Unjudged) == 0 {
		return
	}
	fmt.Fprintln(w, "\nnot judged:")
	for _, u := range rep.Unjudged {
		fmt.Fprintf(w, "  %s (%s SU): %s\n", textutil.Plural(u.Jobs, "job"), catalog.FormatSU(u.SU), u.Reason)
		for _, e := range u.Examples {
			fmt.Fprintf(w, "    %s\n", e)
		}
		if u.ExamplesLeftOut > 0 {
			fmt.Fprintf(w, "    and %s\n", textutil.Plural(u.ExamplesLeftOut, "more script"))
		}
	}
}

// WriteText says what Notify did, user by user, or with dryRun what it
// would do; files: the notices went to files (--notify-dir), not to a
// mail command.
func (res *NotifyResult) WriteText(w io.Writer, dryRun, files bool) {
	fmt.Fprintln(w)
	defer func() {
		for _, u := range res.Unset {
			fmt.Fprintf(w, "not configured yet: %s\n", u)
		}
	}()
	if len(res.Notices) == 0 && res.Told == 0 {
		fmt.Fprintln(w, "no notice to send: no script is listed")
		return
	}
	for _, n := range res.Notices {
		switch {
		case n.Err != "" && dryRun:
			fmt.Fprintf(w, "would not send to %s: %s\n", n.User, n.Err)
		case dryRun:
			fmt.Fprintf(w, "would send to %s: %s\n--- Subject: %s\n%s---\n", n.User, n.To, n.Subject, n.Body)
		case n.Err != "":
			fmt.Fprintf(w, "not sent to %s: %s\n", n.User, n.Err)
		case files:
			fmt.Fprintf(w, "wrote the notice for %s: %s\n", n.User, n.To)
		default:
			fmt.Fprintf(w, "sent to %s: %s\n", n.User, n.To)
		}
	}
	switch {
	case res.Told == 1:
		fmt.Fprintln(w, "1 script left out (listed or worth measuring): its user was told of it within notify_every_days")
	case res.Told > 1:
		fmt.Fprintf(w, "%d scripts left out (listed or worth measuring): their users were told of them within notify_every_days\n", res.Told)
	}
}
