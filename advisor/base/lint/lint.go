package lint

import (
	"fmt"
	"math"
	"os"
	"path/filepath"
	"slices"
	"sort"
	"strconv"
	"strings"
	"time"

	"github.com/migadvisor/migadvisor/advisor/base/memory"
	"github.com/migadvisor/migadvisor/catalog"
	"github.com/migadvisor/migadvisor/internal/lazyre"
	"github.com/migadvisor/migadvisor/internal/textutil"
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

// Options are what Check may look at beyond the script and the site.
type Options struct {
	// SubmitDir is the directory sbatch will run in. When set, the
	// directories of --output and --error are checked there (or under the
	// script's --chdir): Slurm does not create them, and a job whose
	// directory is missing fails at once with no output.
	SubmitDir string
	// CommandLine is the sbatch command line the script is submitted
	// with (the wrapper's), and Env its environment: their --output,
	// --error and --chdir win over the script's, and a finding about one
	// has line 0.
	CommandLine *slurm.CommandLine
	Env         []string
}

// Check checks a batch script against sbatch's rules and the site's.
func Check(s *slurm.Script, site *catalog.Site) []Finding {
	return CheckWith(s, site, Options{})
}

// CheckWith is Check with the checks that need more than the script.
func CheckWith(s *slurm.Script, site *catalog.Site, opt Options) []Finding {
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
	l.gpuProcesses()
	l.partition()
	l.time()
	l.nodeLimits()
	l.outputDirs(opt)
	sort.SliceStable(l.findings, func(i, j int) bool { return l.findings[i].Line < l.findings[j].Line })
	return l.findings
}

func (l *linter) add(line int, sev, code, format string, args ...any) {
	l.findings = append(l.findings, Finding{Line: line, Severity: sev, Code: code, Message: fmt.Sprintf(format, args...)})
}

var commentedDirective = lazyre.New(`^(\s+#\s*SBATCH|#\s+SBATCH|#sbatch|#Sbatch)\b`)

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
		ignored := strings.TrimSpace(strings.TrimPrefix(l.s.LineText(n), "#SBATCH"))
		if i := strings.Index(ignored, " #"); i >= 0 {
			ignored = strings.TrimSpace(ignored[:i]) // the line's own comment
		}
		l.add(n, SeverityWarning, "late-directive",
			"sbatch ignores #SBATCH lines after the first command (line %d), so the job runs without %s; move this line above it", l.s.FirstCmd, ignored)
	}
}

var shellVariable = lazyre.New(`\$(\{?[A-Za-z_][A-Za-z0-9_]*)`)

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

// gpuProcesses checks the script's launchers against its GPU request.
func (l *linter) gpuProcesses() {
	p, _ := l.requestedProfile()
	if line, msg := gpuProcessesOverRequest(l.s, l.site, p, l.res.GPUCount()); msg != "" {
		l.add(line, SeverityWarning, "gpu-processes-over-request", "%s", msg)
	}
}

// gpuProcessesOverRequest says that the script's commands start more GPU
// processes than the job has GPUs (asked, of profile p if known), and
// where; "" when they do not. The extra processes crowd onto the GPUs
// there are, and NCCL will not run two ranks on one device. A job that
// asks for no GPU is left alone: torchrun runs CPU processes too.
func gpuProcessesOverRequest(s *slurm.Script, site *catalog.Site, p *catalog.Profile, asked int) (int, string) {
	if asked < 1 {
		return 0, ""
	}
	n, line, why := launchedGPUs(s)
	if n <= asked {
		return 0, ""
	}
	has, want := textutil.Plural(asked, "GPU"), strconv.Itoa(n)
	if p != nil && p.IsMIG() {
		has, want = textutil.Plural(asked, "MIG slice"), fmt.Sprintf("%d full GPUs", n)
	}
	if req := gpuRequestFor(s.Resources, site, p, n); req != "" {
		want += " (" + req + ")"
	}
	fewer := "start"
	if strings.HasPrefix(why, "CUDA_VISIBLE_DEVICES") {
		fewer = "name"
	}
	return line, fmt.Sprintf("%s, but the job asks for %s: ask for %s or %s %d", why, has, want, fewer, asked)
}

