// Package outcome says how a job of the history ended, in words a user
// reads: a GPU or host out-of-memory, a time limit, a missing command or
// output directory, a cancel, a lost node, or a plain failure, with the
// figures that explain it and what to change.
package outcome

import (
	"cmp"
	"fmt"
	"path/filepath"
	"slices"
	"strings"
	"time"

	"github.com/migadvisor/migadvisor/advisor/base/history"
	"github.com/migadvisor/migadvisor/advisor/base/memory"
	"github.com/migadvisor/migadvisor/catalog"
	"github.com/migadvisor/migadvisor/slurm"
)

// How a job ended, as Of names it.
const (
	Completed       = "completed"
	GPUOOM          = "GPU OOM"
	HostOOM         = "host OOM"
	TimeLimit       = "time limit"
	CommandNotFound = "command not found"
	NoOutputFile    = "no output file"
	Cancelled       = "cancelled"
	Preempted       = "preempted"
	NodeFailure     = "node failure"
	Failed          = "failed"
)

// Outcome is how a job ended, in words a user reads.
type Outcome struct {
	Kind string `json:"outcome"` // one of the Outcome* names; "" while the job has not ended
	// Text is one sentence with the figures that explain it, written to
	// follow "job 42 ": "ran out of GPU memory on 1g.10gb, which has …".
	Text string `json:"explanation"`
	// AnyProfile: the cause is in the script or its request, not in the
	// GPU, so the same job fails the same way on every profile (a missing
	// command or output directory, too little host memory, a cancel).
	AnyProfile bool `json:"any_profile,omitempty"`
}

// Of says how a job of the history ended and, when it did not
// complete, why and what to change. site (may be nil) gives the profiles'
// usable GPU memory. A job that has not ended, or whose record is still
// slurmdbd's placeholder, gets an empty Outcome.
func Of(r *history.JobRecord, site *catalog.Site) Outcome {
	if r.Stub || !slurm.TerminalState(r.State) {
		return Outcome{}
	}
	after := ""
	if r.ElapsedS != nil {
		after = " after " + slurm.FormatSeconds(float64(*r.ElapsedS))
	}
	code, signal := exitStatus(r)
	switch {
	case r.GPUOOM != "":
		return Outcome{Kind: GPUOOM, Text: gpuOOMText(r, site)}
	case r.OOM() == slurm.OOMHost:
		return Outcome{Kind: HostOOM, Text: hostOOMText(r), AnyProfile: true}
	case r.State == "FAILED" && code == 0 && signal == 53:
		return Outcome{Kind: NoOutputFile, Text: noOutputText(r), AnyProfile: true}
	case r.State == "TIMEOUT" || r.TimeLimitHit:
		return Outcome{Kind: TimeLimit, Text: timeLimitText(r, site)}
	case r.State == "NODE_FAIL" || r.State == "BOOT_FAIL":
		return Outcome{Kind: NodeFailure, Text: fmt.Sprintf("lost its node %s%s (%s): resubmit it; the run says nothing about the script or the profile",
			orWord(r.NodeList, "to a failure"), after, r.State)}
	case r.State == "PREEMPTED":
		return Outcome{Kind: Preempted, Text: fmt.Sprintf("was preempted by another job%s: resubmit it; the run says nothing about the script or the profile", after)}
	case strings.HasPrefix(r.State, "CANCELLED"):
		return Outcome{Kind: Cancelled, Text: cancelledText(r, after), AnyProfile: true}
	case code == 127:
		return Outcome{Kind: CommandNotFound, Text: commandNotFoundText(r), AnyProfile: true}
	case r.State == "COMPLETED":
		return Outcome{Kind: Completed, Text: "completed" + after}
	}
	return Outcome{Kind: Failed, Text: failedText(r, code, signal, after)}
}

// exitStatus is sacct's ExitCode, code:signal; -1 where unknown.
func exitStatus(r *history.JobRecord) (code, signal int64) {
	code, signal = -1, -1
	if r.ExitCode != nil {
		code = *r.ExitCode
	}
	if r.ExitSignal != nil {
		signal = *r.ExitSignal
	}
	return code, signal
}

