package history

import (
	"fmt"
	"strings"

	"github.com/migadvisor/migadvisor/internal/textutil"
	"github.com/migadvisor/migadvisor/slurm"
)

// HowTracked says how jobs become tracked: linked to their script in the
// history.
const HowTracked = "jobs are tracked when submitted with 'migadvisor sweep JOB.sh --out DIR --submit', " +
	"'migadvisor recommend --probe JOB.sh' or the sbatch wrapper ('migadvisor sbatch JOB.sh'), " +
	"or linked to their script with 'migadvisor track JOB.sh JOBID...'"

// WhyNoneTracked says, in one line, why the history at path tracks no job
// of the ids, or of the sweep in sweepDir (as the user named it), or none
// at all, and how jobs become tracked.
func WhyNoneTracked(path string, ids []string, sweepDir string) string {
	where := "the history at " + path
	switch {
	case len(ids) > 0:
		are, them := "is", "it"
		if len(ids) > 1 {
			are, them = "are", "them"
		}
		what := ""
		if sweepDir != "" {
			what = " as jobs of the sweep in " + sweepDir
		}
		words := make([]string, len(ids))
		for i, id := range ids {
			words[i] = slurm.ShellWord(id)
		}
		return fmt.Sprintf("%s %s not tracked%s in %s: 'migadvisor track JOB.sh %s' links %s to the script; %s",
			textutil.JobsNamed(ids, 0), are, what, where, strings.Join(words, " "), them, HowTracked)
	case sweepDir != "":
		return fmt.Sprintf("%s tracks no jobs of the sweep in %s: 'migadvisor sweep JOB.sh --out %s --submit' submits its variants and tracks them",
			where, sweepDir, slurm.ShellWord(sweepDir))
	}
	return fmt.Sprintf("no tracked jobs in %s: %s", where, HowTracked)
}