// launchedGPUs is what MultiGPU reads from the script's commands alone,
// without its GPU request, which MultiGPU would answer with first.
func launchedGPUs(s *slurm.Script) (n, line int, why string) {
	commands := *s
	commands.Resources.GPUs = nil
	return MultiGPU(&commands)
}

// gpuRequestFor writes a request for n GPUs of profile p in the form the
// script uses (per node, per task or in all; --gres without one), "" when
// it cannot. A MIG slice serves one process, so the request is for whole
// GPUs then.
func gpuRequestFor(res slurm.Resources, site *catalog.Site, p *catalog.Profile, n int) string {
	g := slurm.GPURequest{Option: slurm.OptGres}
	if len(res.GPUs) == 1 {
		g = res.GPUs[0]
	} else if len(res.GPUs) > 1 {
		return ""
	}
	typ := g.Type
	switch {
	case p != nil && p.IsMIG():
		full, ok := wholeGPU(site)
		if !ok {
			return ""
		}
		typ = full.GRESType
	case p != nil:
		if q, ok := site.ProfileForType(g.Type); !ok || q != p {
			typ = p.GRESType
		}
	}
	count, each := n, ""
	switch g.Option {
	case slurm.OptGPUs:
	case slurm.OptGPUsPerTask:
		if tasks := res.Tasks(); tasks > 1 {
			count, each = (n+tasks-1)/tasks, " for each task"
		}
	case slurm.OptGPUsPerSocket:
		return ""
	default: // --gres and --gpus-per-node are per node
		if nodes := res.NodeCount(); nodes > 1 {
			count, each = (n+nodes-1)/nodes, " on each node"
		}
	}
	value := strconv.Itoa(count)
	if typ != "" {
		value = typ + ":" + value
	}
	if g.Option == slurm.OptGres {
		return "--gres=gpu:" + value + each
	}
	return "--" + g.Option + "=" + value + each
}

// wholeGPU is the site's first profile that is a whole GPU.
func wholeGPU(site *catalog.Site) (*catalog.Profile, bool) {
	for i := range site.Profiles {
		if !site.Profiles[i].IsMIG() {
			return &site.Profiles[i], true
		}
	}
	return nil, false
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
		if l.res.TimeLine > 0 || slices.ContainsFunc(l.s.Problems, func(p slurm.Problem) bool { return p.Code == "empty-script" }) {
			return // a --time whose value is bad (said where it is read), or no script at all
		}
		line := 1
		if l.s.FirstCmd > 1 {
			line = l.s.FirstCmd - 1
		}
		l.add(line, SeverityWarning, "no-time",
			"no --time: the job gets the partition's default limit; a realistic --time lets the scheduler start it sooner")
		return
	}
	if msg := timeOverMax(l.site, l.effectivePartition(), l.res.Time); msg != "" {
		l.add(l.res.TimeLine, SeverityError, "time-over-max", "%s", msg)
	}
}

// timeOverMax says that a time limit is over the partition's maximum (or
// the site's), "" when it is not.
func timeOverMax(site *catalog.Site, partition string, t slurm.TimeLimit) string {
	limit, ok := site.MaxWalltimeFor(partition)
	if !ok || limit.Unlimited || !t.Unlimited && t.Duration <= limit.Duration {
		return ""
	}
	scope := site.Name
	if part, ok := site.Partition(partition); ok && part.MaxWalltime.IsSet() {
		scope = "partition " + partition
	}
	return fmt.Sprintf("--time=%s is over the %s limit of %s; Slurm will not start the job", t, scope, limit)
}

// cpusOverNode says that a job needs more CPUs on a node than the
// partition's nodes have, "" when it does not.
func cpusOverNode(site *catalog.Site, partition string, cpusPerNode int) string {
	part, ok := site.Partition(partition)
	if !ok || part.NodeCPUs <= 0 || cpusPerNode <= part.NodeCPUs {
		return ""
	}
	return fmt.Sprintf("the job needs %d CPUs per node, but %s nodes have %d", cpusPerNode, part.Name, part.NodeCPUs)
}

