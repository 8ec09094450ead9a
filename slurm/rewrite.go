package slurm

import (
	"fmt"
	"slices"
	"sort"
	"strings"
)

// Variant says how to rewrite a script. Empty fields leave the script as it is.
type Variant struct {
	GPURequest string // an sbatch option, e.g. "--gres=gpu:a100_10g:1"
	Partition  string
	QoS        string
	JobName    string
	Time       string // --time, e.g. "2:00:00"
	Mem        string // --mem, e.g. "8G"; replaces --mem-per-cpu and --mem-per-gpu
}

var gpuOptionNames = []string{OptGres, OptGPUs, OptGPUsPerNode, OptGPUsPerTask, OptGPUsPerSocket}

// edit replaces Data[start:end] with text.
type edit struct {
	start, end int
	text       string
}

// rewriter collects option changes, then turns them into byte edits.
type rewriter struct {
	s       *Script
	set     map[int]string // option index -> new value
	remove  map[int]bool   // option index -> removed
	replace map[int]Option // option index -> replaced by another option
	insert  []string       // new directive lines, in order
}

// Rewrite returns the script with v applied. Only the options it changes are
// touched: every other byte (order, comments, spacing, the body) is kept.
func (s *Script) Rewrite(v Variant) ([]byte, error) {
	rw := &rewriter{s: s, set: map[int]string{}, remove: map[int]bool{}, replace: map[int]Option{}}
	if v.GPURequest != "" {
		if err := rw.gpu(v.GPURequest); err != nil {
			return nil, err
		}
	}
	rw.setOrInsert("partition", v.Partition)
	rw.setOrInsert("qos", v.QoS)
	rw.setOrInsert("job-name", v.JobName)
	rw.setOrInsert("time", v.Time)
	if v.Mem != "" {
		// --mem and the per-CPU or per-GPU forms exclude each other.
		rw.removeAll("mem-per-cpu")
		rw.removeAll("mem-per-gpu")
		rw.setOrInsert("mem", v.Mem)
	}
	return rw.apply(), nil
}

// ParseRequest parses a one-option request such as "--gres=gpu:a100_10g:1".
func ParseRequest(req string) (Option, error) {
	o, _, err := parseOneOption(req)
	return o, err
}

// ParseGPURequest parses a one-option GPU request ("--gres=gpu:a100_10g:1")
// and returns the one kind of GPU it asks for.
func ParseGPURequest(req string) (GPURequest, error) {
	_, res, err := parseOneOption(req)
	if err != nil {
		return GPURequest{}, err
	}
	if len(res.GPUs) != 1 {
		return GPURequest{}, fmt.Errorf("request %q must ask for one kind of GPU", req)
	}
	return res.GPUs[0], nil
}

// parseOneOption reads req as the only option of a directive.
func parseOneOption(req string) (Option, Resources, error) {
	probe := Parse("request", []byte("#!/bin/sh\n#SBATCH "+req+"\n"))
	if len(probe.Problems) > 0 {
		return Option{}, Resources{}, fmt.Errorf("request %q: %s", req, probe.Problems[0].Message)
	}
	if len(probe.Options) != 1 {
		return Option{}, Resources{}, fmt.Errorf("request %q must be exactly one sbatch option", req)
	}
	o := probe.Options[0]
	o.Line, o.Start, o.End = 0, 0, 0
	return o, probe.Resources, nil
}

func (rw *rewriter) lastIndex(name string) int {
	for i := len(rw.s.Options) - 1; i >= 0; i-- {
		if o := rw.s.Options[i]; o.Name == name && o.Component == 0 {
			return i
		}
	}
	return -1
}

// gpu makes req the script's only effective GPU request.
func (rw *rewriter) gpu(req string) error {
	target, err := ParseRequest(req)
	if err != nil {
		return err
	}
	if !isGPUOption(target.Name) {
		return fmt.Errorf("request %q is not a GPU request (--gres or --gpus*)", req)
	}
	done := false
	freed := -1 // an option removed here, whose place the request can take
	for _, name := range gpuOptionNames {
		i := rw.lastIndex(name)
		if i < 0 {
			continue
		}
		o := rw.s.Options[i]
		switch {
		case name == OptGres:
			newValue, had := gresWithGPU(o.Value, target)
			switch {
			case newValue != "":
				rw.set[i] = newValue
				done = done || target.Name == OptGres
			case had:
				freed = firstFree(freed, rw.removeAll(name))
			}
		case name == target.Name:
			rw.set[i] = target.Value
			done = true
		default:
			freed = firstFree(freed, rw.removeAll(name))
		}
	}
	switch {
	case done:
	case freed >= 0:
		delete(rw.remove, freed)
		rw.replace[freed] = target
	default:
		rw.insert = append(rw.insert, renderOption(target.Flag, target.Value, target.HasValue, true))
	}
	return nil
}

