package joblist

import (
	"fmt"
	"io"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/migadvisor/migadvisor/advisor/base/memory"
	"github.com/migadvisor/migadvisor/catalog"
	"github.com/migadvisor/migadvisor/internal/textutil"
	"github.com/migadvisor/migadvisor/slurm"
)

// WriteTable writes the jobs as history's table, then what the reader must know
// to read it: which runs are of an earlier version of the script, and which
// jobs are the site-wide history's.
func WriteTable(w io.Writer, jobs []JobEntry) {
	t := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	fmt.Fprintln(t, "JOB ID\tPROFILE\tSTATE\tEXIT\tELAPSED\tCPUS\tMEM\tMAX RSS\tGPU PEAK\tOOM\tWORK\tSU")
	earlier, fromSite := 0, 0
	for _, j := range jobs {
		fmt.Fprintln(t, strings.Join(historyCells(j), "\t"))
		if j.Earlier {
			earlier++
		}
		if j.History == "site" {
			fromSite++
		}
	}
	t.Flush()
	if earlier > 0 {
		fmt.Fprintf(w, "%s of an earlier version of this script (marked ~)\n", textutil.Plural(earlier, "run"))
	}
	switch {
	case fromSite > 0 && fromSite == len(jobs):
		fmt.Fprintln(w, "all from the site-wide history")
	case fromSite > 0:
		verb := "are"
		if fromSite == 1 {
			verb = "is"
		}
		fmt.Fprintf(w, "%d of these %d jobs %s from the site-wide history, the others from yours\n", fromSite, len(jobs), verb)
	}
}

// historyCells are a job's cells in history's table, "-" where a figure is
// unknown.
func historyCells(j JobEntry) []string {
	id, state := j.JobID, j.State
	if j.Earlier {
		id += " ~"
	}
	if j.Placeholder {
		state += "?"
	}
	exit, elapsed, cpus, work, su := "-", "-", "-", "-", "-"
	if j.ExitCode != nil && j.ExitSignal != nil {
		exit = fmt.Sprintf("%d:%d", *j.ExitCode, *j.ExitSignal)
	}
	if j.ElapsedS != nil {
		elapsed = slurm.FormatDuration(time.Duration(*j.ElapsedS) * time.Second)
	}
	if j.CPUs != nil {
		cpus = fmt.Sprint(*j.CPUs)
	}
	if j.Work != nil {
		work = textutil.Number(*j.Work) + " " + deref(j.WorkUnit)
	}
	if j.SU != nil {
		su = catalog.FormatSU(*j.SU)
	}
	rss := memory.ShortMiB(j.MaxRSSMiB)
	if j.MaxRSSMiB != nil && *j.MaxRSSMiB < 0.05 {
		rss = "-" // sacct took no sample: it would print as 0.0M
	}
	peak := memory.ShortMiB(j.GPUMemPeakMiB)
	if h := j.GPUMemHeldBy; h != nil && h.Ceiling() && j.GPUMemPeakMiB != nil {
		peak += " (" + h.Software + ")" // the peak is only a ceiling of the need
	}
	return []string{id, orDash(deref(j.Profile)), state, exit, elapsed, cpus, memory.ShortMiB(j.ReqMemMiB), rss, peak,
		orDash(deref(j.OOM)), work, su}
}

func deref(s *string) string {
	if s == nil {
		return ""
	}
	return *s
}

func orDash(s string) string {
	if s == "" {
		return "-"
	}
	return s
}
