package slurm

import (
	"bytes"
	"regexp"
	"regexp/syntax"
	"slices"
)

// A job's output often says what the job is where its script does not: a
// site's history holds accounting and output files, rarely the script, and
// GROMACS prints its banner, Hugging Face's Trainer its loss dicts,
// torchvision its data set's download. OutputWorkload is one such line; the
// catalog's reference benchmarks give theirs (catalog.OutputWorkloads), and
// the scan names the first of ScanOptions.Workloads whose line it met
// (OutputEvidence.Resembles): the runtime prior then scales the job like
// that benchmark, as it would a script that runs it.

// OutputWorkloads are the lines that say what a job is, in precedence
// order, with one filter of every line's gates: most lines of most outputs
// hold none, and one pass over a line tells so (gateFilter), where testing
// each gate in turn made the scan of an output 1.8 times as slow with
// Wulver's lines.
type OutputWorkloads struct {
	lines []OutputWorkload
	// gates finds any line's gate; nil where some line has none, and
	// every line is then tested.
	gates *gateFilter
}

// NewOutputWorkloads are the lines, the first the one that wins.
func NewOutputWorkloads(lines ...OutputWorkload) *OutputWorkloads {
	ws := &OutputWorkloads{lines: lines}
	var all [][]byte
	for _, w := range lines {
		if !w.Gated() {
			return ws
		}
		all = append(all, w.gates...)
	}
	if len(all) > 0 {
		ws.gates = newGateFilter(all)
	}
	return ws
}

// Lines are the workloads' lines, in precedence order.
func (ws *OutputWorkloads) Lines() []OutputWorkload {
	if ws == nil {
		return nil
	}
	return ws.lines
}

// OutputWorkload is a line only one kind of workload prints.
type OutputWorkload struct {
	Name  string // the workload's: a reference benchmark's name
	Regex *regexp.Regexp
	// gates are literals every match holds one of, tested before the
	// expression: a scan looks at every line of every job's output.
	// nil: none known, the expression runs on every line.
	gates [][]byte
}

// NewOutputWorkload is a workload's line, with the literals that gate it.
func NewOutputWorkload(name string, re *regexp.Regexp) OutputWorkload {
	w := OutputWorkload{Name: name, Regex: re}
	if parsed, err := syntax.Parse(re.String(), syntax.Perl); err == nil {
		if lits, ok := requiredLiterals(parsed); ok {
			slices.Sort(lits)
			for _, l := range slices.Compact(lits) {
				w.gates = append(w.gates, []byte(l))
			}
		}
	}
	return w
}

// Gated reports whether a line must hold one of a few literals to match:
// an expression without one runs on every line of every output.
func (w OutputWorkload) Gated() bool { return len(w.gates) > 0 }

// matches reports whether the line is the workload's.
func (w OutputWorkload) matches(b []byte) bool {
	if len(w.gates) > 0 {
		hit := false
		for _, g := range w.gates {
			if bytes.Contains(b, g) {
				hit = true
				break
			}
		}
		if !hit {
			return false
		}
	}
	return w.Regex.Match(b)
}

// requiredLiterals are literals of which every match of re holds one: the
// longest a concatenation requires (of its parts that require one, the one
// whose shortest literal is longest), every branch's of an alternation.
// ok is false where some match need hold none (a case-folded literal, an
// optional part, a class).
func requiredLiterals(re *syntax.Regexp) (lits []string, ok bool) {
	switch re.Op {
	case syntax.OpLiteral:
		if re.Flags&syntax.FoldCase != 0 {
			return nil, false
		}
		return []string{string(re.Rune)}, true
	case syntax.OpCapture, syntax.OpPlus:
		return requiredLiterals(re.Sub[0])
	case syntax.OpRepeat:
		if re.Min >= 1 {
			return requiredLiterals(re.Sub[0])
		}
	case syntax.OpConcat:
		for _, sub := range re.Sub {
			if l, subOK := requiredLiterals(sub); subOK && (!ok || shortest(l) > shortest(lits)) {
				lits, ok = l, true
			}
		}
		return lits, ok
	case syntax.OpAlternate:
		for _, sub := range re.Sub {
			l, subOK := requiredLiterals(sub)
			if !subOK {
				return nil, false
			}
			lits = append(lits, l...)
		}
		return lits, true
	}
	return nil, false
}

// shortest is the length of the shortest of the literals.
func shortest(lits []string) int {
	n := -1
	for _, l := range lits {
		if n < 0 || len(l) < n {
			n = len(l)
		}
	}
	return n
}

// workload notes the workload a line shows, where it comes before the one
// found so far in ScanOptions.Workloads: the list's order is the
// precedence (a ResNet on CIFAR-10 before any job on CIFAR-10), and a
// workload found is not looked for again.
func (s *scanner) workload(b []byte) {
	ws := s.opt.Workloads
	if ws == nil || len(ws.lines) == 0 || ws.gates != nil && !ws.gates.any(b) {
		return
	}
	for _, w := range ws.lines {
		if w.Name == s.ev.Resembles {
			return
		}
		if w.matches(b) {
			s.ev.Resembles = w.Name
			return
		}
	}
}

// gateFilter tells whether a line holds one of the gates, in one pass over
// it: each gate is anchored at one pair of its bytes, chosen to be rare in
// text (punctuation before digits and capitals before lower case and
// spaces), and a position whose pair anchors no gate costs one load of a
// bit. Where a pair anchors a gate, the gate is compared there.
type gateFilter struct {
	pairs   [1 << 16 / 64]uint64 // a bit per pair of bytes that anchors some gate
	anchors map[uint16][]anchor
}

// anchor is a gate, anchored at the pair at offset at.
type anchor struct {
	gate []byte
	at   int
}

// newGateFilter is the filter of the gates; nil where one is shorter than
// a pair.
func newGateFilter(gates [][]byte) *gateFilter {
	f := &gateFilter{anchors: map[uint16][]anchor{}}
	for _, g := range gates {
		if len(g) < 2 {
			return nil
		}
		best := 0
		for i := range len(g) - 1 {
			if commonness(g[i])+commonness(g[i+1]) < commonness(g[best])+commonness(g[best+1]) {
				best = i
			}
		}
		k := uint16(g[best])<<8 | uint16(g[best+1])
		f.pairs[k>>6] |= 1 << (k & 63)
		f.anchors[k] = append(f.anchors[k], anchor{g, best})
	}
	return f
}

// commonness ranks a byte by how often text holds it: lower case and
// spaces most, then capitals and digits, then the rest.
func commonness(c byte) int {
	switch {
	case c >= 'a' && c <= 'z' || c == ' ':
		return 2
	case c >= 'A' && c <= 'Z' || c >= '0' && c <= '9':
		return 1
	}
	return 0
}

// any reports whether b holds one of the gates.
func (f *gateFilter) any(b []byte) bool {
	for i := 0; i+1 < len(b); i++ {
		k := uint16(b[i])<<8 | uint16(b[i+1])
		if f.pairs[k>>6]&(1<<(k&63)) == 0 {
			continue
		}
		for _, a := range f.anchors[k] {
			if start := i - a.at; start >= 0 && bytes.HasPrefix(b[start:], a.gate) {
				return true
			}
		}
	}
	return false
}