// removeAll removes every occurrence of an option, not only the last: an
// earlier one that the last overrode would otherwise take effect again. It
// returns the first one's index.
func (rw *rewriter) removeAll(name string) int {
	first := -1
	for i, o := range rw.s.Options {
		if o.Name == name && o.Component == 0 {
			rw.remove[i] = true
			first = firstFree(first, i)
		}
	}
	return first
}

func firstFree(cur, i int) int {
	if cur < 0 || i < cur {
		return i
	}
	return cur
}

func isGPUOption(name string) bool { return slices.Contains(gpuOptionNames, name) }

// gresWithGPU returns the --gres value with its gpu entries replaced by the
// target's (when the target is a --gres request) or dropped (otherwise), and
// whether it had any gpu entry. "" means nothing is left.
func gresWithGPU(value string, target Option) (string, bool) {
	var kept []string
	had, placed := false, false
	for _, e := range ParseGresList(value) {
		if e.Name != "gpu" {
			kept = append(kept, e.Raw)
			continue
		}
		had = true
		if target.Name == OptGres && !placed {
			kept = append(kept, target.Value)
			placed = true
		}
	}
	if target.Name == OptGres && !placed {
		kept = append(kept, target.Value)
	}
	if !had && target.Name != OptGres {
		return value, false
	}
	return strings.Join(kept, ","), had
}

func (rw *rewriter) setOrInsert(name, value string) {
	if value == "" {
		return
	}
	if i := rw.lastIndex(name); i >= 0 {
		if rw.s.Options[i].Value != value {
			rw.set[i] = value
		}
		return
	}
	rw.insert = append(rw.insert, renderOption("--"+name, value, true, true))
}

// apply turns the collected changes into byte edits and applies them.
func (rw *rewriter) apply() []byte {
	var edits []edit
	// Options that share a word ("-HG1") are rendered again as a group.
	groups := map[int][]int{}
	var starts []int
	for i, o := range rw.s.Options {
		if _, ok := groups[o.Start]; !ok {
			starts = append(starts, o.Start)
		}
		groups[o.Start] = append(groups[o.Start], i)
	}
	removedPerLine := map[int]int{}
	for _, start := range starts {
		idx := groups[start]
		if !rw.touches(idx) {
			continue
		}
		var parts []string
		for _, i := range idx {
			if p := rw.render(i); p != "" {
				parts = append(parts, p)
			}
		}
		first := rw.s.Options[idx[0]]
		end := first.End
		for _, i := range idx {
			end = max(end, rw.s.Options[i].End)
		}
		if len(parts) == 0 {
			removedPerLine[first.Line]++
			edits = append(edits, rw.removal(first.Start, end))
			continue
		}
		edits = append(edits, edit{start, end, strings.Join(parts, " ")})
	}
	edits = rw.mergeRemovals(edits)
	edits = rw.dropEmptyLines(edits, removedPerLine)
	if len(rw.insert) > 0 {
		edits = append(edits, rw.insertion())
	}
	return applyEdits(rw.s.Data, edits)
}

func (rw *rewriter) touches(idx []int) bool {
	for _, i := range idx {
		_, set := rw.set[i]
		_, repl := rw.replace[i]
		if set || repl || rw.remove[i] {
			return true
		}
	}
	return false
}

func (rw *rewriter) render(i int) string {
	o := rw.s.Options[i]
	if t, ok := rw.replace[i]; ok {
		return renderOption(t.Flag, t.Value, t.HasValue, true)
	}
	if rw.remove[i] {
		return ""
	}
	if v, ok := rw.set[i]; ok {
		return renderOption(o.Flag, v, true, o.Attached)
	}
	return renderOption(o.Flag, o.Value, o.HasValue, o.Attached)
}

// removal deletes Data[start:end] and the blanks after it; at the end of a
// line, or before a trailing comment, it takes the blanks before it instead,
// so the line keeps its spacing.
func (rw *rewriter) removal(start, end int) edit {
	d := rw.s.Data
	e := end
	for e < len(d) && (d[e] == ' ' || d[e] == '\t') {
		e++
	}
	if e == len(d) || d[e] == '\n' || d[e] == '\r' || d[e] == '#' {
		for start > 0 && (d[start-1] == ' ' || d[start-1] == '\t') {
			start--
		}
		if e < len(d) && d[e] == '#' {
			e = end
		}
	}
	return edit{start, e, ""}
}