// memOverNode says that a job asks for more memory per node than the
// partition's nodes have, "" when it does not.
func memOverNode(site *catalog.Site, partition string, perNodeMiB float64) string {
	part, ok := site.Partition(partition)
	if !ok || part.NodeMemory <= 0 || perNodeMiB <= part.NodeMemory.MiB() {
		return ""
	}
	asked, has := memoryOverLimit(perNodeMiB, part.NodeMemory.MiB())
	return fmt.Sprintf("the job asks for %s of memory per node, but %s nodes have %s", asked, part.Name, has)
}

// defaultMemOverNode says that a job without a memory option gets more
// memory per node than the partition's nodes have, at the default per CPU
// for its CPUs on a node; "" when it does not. Slurm would not start it.
func defaultMemOverNode(site *catalog.Site, partition string, cpusPerNode, nodes int) string {
	part, ok := site.Partition(partition)
	perCPU := site.DefaultMemPerCPUFor(partition).MiB()
	perNode := perCPU * float64(cpusPerNode)
	if !ok || part.NodeMemory <= 0 || perNode <= part.NodeMemory.MiB() {
		return ""
	}
	cpus := "its " + textutil.Plural(cpusPerNode, "CPU")
	if nodes > 1 {
		cpus += " on each node"
	}
	got, has := memoryOverLimit(perNode, part.NodeMemory.MiB())
	return fmt.Sprintf("without --mem the job gets %s per CPU, %s per node for %s, but %s nodes have %s",
		memory.FormatMiB(perCPU), got, cpus, part.Name, has)
}

// memoryOverLimit writes a memory figure and the smaller limit it is over
// as memory.FormatMiB does, or in MiB where that would print them the same.
func memoryOverLimit(mib, limitMiB float64) (string, string) {
	if a, b := memory.FormatMiB(mib), memory.FormatMiB(limitMiB); a != b {
		return a, b
	}
	return fmt.Sprintf("%.0f MiB", math.Ceil(mib)), fmt.Sprintf("%.0f MiB", math.Floor(limitMiB))
}

// nodeLimits checks per-node CPUs and memory against the partition's nodes.
func (l *linter) nodeLimits() {
	part := l.effectivePartition()
	if msg := cpusOverNode(l.site, part, l.res.CPUsPerNode()); msg != "" {
		l.add(l.cpuLine(), SeverityError, "cpus-over-node", "%s", msg)
	}
	switch {
	case l.res.MemAll:
		return // all of a node, whatever it has
	case l.res.MemLine == 0:
		// Slurm's default per CPU, for each CPU: the CPU options say how much.
		if msg := defaultMemOverNode(l.site, part, l.res.CPUsPerNode(), l.res.NodeCount()); msg != "" {
			l.add(l.cpuLine(), SeverityError, "mem-over-node", "%s", msg)
		}
		return
	}
	if msg := memOverNode(l.site, part, float64(l.res.MemoryMiB(0, 0))/float64(l.res.NodeCount())); msg != "" {
		l.add(l.res.MemLine, SeverityError, "mem-over-node", "%s", msg)
	}
}

// cpuLine is the line of the last option that sets the job's CPUs.
func (l *linter) cpuLine() int {
	return l.optionLine("ntasks", "ntasks-per-node", "cpus-per-task", "cpus-per-gpu")
}

