package slurm

import (
	"bytes"
	"fmt"
	"os"
	"strings"
)

// directivePrefix must start a line exactly, as in sbatch: "  #SBATCH" and
// "# SBATCH" are comments.
const directivePrefix = "#SBATCH"

// LineKind classifies a line of a batch script the way sbatch reads it.
type LineKind uint8

const (
	LineBlank         LineKind = iota
	LineComment                // any line whose first non-blank character is '#'
	LineDirective              // "#SBATCH ..." before the first command
	LineCommand                // the first non-comment line and everything after it
	LineLateDirective          // "#SBATCH ..." after the first command: sbatch ignores it
)

// Line is one line of the script, with the byte range of its text in Script.Data.
type Line struct {
	Num        int      // 1-based
	Start, End int      // Data[Start:End] is the text, without "\r\n" or "\n"
	Next       int      // offset of the next line
	CR         bool     // the line ended in "\r\n"
	Kind       LineKind //
}

// Option is one option of an #SBATCH directive, as getopt_long would see it.
type Option struct {
	Line      int    // 1-based line number
	Name      string // canonical long name, e.g. "partition" for -p or --part
	Flag      string // as written: "-p", "--part", "--partition"
	Value     string // the value after quote removal; "" when none
	HasValue  bool
	Attached  bool // "-n4" or "--mem=4G" (not a separate word)
	Component int  // heterogeneous job component (0 unless "#SBATCH hetjob")
	Start     int  // Data[Start:End] covers the flag and its value words
	End       int  //
}

// Problem is something sbatch would reject or ignore, found while reading.
type Problem struct {
	Line    int
	Code    string
	Message string
	Fatal   bool // sbatch refuses the script
}

// Script is a batch script read exactly as sbatch reads it. Data is never
// modified: rewriting produces new bytes.
type Script struct {
	Path      string
	Data      []byte
	Lines     []Line
	Options   []Option // effective directive options, in order
	FirstCmd  int      // line number of the first command, 0 if none
	HetJob    bool
	Problems  []Problem
	component int // current heterogeneous-job component while parsing
	Resources Resources
}

// ReadScript reads and parses the batch script at path.
func ReadScript(path string) (*Script, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, fmt.Errorf("read batch script: %w", err)
	}
	return Parse(path, data), nil
}

// Parse reads data as sbatch would. It never fails: whatever sbatch would
// reject or ignore is recorded in Problems.
func Parse(path string, data []byte) *Script {
	s := &Script{Path: path, Data: data}
	s.splitLines()
	s.checkWhole()
	inHeader := true
	for i := range s.Lines {
		ln := &s.Lines[i]
		text := string(data[ln.Start:ln.End])
		isDirective := strings.HasPrefix(text, directivePrefix)
		switch {
		case isDirective && inHeader:
			ln.Kind = LineDirective
			s.parseDirective(ln, text)
		case isDirective:
			ln.Kind = LineLateDirective
		case strings.TrimSpace(text) == "":
			ln.Kind = LineBlank
		case strings.HasPrefix(strings.TrimLeft(text, " \t\v\f"), "#"):
			ln.Kind = LineComment
		default:
			ln.Kind = LineCommand
			if inHeader {
				inHeader = false
				s.FirstCmd = ln.Num
			}
		}
	}
	s.Resources = s.interpret()
	return s
}

func (s *Script) splitLines() {
	data := s.Data
	for start, num := 0, 1; start < len(data); num++ {
		end := bytes.IndexByte(data[start:], '\n')
		next := len(data)
		if end < 0 {
			end = len(data)
		} else {
			end += start
			next = end + 1
		}
		ln := Line{Num: num, Start: start, End: end, Next: next}
		if end > start && end < len(data) && data[end-1] == '\r' {
			ln.End--
			ln.CR = true
		}
		s.Lines = append(s.Lines, ln)
		start = next
	}
}

// checkWhole records what sbatch rejects about the file as a whole.
func (s *Script) checkWhole() {
	if len(bytes.TrimSpace(s.Data)) == 0 {
		s.problem(1, "empty-script", "the script is empty", true)
		return
	}
	if !bytes.HasPrefix(s.Data, []byte("#!")) {
		s.problem(1, "no-shebang", "the first line must start with #! and an interpreter (e.g. #!/bin/bash); sbatch refuses the script otherwise", true)
	}
	for _, ln := range s.Lines {
		if ln.CR {
			s.problem(ln.Num, "crlf", "the script has DOS line breaks (\\r\\n), which sbatch rejects; convert it with dos2unix", true)
			break
		}
	}
	if i := bytes.IndexByte(s.Data, 0); i >= 0 {
		s.problem(bytes.Count(s.Data[:i], []byte("\n"))+1, "nul-byte", "the script contains a NUL byte, which sbatch rejects", true)
	}
}

func (s *Script) problem(line int, code, msg string, fatal bool) {
	s.Problems = append(s.Problems, Problem{Line: line, Code: code, Message: msg, Fatal: fatal})
}

// word is one argument of a directive after sbatch's quote and escape handling.
type word struct {
	text       string
	start, end int // byte range in Script.Data
}

