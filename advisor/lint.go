// Package advisor judges jobs against a site: lint findings now, and later the
// history-based recommendations.
package advisor

import (
	"fmt"
	"regexp"
	"slices"
	"sort"
	"strings"

	"github.com/migadvisor/migadvisor/catalog"
	"github.com/migadvisor/migadvisor/slurm"
)

// Severities of a finding. An error means sbatch would reject the script, or
// the job cannot work as written; a warning means it probably does not do what
// the user meant.
const (
	SeverityError   = "error"
	SeverityWarning = "warning"
)

// Finding is one lint result.
type Finding struct {
	Line     int    `json:"line"`
	Severity string `json:"severity"`
	Code     string `json:"code"`
	Message  string `json:"message"`
}

// HasErrors reports whether any finding is an error.
func HasErrors(fs []Finding) bool {
	for _, f := range fs {
		if f.Severity == SeverityError {
			return true
		}
	}
	return false
}

// linter holds what every rule needs.
type linter struct {
	s        *slurm.Script
	site     *catalog.Site
	res      slurm.Resources
	findings []Finding
}

// Lint checks a batch script against sbatch's rules and the site's.
func Lint(s *slurm.Script, site *catalog.Site) []Finding {
	l := &linter{s: s, site: site, res: s.Resources}
	for _, p := range s.Problems {
		sev := SeverityWarning
		if p.Fatal {
			sev = SeverityError
		}
		l.add(p.Line, sev, p.Code, "%s", p.Message)
	}
	l.commentedDirectives()
	l.lateDirectives()
	l.unexpandedVariables()
	l.memoryConflict()
	l.gpus()
	l.partition()
	l.time()
	l.nodeLimits()
	sort.SliceStable(l.findings, func(i, j int) bool { return l.findings[i].Line < l.findings[j].Line })
	return l.findings
}

func (l *linter) add(line int, sev, code, format string, args ...any) {
	l.findings = append(l.findings, Finding{Line: line, Severity: sev, Code: code, Message: fmt.Sprintf(format, args...)})
}

var commentedDirective = regexp.MustCompile(`^(\s+#\s*SBATCH|#\s+SBATCH|#sbatch|#Sbatch)\b`)

// commentedDirectives flags header lines that look like directives but are
// comments to sbatch. "##SBATCH" is the usual way to disable one and is left alone.
func (l *linter) commentedDirectives() {
	for _, ln := range l.s.Lines {
		if ln.Kind != slurm.LineComment || (l.s.FirstCmd > 0 && ln.Num > l.s.FirstCmd) {
			continue
		}
		if text := l.s.LineText(ln.Num); commentedDirective.MatchString(text) {
			l.add(ln.Num, SeverityWarning, "commented-directive",
				"%q is a comment to sbatch, not a directive: #SBATCH must start the line", strings.TrimSpace(text))
		}
	}
}

func (l *linter) lateDirectives() {
	for _, n := range l.s.LateDirectives() {
		l.add(n, SeverityWarning, "late-directive",
			"sbatch ignores #SBATCH lines after the first command (line %d); move this line above it", l.s.FirstCmd)
	}
}

var shellVariable = regexp.MustCompile(`\$(\{?[A-Za-z_][A-Za-z0-9_]*)`)

func (l *linter) unexpandedVariables() {
	for _, o := range l.s.Options {
		if m := shellVariable.FindString(o.Value); m != "" {
			l.add(o.Line, SeverityWarning, "unexpanded-variable",
				"sbatch does not expand %s in #SBATCH lines: %s is taken literally; write the value itself", m, o.Flag)
		}
	}
}

func (l *linter) memoryConflict() {
	kinds := map[string]int{}
	for _, o := range l.s.Options {
		if o.Component == 0 && (o.Name == "mem" || o.Name == "mem-per-cpu" || o.Name == "mem-per-gpu") {
			kinds[o.Name] = o.Line
		}
	}
	if len(kinds) > 1 {
		l.add(l.res.MemLine, SeverityError, "mem-conflict",
			"--mem, --mem-per-cpu and --mem-per-gpu are mutually exclusive; sbatch rejects a script with more than one")
	}
}

// gpus checks the GPU request against the site's profiles.
func (l *linter) gpus() {
	var mig []string
	for _, g := range l.res.GPUs {
		if g.Count == 0 {
			continue
		}
		p, ok := l.site.ProfileForType(g.Type)
		switch {
		case !ok && g.Type == "":
			continue // untyped request on a site that names no default: nothing to check
		case !ok:
			l.add(g.Line, SeverityError, "unknown-gpu-type",
				"GPU type %q is not offered by %s (types: %s)", g.Type, l.site.Name, strings.Join(l.siteTypes(), ", "))
		case p.IsMIG():
			mig = append(mig, p.Name)
		}
	}
	if total := l.res.GPUCount(); len(mig) > 0 && total > 1 {
		line := l.res.GPUs[0].Line
		l.add(line, SeverityError, "multi-mig-slice",
			"this job asks for %d GPUs including MIG slices (%s): a CUDA process sees only one MIG device, and %s does not support several slices in one job; use a job array (--array=1-%d) with one slice per task",
			total, strings.Join(mig, ", "), l.site.Name, total)
	}
}

