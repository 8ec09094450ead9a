package advisor

import (
	"strings"

	"github.com/migadvisor/migadvisor/slurm"
)

// NextKind is what the next step of a recommendation does.
type NextKind string

const (
	NextNone  NextKind = ""      // nothing to run: the advice stands, or no run would help
	NextProbe NextKind = "probe" // measure the script: recommend --probe
	NextLint  NextKind = "lint"  // fix what sbatch or the site would reject first
)

// NextStep is the step that gets the missing evidence, as data: callers act
// on Kind, and Command is the line shown to users.
type NextStep struct {
	Kind     NextKind `json:"kind"`
	Profiles []string `json:"profiles,omitempty"` // the probe's; empty: every profile
	Time     string   `json:"time,omitempty"`     // the probe's --time; "": the script's
	Script   string   `json:"script"`             // as the user named it; "" reads JOB.sh
}

// ProbeStep is the probe of script on profiles (none: all) with --time limit.
func ProbeStep(script string, profiles []string, limit string) NextStep {
	return NextStep{Kind: NextProbe, Profiles: profiles, Time: limit, Script: script}
}

// LintStep is the lint of script, before anything is measured.
func LintStep(script string) NextStep {
	return NextStep{Kind: NextLint, Script: script}
}

// Command is the step as a command line a user can paste; "" for NextNone.
func (n NextStep) Command() string {
	script := n.Script
	if script == "" {
		script = "JOB.sh"
	}
	switch n.Kind {
	case NextProbe:
		cmd := "migadvisor recommend --probe"
		if len(n.Profiles) > 0 {
			cmd += " --profiles " + strings.Join(n.Profiles, ",")
		}
		if n.Time != "" {
			cmd += " --time " + n.Time
		}
		return cmd + " " + slurm.ShellWord(script)
	case NextLint:
		return "migadvisor lint " + slurm.ShellWord(script)
	}
	return ""
}

// SetNext makes step the recommendation's next step, and Next its command
// line, so that the two never disagree.
func (r *Recommendation) SetNext(step NextStep) {
	r.NextStep, r.Next = step, step.Command()
}

// probeStep is the step that measures script on profiles (none: all)
// with the --time given ("" for the script's).
func probeStep(script, limit string, profiles ...string) NextStep {
	return ProbeStep(script, profiles, limit)
}

// probeCommand is the command line of the probe of every profile, for the
// notes and reasons that name it.
func probeCommand(script string) string {
	return probeStep(script, "").Command()
}