// gpuOOMText gives the memory the job had and the least it needed: the
// OOM message's figure (held plus asked for) or the peak it reached, and
// the smallest larger profile with that much.
func gpuOOMText(r *history.JobRecord, site *catalog.Site) string {
	need := max(deref(r.GPUNeedMiB, -1), deref(r.GPUMemPeakMiB(), -1))
	if v, ok := r.Metrics[slurm.AllocatedMetric]; ok {
		need = max(need, v)
	}
	var b strings.Builder
	b.WriteString("ran out of GPU memory")
	var current *catalog.Profile
	if site != nil {
		if p, ok := site.Profile(r.Profile); ok {
			current = p
		}
	}
	switch {
	case current != nil:
		fmt.Fprintf(&b, " on %s, which has %s usable", site.ProfileWords(current.Name), MemText(current.UsableMemory.MiB()))
	case r.Profile != "":
		fmt.Fprintf(&b, " on %s", r.Profile)
	}
	switch {
	case current != nil && need <= current.UsableMemory.MiB():
		b.WriteString("; it needed more than that") // what it held when it failed is no better bound
	case need > 0:
		fmt.Fprintf(&b, "; it needed at least %s", MemText(need))
	}
	if current == nil {
		b.WriteString(": ask for a GPU with more memory or use less")
		return b.String()
	}
	if next := largerProfile(site, current, need); next != nil {
		fmt.Fprintf(&b, ": try %s, with %s", site.ProfileWords(next.Name), MemText(next.UsableMemory.MiB()))
	} else {
		fmt.Fprintf(&b, ": no profile of %s has more, so the job must use less, for example a smaller batch", site.Name)
	}
	return b.String()
}

// largerProfile is the smallest profile with more usable memory than the
// current one where the need is a low OOM risk (under the site's low-risk
// share of its usable memory, as recommend judges it), else the smallest
// that holds the need at all; nil if none.
func largerProfile(site *catalog.Site, current *catalog.Profile, need float64) *catalog.Profile {
	share := site.Advice.LowRiskShare
	if share <= 0 {
		share = memory.DefaultLowRiskShare
	}
	var fits *catalog.Profile
	for _, p := range site.ProfilesBySize() {
		u := p.UsableMemory.MiB()
		if u <= current.UsableMemory.MiB() || u < need {
			continue
		}
		if need <= u*share {
			return p
		}
		if fits == nil {
			fits = p
		}
	}
	return fits
}

func hostOOMText(r *history.JobRecord) string {
	var b strings.Builder
	if r.State == "COMPLETED" {
		b.WriteString("completed, but a process of it was killed for host memory")
	} else {
		b.WriteString("ran out of host memory")
	}
	if had := deref(r.ReqMemMiB, -1); had > 0 {
		fmt.Fprintf(&b, ": the job had %s", MemText(had))
		// sacct samples RSS: the kill comes between samples, so the figure
		// is often below what the job had. Said as what it is.
		if rss := deref(r.MaxRSSMiB, -1); rss >= MinRSSMiB {
			fmt.Fprintf(&b, " and sacct saw its RSS reach %s before the kill", MemText(rss))
		}
	}
	b.WriteString("; ask for more with --mem, as a larger GPU profile would not help")
	return b.String()
}

// commandNotFoundText explains exit 127. The shell's "x: command not
// found" line is in the job's output, which names the file to look in;
// the history keeps no column for the command itself.
func commandNotFoundText(r *history.JobRecord) string {
	where := ""
	if r.OutputPath != "" {
		where = ": " + filepath.Base(r.OutputPath) + " names it"
	}
	return "failed because a command was not found (exit 127)" + where + "; load its module or fix PATH in the script"
}

func noOutputText(r *history.JobRecord) string {
	file := "its output or error file"
	if r.Stdout != "" && !strings.Contains(r.Stdout, "%") {
		file = r.Stdout
	}
	return fmt.Sprintf("failed at once because Slurm could not open %s (exit 0:53): does the directory of --output or --error exist? 'migadvisor lint' checks a script's before you submit, the sbatch wrapper the command line's too", file)
}

func timeLimitText(r *history.JobRecord, site *catalog.Site) string {
	var b strings.Builder
	b.WriteString("reached its time limit")
	if r.TimeLimitMin != nil && *r.TimeLimitMin > 0 {
		fmt.Fprintf(&b, " of %s", slurm.FormatDuration(time.Duration(*r.TimeLimitMin)*time.Minute))
	}
	if r.ElapsedS != nil {
		fmt.Fprintf(&b, " after %s, so it needs at least that long", slurm.FormatSeconds(float64(*r.ElapsedS)))
	}
	b.WriteString(": ask for more with --time")
	if hasLargerProfile(site, r.Profile) {
		b.WriteString(", or try a larger profile, which may be faster")
	}
	return b.String()
}

