package slurm

import (
	"strings"

	"github.com/migadvisor/migadvisor/internal/lazyre"
)

// Command is a simple command of a batch script: its words, quotes
// removed, and the line it starts on.
type Command struct {
	Words []string
	Line  int
}

// Commands splits the script's commands (from the first command on, lines
// joined where they end in a backslash) into simple commands at ;, &&, ||,
// | and &, without comments and lines migadvisor added (AutoMarker).
func (s *Script) Commands() []Command {
	var out []Command
	var text strings.Builder
	start := 0
	for _, ln := range s.Lines {
		if ln.Kind != LineCommand || ln.Num < s.FirstCmd {
			continue
		}
		t := s.LineText(ln.Num)
		if strings.HasSuffix(strings.TrimSpace(t), AutoMarker) {
			continue
		}
		if text.Len() == 0 {
			start = ln.Num
		}
		if strings.HasSuffix(t, "\\") && !strings.HasSuffix(t, "\\\\") {
			text.WriteString(strings.TrimSuffix(t, "\\") + " ")
			continue
		}
		text.WriteString(t)
		for _, words := range SplitShell(text.String()) {
			out = append(out, Command{Words: words, Line: start})
		}
		text.Reset()
	}
	return out
}

// SplitShell splits a line into simple commands of words, as a shell would
// for what matters to reading a batch script: quotes, backslashes, comments
// and the list operators. Expansions are kept as written.
func SplitShell(text string) [][]string {
	var cmds [][]string
	var words []string
	var w strings.Builder
	inWord := false
	endWord := func() {
		if inWord {
			words = append(words, w.String())
			w.Reset()
			inWord = false
		}
	}
	endCommand := func() {
		endWord()
		if len(words) > 0 {
			cmds = append(cmds, words)
			words = nil
		}
	}
	var quote byte
	for i := 0; i < len(text); i++ {
		c := text[i]
		switch {
		case quote != 0:
			if c == quote {
				quote = 0
			} else if c == '\\' && quote == '"' && i+1 < len(text) {
				i++
				w.WriteByte(text[i])
			} else {
				w.WriteByte(c)
			}
		case c == '\'' || c == '"':
			quote, inWord = c, true
		case c == '\\' && i+1 < len(text):
			i++
			w.WriteByte(text[i])
			inWord = true
		case c == '#' && !inWord:
			endCommand()
			return cmds
		case c == ' ' || c == '\t':
			endWord()
		case c == ';' || c == '&' || c == '|' || c == '(' || c == ')':
			endCommand()
		default:
			w.WriteByte(c)
			inWord = true
		}
	}
	endCommand()
	return cmds
}

// printOnly are commands whose words are text, not a launch.
var printOnly = map[string]bool{"echo": true, "printf": true, "cat": true, ":": true, "true": true, "false": true,
	"test": true, "[": true, "[[": true, "logger": true, "read": true, "pip": true, "pip3": true, "conda": true,
	"module": true, "ml": true, "which": true, "type": true, "unset": true, "local": true, "declare": true}

// PrintOnly reports whether a command's words are text, not a launch
// (echo, printf, cat, test, module, pip, …): what follows it runs nothing.
func PrintOnly(command string) bool { return printOnly[command] }

// prefixes come before the command they run.
var prefixes = map[string]bool{"then": true, "do": true, "else": true, "elif": true, "if": true, "while": true,
	"until": true, "!": true, "{": true, "}": true, "time": true, "exec": true, "nohup": true, "command": true, "env": true}

// CommandPrefix reports whether a word comes before the command it runs
// (then, if, time, exec, nohup, env, …), so that the command is the word
// after it.
func CommandPrefix(word string) bool { return prefixes[word] }

var reAssignment = lazyre.New(`^([A-Za-z_][A-Za-z0-9_]*)=(.*)$`)

// Assignment reads a word that sets a shell variable (NAME=value): the
// name and the value as written.
func Assignment(word string) (name, value string, ok bool) {
	m := reAssignment.FindStringSubmatch(word)
	if m == nil {
		return "", "", false
	}
	return m[1], m[2], true
}