func (l *linter) siteTypes() []string {
	var types []string
	for _, p := range l.site.Profiles {
		types = append(types, p.GRESType)
	}
	return types
}

// requestedProfile is the site profile the script's GPU request maps to.
func (l *linter) requestedProfile() (*catalog.Profile, bool) {
	types := l.res.GPUTypes()
	if len(types) != 1 {
		return nil, false
	}
	return l.site.ProfileForType(types[0])
}

func (l *linter) partition() {
	part := firstPartition(l.res.Partition)
	line := l.optionLine("partition")
	if part != "" && len(l.site.Partitions) > 0 {
		if _, ok := l.site.Partition(part); !ok {
			l.add(line, SeverityWarning, "unknown-partition", "partition %q is not one of %s's", part, l.site.Name)
			return
		}
	}
	if p, ok := l.requestedProfile(); ok && len(p.Partitions) > 0 && !slices.Contains(p.Partitions, l.effectivePartition()) {
		where := "the default partition"
		if part != "" {
			where = "partition " + part
		}
		l.add(max(line, l.res.GPUs[0].Line), SeverityWarning, "wrong-partition",
			"%s is offered in %s, not in %s: add --partition=%s", p.Name, strings.Join(p.Partitions, ", "), where, p.Partitions[0])
	}
	if p, ok := l.requestedProfile(); ok && p.QoS != "" && l.res.QoS != p.QoS {
		l.add(max(l.optionLine("qos"), l.res.GPUs[0].Line), SeverityWarning, "qos-not-allowed",
			"%s needs --qos=%s", p.Name, p.QoS)
		return
	}
	if qos := l.res.QoS; qos != "" {
		if p, ok := l.site.Partition(l.effectivePartition()); ok && !p.QoSAllowed(qos) {
			l.add(l.optionLine("qos"), SeverityWarning, "qos-not-allowed",
				"QoS %q is not used with partition %s (use %s)", qos, p.Name, strings.Join(p.QoS, ", "))
		}
	}
}

func (l *linter) effectivePartition() string {
	if part := firstPartition(l.res.Partition); part != "" {
		return part
	}
	if p, ok := l.site.DefaultPartition(); ok {
		return p.Name
	}
	return ""
}

func (l *linter) time() {
	if !l.res.Time.IsSet() {
		line := 1
		if l.s.FirstCmd > 1 {
			line = l.s.FirstCmd - 1
		}
		l.add(line, SeverityWarning, "no-time",
			"no --time: the job gets the partition's default limit; a realistic --time lets the scheduler start it sooner")
		return
	}
	limit, ok := l.site.MaxWalltimeFor(l.effectivePartition())
	if !ok || limit.Unlimited {
		return
	}
	if l.res.Time.Unlimited || l.res.Time.Duration > limit.Duration {
		l.add(l.res.TimeLine, SeverityError, "time-over-max",
			"--time=%s is over the %s limit of %s; Slurm will not start the job", l.res.Time, l.limitScope(), limit)
	}
}

func (l *linter) limitScope() string {
	if p := l.effectivePartition(); p != "" {
		if part, ok := l.site.Partition(p); ok && part.MaxWalltime.IsSet() {
			return "partition " + p
		}
	}
	return l.site.Name
}

// nodeLimits checks per-node CPUs and memory against the partition's nodes.
func (l *linter) nodeLimits() {
	part, ok := l.site.Partition(l.effectivePartition())
	if !ok {
		return
	}
	cpus := l.res.CPUsPerNode()
	if part.NodeCPUs > 0 && cpus > part.NodeCPUs {
		l.add(l.optionLine("ntasks", "ntasks-per-node", "cpus-per-task", "cpus-per-gpu"), SeverityError, "cpus-over-node",
			"the job needs %d CPUs per node, but %s nodes have %d", cpus, part.Name, part.NodeCPUs)
	}
	if part.NodeMemory <= 0 || l.res.MemAll || l.res.MemLine == 0 {
		return // no memory option: Slurm's default per CPU follows the CPUs checked above
	}
	def := int64(l.site.DefaultMemPerCPUFor(part.Name).MiB())
	perNode := float64(l.res.MemoryMiB(def, 0)) / float64(l.res.NodeCount())
	if perNode > part.NodeMemory.MiB() {
		l.add(l.res.MemLine, SeverityError, "mem-over-node",
			"the job asks for %s of memory per node, but %s nodes have %s", catalog.Size(perNode), part.Name, part.NodeMemory)
	}
}

// optionLine is the line of the last of the named options, or 1.
func (l *linter) optionLine(names ...string) int {
	line := 0
	for _, n := range names {
		if o := l.s.LastOption(n); o != nil && o.Line > line {
			line = o.Line
		}
	}
	return max(line, 1)
}

func firstPartition(list string) string {
	first, _, _ := strings.Cut(list, ",")
	return strings.TrimSpace(first)
}
