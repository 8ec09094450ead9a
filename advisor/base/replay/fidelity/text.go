package fidelity

import (
	"fmt"
	"io"
	"math"
	"strings"

	"github.com/migadvisor/migadvisor/internal/textutil"
)

// Summary is the result in one line: the figures issue 41 asks for.
func (r Result) Summary() string {
	if r.Jobs == 0 {
		return "no job to compare the replay with"
	}
	verdict := "within"
	if !r.OK {
		verdict = "over"
	}
	return fmt.Sprintf("%d jobs: median |replayed − recorded wait| %s, %s the bound %s (%.0f%% of the mean wait %s, or %d s)",
		r.Jobs, secs(r.MedianAbsErrS), verdict, secs(r.BoundS), 100*BoundShare, secs(r.MeanWaitS), MinBoundS)
}

// WriteText writes the summary, which way the replay leans, what was left
// out and the worst jobs.
func (r Result) WriteText(w io.Writer) error {
	var b strings.Builder
	b.WriteString("Fidelity of the replay: " + r.Summary() + "\n")
	if r.Jobs > 0 {
		fmt.Fprintf(&b, "  p90 |error| %s; mean error %+.0f s: the replay started %s earlier than Slurm, %d later\n",
			secs(r.P90AbsErrS), r.MeanErrS, textutil.Plural(r.Earlier, "job"), r.Later)
		fmt.Fprintf(&b, "  starting every job at its submission would err by a median of %s\n", secs(r.MedianWaitS))
	}
	for _, s := range r.Skipped {
		fmt.Fprintf(&b, "  left out: %s: %s\n", textutil.Plural(s.Jobs, "job"), s.Why)
	}
	for _, c := range r.Worst {
		fmt.Fprintf(&b, "  job %s (%d × %s, limit %s, ran %s): waited %s, replayed %s\n",
			c.JobID, c.GPUs, c.Profile, secs(float64(c.LimitS)), secs(float64(c.RuntimeS)),
			secs(float64(c.RecordedWaitS)), secs(float64(c.ReplayedWaitS)))
	}
	_, err := io.WriteString(w, b.String())
	return err
}

// secs is a duration in whole seconds.
func secs(s float64) string { return fmt.Sprintf("%.0f s", math.Round(s)) }