// hasLargerProfile reports whether the site has a profile larger than the
// one the job ran on: none is larger than the whole GPU. An unknown profile
// (or site) may have one.
func hasLargerProfile(site *catalog.Site, profile string) bool {
	if site == nil {
		return true
	}
	bySize := site.ProfilesBySize()
	i := slices.IndexFunc(bySize, func(p *catalog.Profile) bool { return p.Name == profile })
	return i < 0 || i < len(bySize)-1
}

func cancelledText(r *history.JobRecord, after string) string {
	by := ""
	if r.CancelledBy != "" {
		by = " by uid " + r.CancelledBy
	}
	if r.Start == nil || r.ElapsedS == nil || *r.ElapsedS == 0 {
		return "was cancelled" + by + " before it started"
	}
	return "was cancelled" + by + after + ", before it ended: the run says nothing about the profile"
}

func failedText(r *history.JobRecord, code, signal int64, after string) string {
	switch {
	case code == 126:
		return "failed with exit code 126" + after + ": a command was found but could not be run, so check that it is executable and built for this node" +
			inOutput(r, "names it")
	case code > 128 && code < 160:
		return fmt.Sprintf("failed with exit code %d%s: a process was killed by signal %d%s", code, after, code-128, signalName(code-128)) +
			inOutput(r, "may say why")
	case code > 0:
		return fmt.Sprintf("failed with exit code %d%s", code, after) + inOutput(r, "may say why")
	case signal > 0:
		return fmt.Sprintf("was killed by signal %d%s%s", signal, signalName(signal), after) + inOutput(r, "may say why")
	}
	return "ended " + r.State + after + inOutput(r, "may say why")
}

// signalName names the signals a failed job usually dies of: " (SIGKILL)".
func signalName(sig int64) string {
	names := map[int64]string{1: "SIGHUP", 2: "SIGINT", 4: "SIGILL", 6: "SIGABRT", 7: "SIGBUS", 8: "SIGFPE",
		9: "SIGKILL", 11: "SIGSEGV", 13: "SIGPIPE", 15: "SIGTERM"}
	if n, ok := names[sig]; ok {
		return " (" + n + ")"
	}
	return ""
}

// inOutput points at the job's output: its first error line where the
// output had one ("; logs/err-5.txt line 3: ModuleNotFoundError: …"),
// else its output file ("; slurm-5.out names it").
func inOutput(r *history.JobRecord, verb string) string {
	if r.ErrorText != "" {
		where := jobPath(r, cmp.Or(r.ErrorFile, r.OutputPath))
		if r.ErrorLine != nil && *r.ErrorLine > 0 {
			where += fmt.Sprintf(" line %d", *r.ErrorLine)
		}
		return "; " + where + ": " + r.ErrorText
	}
	if r.OutputPath == "" {
		return ""
	}
	return "; " + jobPath(r, r.OutputPath) + " " + verb
}

// jobPath writes a file of a job's as its user finds it: relative to the
// job's directory when it is inside it (logs/err-5.txt), else its name.
func jobPath(r *history.JobRecord, path string) string {
	if r.WorkDir != "" && filepath.IsAbs(path) {
		if rel, err := filepath.Rel(r.WorkDir, path); err == nil && !strings.HasPrefix(rel, "..") {
			return rel
		}
	}
	return filepath.Base(path)
}

func orWord(s, none string) string {
	if s == "" {
		return none
	}
	return s
}

// MemText is a memory size as a person reads it: "9.5 GiB", "169 MiB".
func MemText(mib float64) string {
	if mib >= 1024 {
		return fmt.Sprintf("%.1f GiB", mib/1024)
	}
	return fmt.Sprintf("%.0f MiB", mib)
}

// MinRSSMiB is the least peak RSS worth naming: a process the kernel killed
// at once leaves sacct a MaxRSS of a few KiB, which says nothing.
const MinRSSMiB = 1

// deref is *p, or none where p is nil.
func deref(p *float64, none float64) float64 {
	if p == nil {
		return none
	}
	return *p
}
