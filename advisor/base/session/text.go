package session

import (
	"fmt"
	"io"
	"math"
	"slices"
	"text/tabwriter"

	"github.com/migadvisor/migadvisor/advisor/base/memory"
	"github.com/migadvisor/migadvisor/catalog"
	"github.com/migadvisor/migadvisor/internal/textutil"
	"github.com/migadvisor/migadvisor/slurm"
)

// helpLine is the one line a form shows: what the sessions peaked at, the
// profile that is enough, and what an hour of it costs against the one
// asked for: "your last 5 sessions peaked at 2.9 GiB: 1g.10gb is enough,
// 3 SU/h instead of 17".
func (a *Advice) helpLine(site *catalog.Site) string {
	return a.evidenceWords("") + ": " + a.verdictWords(site)
}

// NamedLine is the help line with the sessions' name, for a line printed
// where the name is not in sight (salloc's stderr): "your last 5 sessions
// named jupyter peaked at 2.9 GiB: 1g.10gb is enough, 3 SU/h instead of
// 17"; "" when nothing is recommended.
func (a *Advice) NamedLine(site *catalog.Site) string {
	if a.Recommended == "" {
		return ""
	}
	return a.evidenceWords(" named "+a.Session) + ": " + a.verdictWords(site)
}

// evidenceWords say what the sessions weighed measured; named follows the
// word "session(s)" ("" or " named jupyter").
func (a *Advice) evidenceWords(named string) string {
	who, they := fmt.Sprintf("your last %d sessions%s", a.Sessions, named), "they"
	switch {
	case a.Sessions == 1:
		who = "your last session" + named
	case a.WithMemory < a.Sessions:
		were := "were"
		if a.WithMemory == 1 {
			were, they = "was", "it"
		}
		who = fmt.Sprintf("%d of your last %d sessions%s %s measured: %s", a.WithMemory, a.Sessions, named, were, they)
	}
	if a.PeakMiB == nil {
		return fmt.Sprintf("%s ran out of GPU memory", who)
	}
	words := fmt.Sprintf("%s peaked at %s", who, memory.FormatMiB(*a.PeakMiB))
	if a.OOMs > 0 {
		words += fmt.Sprintf(", and %d ran out of GPU memory", a.OOMs)
	}
	return words
}

// verdictWords say which profile is enough, against the one asked for.
func (a *Advice) verdictWords(site *catalog.Site) string {
	asked, askedOK := site.Profile(a.Asked)
	rec, _ := site.Profile(a.Recommended)
	price := suWords(a.SUPerHour) + " SU/h"
	switch {
	case a.Recommended == a.Asked:
		return fmt.Sprintf("%s, what you ask for, is the smallest that fits (%s)", a.Recommended, price)
	case askedOK && rec.UsableMemory < asked.UsableMemory:
		return fmt.Sprintf("%s is enough, %s instead of %s", a.Recommended, price, suWords(a.AskedSUPerHour))
	}
	i := slices.IndexFunc(a.Profiles, func(p ProfileRisk) bool { return p.Profile == a.Asked })
	risk := "not known to fit"
	if i >= 0 && a.Profiles[i].OOMRisk != memory.RiskUnknown {
		risk = "a " + a.Profiles[i].OOMRisk + " OOM risk"
	}
	return fmt.Sprintf("ask for %s, as %s is %s (%s instead of %s)", a.Recommended, a.Asked, risk, price, suWords(a.AskedSUPerHour))
}

// suWords is a price per hour as a sentence gives it: 2, 2.5, 16.4.
func suWords(su *float64) string {
	if su == nil {
		return "?"
	}
	return textutil.Number(math.Round(*su*10) / 10)
}