// splitWords splits the text after "#SBATCH" into words like sbatch's
// _get_argument: whitespace separates, '…' and "…" quote, a backslash escapes
// the next character, and an unquoted '#' starts a comment.
func splitWords(text string, base int) []word {
	var words []word
	i := 0
	for {
		for i < len(text) && isSpace(text[i]) {
			i++
		}
		if i >= len(text) || text[i] == '#' {
			return words
		}
		start := i
		var b strings.Builder
		var quote byte
		for i < len(text) && (quote != 0 || !isSpace(text[i])) {
			c := text[i]
			switch {
			case c == '\\' && i+1 < len(text):
				b.WriteByte(text[i+1])
				i += 2
				continue
			case quote != 0 && c == quote:
				quote = 0
			case quote == 0 && (c == '"' || c == '\''):
				quote = c
			case quote == 0 && c == '#':
				words = append(words, word{b.String(), base + start, base + i})
				return words
			default:
				b.WriteByte(c)
			}
			i++
		}
		words = append(words, word{b.String(), base + start, base + i})
	}
}

func isSpace(c byte) bool { return c == ' ' || c == '\t' || c == '\v' || c == '\f' || c == '\r' }

func (s *Script) parseDirective(ln *Line, text string) {
	words := splitWords(text[len(directivePrefix):], ln.Start+len(directivePrefix))
	for i := 0; i < len(words); i++ {
		w := words[i]
		component := s.component
		switch {
		case (w.text == "hetjob" || w.text == "packjob") && i == 0:
			s.HetJob = true
			s.component++
		case strings.HasPrefix(w.text, "--") && len(w.text) > 2:
			i += s.parseLong(ln.Num, component, words, i)
		case strings.HasPrefix(w.text, "-") && len(w.text) > 1 && w.text != "--":
			i += s.parseShort(ln.Num, component, words, i)
		default:
			s.problem(ln.Num, "invalid-directive",
				fmt.Sprintf("%q is not an option; sbatch stops with \"Invalid directive found in batch script\"", w.text), true)
		}
	}
}

// parseLong handles words[i], a "--name[=value]" word, and returns how many
// following words it consumed.
func (s *Script) parseLong(line, component int, words []word, i int) int {
	w := words[i]
	name, value, hasEq := strings.Cut(w.text[2:], "=")
	spec, ambiguous := lookupLong(name)
	if spec == nil {
		msg := fmt.Sprintf("--%s is not an sbatch option", name)
		if len(ambiguous) > 1 {
			msg = fmt.Sprintf("--%s is ambiguous (%s)", name, strings.Join(ambiguous, ", "))
		}
		s.problem(line, "unknown-option", msg, true)
		return 0
	}
	opt := Option{Line: line, Name: spec.long, Flag: "--" + name, Component: component, Start: w.start, End: w.end}
	switch {
	case hasEq && spec.arg == argNone:
		s.problem(line, "bad-value", fmt.Sprintf("--%s takes no value", spec.long), true)
		return 0
	case hasEq:
		opt.Value, opt.HasValue, opt.Attached = value, true, true
	case spec.arg == argRequired:
		if i+1 >= len(words) {
			s.problem(line, "missing-value", fmt.Sprintf("--%s needs a value", spec.long), true)
			return 0
		}
		opt.Value, opt.HasValue, opt.End = words[i+1].text, true, words[i+1].end
		s.Options = append(s.Options, opt)
		return 1
	}
	s.Options = append(s.Options, opt)
	return 0
}

// parseShort handles a cluster of short options such as "-N1", "-p gpu" or "-Hv".
func (s *Script) parseShort(line, component int, words []word, i int) int {
	w := words[i]
	for j := 1; j < len(w.text); j++ {
		spec, ok := optionByShort[w.text[j]]
		if !ok {
			s.problem(line, "unknown-option", fmt.Sprintf("-%c is not an sbatch option", w.text[j]), true)
			return 0
		}
		opt := Option{Line: line, Name: spec.long, Flag: "-" + string(w.text[j]), Component: component, Start: w.start, End: w.end}
		rest := w.text[j+1:]
		switch {
		case spec.arg == argNone:
			s.Options = append(s.Options, opt)
			continue
		case rest != "":
			opt.Value, opt.HasValue, opt.Attached = rest, true, true
		case spec.arg == argRequired:
			if i+1 >= len(words) {
				s.problem(line, "missing-value", fmt.Sprintf("-%c (--%s) needs a value", spec.short, spec.long), true)
				return 0
			}
			opt.Value, opt.HasValue, opt.End = words[i+1].text, true, words[i+1].end
			s.Options = append(s.Options, opt)
			return 1
		}
		s.Options = append(s.Options, opt)
		return 0
	}
	return 0
}

// LastOption returns the last directive option with the given long name (the
// one sbatch honours), or nil.
func (s *Script) LastOption(name string) *Option {
	for i := len(s.Options) - 1; i >= 0; i-- {
		if s.Options[i].Name == name && s.Options[i].Component == 0 {
			return &s.Options[i]
		}
	}
	return nil
}

// LateDirectives returns the line numbers of #SBATCH lines after the first
// command, which sbatch ignores.
func (s *Script) LateDirectives() []int {
	var lines []int
	for _, ln := range s.Lines {
		if ln.Kind == LineLateDirective {
			lines = append(lines, ln.Num)
		}
	}
	return lines
}

// LineText returns the text of line n (1-based) without its line break.
func (s *Script) LineText(n int) string {
	if n < 1 || n > len(s.Lines) {
		return ""
	}
	ln := s.Lines[n-1]
	return string(s.Data[ln.Start:ln.End])
}