// mergeRemovals makes one removal of removals that touch or overlap (each
// takes a blank beside it, and two can claim the same one), so that a run
// of them reaching the end of a line takes the blank before it as one does.
func (rw *rewriter) mergeRemovals(edits []edit) []edit {
	sort.SliceStable(edits, func(i, j int) bool { return edits[i].start < edits[j].start })
	var out []edit
	for _, e := range edits {
		n := len(out)
		if n == 0 || !isRemoval(e) || !isRemoval(out[n-1]) || e.start > out[n-1].end {
			out = append(out, e)
			continue
		}
		// Taken together, as removal takes one group.
		start, end := out[n-1].start, max(out[n-1].end, e.end)
		for end > start && (rw.s.Data[end-1] == ' ' || rw.s.Data[end-1] == '\t') {
			end--
		}
		out[n-1] = rw.removal(start, end)
	}
	return out
}

func isRemoval(e edit) bool { return e.text == "" && e.end > e.start }

// dropEmptyLines deletes whole directive lines whose every option was removed.
func (rw *rewriter) dropEmptyLines(edits []edit, removed map[int]int) []edit {
	for lineNum, n := range removed {
		if n < groupsOnLine(rw.s, lineNum) {
			continue
		}
		ln := rw.s.Lines[lineNum-1]
		kept := edits[:0]
		for _, e := range edits {
			if e.start < ln.Start || e.start >= ln.Next {
				kept = append(kept, e)
			}
		}
		edits = append(kept, edit{ln.Start, ln.Next, ""})
	}
	return edits
}

func groupsOnLine(s *Script, line int) int {
	seen := map[int]bool{}
	for _, o := range s.Options {
		if o.Line == line {
			seen[o.Start] = true
		}
	}
	return len(seen)
}

// insertion adds new directive lines after the last directive of the header,
// or after the #! line when there is none.
func (rw *rewriter) insertion() edit {
	s := rw.s
	nl := "\n"
	if len(s.Lines) > 0 && s.Lines[0].CR {
		nl = "\r\n"
	}
	at, needBreak := 0, false
	for _, ln := range s.Lines {
		if ln.Kind == LineDirective || (ln.Num == 1 && strings.HasPrefix(s.LineText(1), "#!")) {
			at = ln.Next
			needBreak = ln.Next == len(s.Data) && s.Data[len(s.Data)-1] != '\n'
		}
	}
	var b strings.Builder
	if needBreak {
		b.WriteString(nl)
	}
	for _, opt := range rw.insert {
		b.WriteString(directivePrefix + " " + opt + nl)
	}
	return edit{at, at, b.String()}
}

func applyEdits(data []byte, edits []edit) []byte {
	sort.SliceStable(edits, func(i, j int) bool { return edits[i].start < edits[j].start })
	var b strings.Builder
	b.Grow(len(data) + 64)
	pos := 0
	for _, e := range edits {
		if e.start < pos { // overlapping edit: the earlier one already covers it
			continue
		}
		b.Write(data[pos:e.start])
		b.WriteString(e.text)
		pos = e.end
	}
	b.Write(data[pos:])
	return []byte(b.String())
}

// renderOption writes an option the way sbatch will read it back.
func renderOption(flag, value string, hasValue, attached bool) string {
	if !hasValue {
		return flag
	}
	v := QuoteValue(value)
	switch {
	case strings.HasPrefix(flag, "--") && attached:
		return flag + "=" + v
	case !strings.HasPrefix(flag, "--") && attached:
		return flag + v
	default:
		return flag + " " + v
	}
}

// QuoteValue quotes a directive value so sbatch reads it back unchanged:
// values with blanks, quotes, backslashes or '#' are double-quoted, with '"'
// and '\' escaped.
func QuoteValue(v string) string {
	if v != "" && !strings.ContainsAny(v, " \t\v\f\r\"'\\#") {
		return v
	}
	var b strings.Builder
	b.WriteByte('"')
	for _, c := range []byte(v) {
		if c == '"' || c == '\\' {
			b.WriteByte('\\')
		}
		b.WriteByte(c)
	}
	b.WriteByte('"')
	return b.String()
}