// changeLine is the line to change for the next session: the choice in
// OnDemand's form, or salloc's (and srun's) --gres; "" when the profile
// asked for is the one recommended.
func (a *Advice) changeLine(site *catalog.Site) string {
	if a.Recommended == a.Asked {
		return ""
	}
	if a.OnDemand {
		return fmt.Sprintf("choose %s in the form of %s in place of %s (it asks Slurm for --gres=%s)", a.Recommended, a.Session, a.Asked, a.GRES)
	}
	opts := "--gres=" + a.GRES
	if p, ok := site.Profile(a.Recommended); ok {
		if p.QoS != "" {
			opts += " --qos=" + p.QoS
		}
		if len(p.Partitions) > 0 && !slices.Contains(p.Partitions, a.Partition) {
			opts += " --partition=" + p.Partitions[0]
		}
	}
	return fmt.Sprintf("salloc %s (or srun --pty %s) in place of --gres=%s", opts, opts, a.AskedGRES)
}

// WriteText writes the advice as recommend --session prints it: the
// sessions weighed, a row per profile (* marks the one recommended), the
// advice or why there is none, the change, and how sessions are priced.
func (a *Advice) WriteText(w io.Writer) {
	if a.Sessions == 0 {
		fmt.Fprintf(w, "sessions named %s of %s on %s: no recommendation: %s\n", a.Session, a.User, a.Site, a.Why)
		return
	}
	fmt.Fprintf(w, "sessions named %s of %s on %s: %s\n", a.Session, a.User, a.Site, a.restsOn())
	t := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	fmt.Fprintln(t, "JOB ID\tPROFILE\tSTATE\tHELD\tGPU PEAK\tGPU OOM")
	for _, p := range a.Past {
		held, peak, oom := "-", "-", "-"
		if p.HeldS != nil {
			held = slurm.FormatSeconds(float64(*p.HeldS))
		}
		if p.PeakMiB != nil {
			peak = memory.FormatMiB(*p.PeakMiB) + " (" + p.PeakSource + ")"
		}
		if p.OOM {
			oom = "yes"
		}
		fmt.Fprintf(t, "%s\t%s\t%s\t%s\t%s\t%s\n", p.JobID, p.Profile, p.State, held, peak, oom)
	}
	t.Flush()
	fmt.Fprintf(w, "\nthe newest asked for %s with %s and %s of memory: %s SU per hour held\n", a.Asked, textutil.Plural(max(a.CPUs, 1), "CPU"),
		memory.FormatMiB(a.MemMiB), suWords(a.AskedSUPerHour))
	if a.Need != "" {
		fmt.Fprintf(w, "GPU memory need: %s\n", a.Need)
	}
	t = tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	fmt.Fprintln(t, "PROFILE\tOOM RISK\tSU/H\tWHY")
	for _, p := range a.Profiles {
		mark := " " // recommend's mark: * before the profile, the names aligned
		if p.Profile == a.Recommended {
			mark = "*"
		}
		su, why := suWords(&p.SUPerHour), p.Reason
		if p.Unpriced != "" {
			su, why = "?", p.Unpriced+"; "+why
		}
		fmt.Fprintf(t, "%s%s\t%s\t%s\t%s\n", mark, p.Profile, p.OOMRisk, su, why)
	}
	t.Flush()
	if a.Recommended == "" {
		fmt.Fprintf(w, "\nno recommendation: %s\n", a.Why)
	} else {
		fmt.Fprintf(w, "\nrecommend %s: %s\n", a.Recommended, a.Help)
	}
	if a.Change != "" {
		fmt.Fprintf(w, "change: %s\n", a.Change)
	}
	fmt.Fprintf(w, "priced: %s\n", a.Pricing)
}

// restsOn says which sessions the advice weighs.
func (a *Advice) restsOn() string {
	if a.Sessions < a.Found {
		return fmt.Sprintf("%d of %d ended sessions (the newest of one GPU), %d with GPU memory evidence", a.Sessions, a.Found, a.WithMemory)
	}
	return fmt.Sprintf("%s, %d with GPU memory evidence", textutil.Plural(a.Sessions, "ended session"), a.WithMemory)
}