// outputDirs checks that the directories of --output and --error exist
// where the job will run: slurmstepd does not create them, and without one
// the job fails at once (exit code 0:53) leaving no output at all. A
// directory with a replacement symbol (%u, %x) is known only then, and is
// not checked; nor is anything under a --chdir that does not exist yet.
func (l *linter) outputDirs(opt Options) {
	submitDir := opt.SubmitDir
	if submitDir == "" {
		return
	}
	// given is the command line's (or SBATCH_* variable's) value of an option.
	given := func(name string) (string, bool) {
		if opt.CommandLine == nil {
			return "", false
		}
		return opt.CommandLine.Effective(name, nil, opt.Env)
	}
	workDir, where := submitDir, submitDir
	chdir := ""
	if o := l.s.LastOption("chdir"); o != nil && o.Value != "" {
		chdir = o.Value
	}
	if v, ok := given("chdir"); ok {
		chdir = v
	}
	if chdir != "" {
		workDir = chdir
		if !filepath.IsAbs(workDir) {
			workDir = filepath.Join(submitDir, workDir)
		}
		if !isDir(workDir) {
			return
		}
		where = workDir + " (the job's --chdir)"
	}
	files := l.s.OutputFiles()
	type outputFile struct {
		flag, pattern string
		line          int
		set           bool // by the script or the command line: not Slurm's default
	}
	checks := []outputFile{{"--output", files.Stdout, files.StdoutLine, files.StdoutLine > 0},
		{"--error", files.Stderr, files.StderrLine, files.StderrLine > 0}}
	for i, name := range []string{"output", "error"} {
		if v, ok := given(name); ok && v != "" {
			checks[i] = outputFile{checks[i].flag, v, 0, true}
		}
	}
	for _, f := range checks {
		if !f.set {
			continue // Slurm's default, in the working directory itself
		}
		pattern := f.pattern
		if strings.Contains(pattern, `\`) {
			pattern = slurm.ExpandFilePattern(pattern, slurm.PatternJob{}) // a backslash turns every symbol off
		} else if strings.Contains(filepath.Dir(pattern), "%") {
			continue
		}
		dir := filepath.Dir(pattern)
		if dir == "." {
			continue
		}
		path := dir
		if !filepath.IsAbs(path) {
			path = filepath.Join(workDir, dir)
		}
		if isDir(path) {
			continue
		}
		mkdir := dir
		if !filepath.IsAbs(dir) && chdir != "" {
			mkdir = filepath.Join(chdir, dir)
		}
		l.add(f.line, SeverityError, "output-dir-missing",
			"%s's directory %q does not exist in %s: the job would fail at once (exit code 0:53) with no output; create it first (mkdir -p %s)",
			f.flag, dir, where, slurm.ShellWord(mkdir))
	}
}

func isDir(path string) bool {
	info, err := os.Stat(path)
	return err == nil && info.IsDir()
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

// ChargeWarnings are what a price of the script (nil for a request given
// by flags alone) must say beside it: the #SBATCH lines sbatch ignores,
// which the price leaves out too, what it could not price as asked, a
// launcher that starts more GPU processes than the GPUs priced, and a
// request over the limits of the partition it is priced in (time, CPUs or
// memory per node, the default memory of its CPUs too), which Slurm would
// not start. A figure the script gives carries its line; one the
// caller set instead (a flag) has line 0.
func ChargeWarnings(s *slurm.Script, site *catalog.Site, job catalog.Job, charge catalog.Charge) []Finding {
	var fs []Finding
	add := func(line int, code, msg string) {
		fs = append(fs, Finding{Line: line, Severity: SeverityWarning, Code: code, Message: msg})
	}
	l := &linter{s: s, site: site}
	if s == nil {
		l.s = slurm.Parse("", nil)
	}
	res := l.s.Resources
	for _, n := range l.s.LateDirectives() {
		ignored := strings.TrimSpace(strings.TrimPrefix(l.s.LineText(n), "#SBATCH"))
		add(n, "late-directive", "#SBATCH after the first command is ignored by sbatch: priced without "+ignored)
	}
	if job.Partition != "" && charge.Partition == "" {
		add(l.lineIf(firstPartition(res.Partition) == job.Partition, "partition"), "unknown-partition",
			fmt.Sprintf("partition %q is not one of %s's: priced at the site's general rates", job.Partition, site.Name))
	}
	if res.MemAll && !job.MemWholeNode {
		add(res.MemLine, "mem-whole-node-unknown", fmt.Sprintf(
			"--mem=0 asks for all the memory of a node, but site %s does not give its nodes' memory: priced at the default memory per CPU", site.Name))
	}
	// A job priced at the default hour asked for no time: none to check.
	scriptTime := res.Time.IsSet() && math.Abs(res.Time.Hours()-job.Hours) < 1e-9
	if scriptTime || job.Hours != 1 {
		t, line := slurm.TimeLimit{Duration: time.Duration(math.Round(job.Hours*3600)) * time.Second}, 0
		if scriptTime {
			t, line = res.Time, res.TimeLine
		}
		if msg := timeOverMax(site, charge.Partition, t); msg != "" {
			add(line, "time-over-max", msg)
		}
	}
	if job.Profile != nil {
		if line, msg := gpuProcessesOverRequest(l.s, site, job.Profile, max(job.GPUs, 1)); msg != "" {
			add(line, "gpu-processes-over-request", msg)
		}
	}
	nodes := max(job.Nodes, 1)
	cpuLine := l.lineIf(job.CPUs == res.CPUs() && res.CPUs() > 1, "ntasks", "ntasks-per-node", "cpus-per-task", "cpus-per-gpu")
	if msg := cpusOverNode(site, charge.Partition, (job.CPUs+nodes-1)/nodes); msg != "" {
		add(cpuLine, "cpus-over-node", msg)
	}
	if line, msg := l.chargedMemOverNode(site, job, charge, cpuLine); msg != "" {
		add(line, "mem-over-node", msg)
	}
	// In the script's order; what flags gave (line 0) last.
	sort.SliceStable(fs, func(i, j int) bool {
		a, b := fs[i].Line, fs[j].Line
		return a != 0 && (b == 0 || a < b)
	})
	return fs
}

// chargedMemOverNode says that the memory priced is more per node than the
// nodes of the partition priced have, and on which line: the script's
// memory option when its figure is the one priced, the CPUs' line
// (cpuLine) when the memory is the default per CPU, else 0 (a flag's).
func (l *linter) chargedMemOverNode(site *catalog.Site, job catalog.Job, charge catalog.Charge, cpuLine int) (int, string) {
	if charge.MemWholeNode {
		return 0, "" // all of a node, whatever it has
	}
	res, nodes := l.s.Resources, max(charge.Nodes, 1)
	defaultMem := job.MemMiB <= 0 ||
		res.MemLine == 0 && job.MemMiB == float64(res.MemoryMiB(int64(site.DefaultMemPerCPUFor(job.Partition).MiB()), 0))
	if defaultMem {
		return cpuLine, defaultMemOverNode(site, charge.Partition, (charge.CPUs+nodes-1)/nodes, nodes)
	}
	line := l.lineIf(res.MemLine > 0 && !res.MemAll && job.MemMiB == float64(res.MemoryMiB(0, 0)), "mem", "mem-per-cpu", "mem-per-gpu")
	return line, memOverNode(site, charge.Partition, charge.MemGiB*1024/float64(nodes))
}

// lineIf is the line of the last of the named options when the script's
// value is the one used, else 0.
func (l *linter) lineIf(used bool, names ...string) int {
	if !used {
		return 0
	}
	line := 0
	for _, n := range names {
		if o := l.s.LastOption(n); o != nil && o.Line > line {
			line = o.Line
		}
	}
	return line
}

// SubmissionProblems are what a user must hear before a job is submitted,
// one line each: the script's errors as "path:line: message (code)"
// ("sbatch's command line: …" for a finding of line 0), and the warnings
// about a job that will not run as its script reads (an #SBATCH line sbatch
// ignores, where a GPU request leaves the job without its GPU; more GPU
// processes than GPUs). recommend and the sbatch wrapper say the same.
func SubmissionProblems(script *slurm.Script, site *catalog.Site, path string, opt Options) []string {
	var lines []string
	for _, f := range CheckWith(script, site, opt) {
		switch {
		case f.Severity != SeverityError && !jobChangingWarning[f.Code]:
		case f.Line == 0:
			lines = append(lines, fmt.Sprintf("sbatch's command line: %s (%s)", f.Message, f.Code))
		default:
			lines = append(lines, fmt.Sprintf("%s:%d: %s (%s)", path, f.Line, f.Message, f.Code))
		}
	}
	return lines
}

// jobChangingWarning are the lint warnings about a job that will not run
// as its script reads.
var jobChangingWarning = map[string]bool{"late-directive": true, "gpu-processes-over-request": true}
