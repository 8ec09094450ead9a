package slurm

import (
	"fmt"
	"path/filepath"
	"strings"
)

// posixShells can run the wrapper block, which is POSIX sh.
var posixShells = map[string]bool{"sh": true, "bash": true, "dash": true, "ksh": true, "mksh": true, "zsh": true, "ash": true}

// Interpreter is a script's #! line as the kernel reads it: the program and
// at most one argument (everything after the program, as one word).
type Interpreter struct {
	Program string
	Arg     string
}

// ReadInterpreter reads the #! line of data.
func ReadInterpreter(data []byte) (Interpreter, bool) {
	line, _, _ := strings.Cut(string(data), "\n")
	line = strings.TrimSuffix(line, "\r")
	if !strings.HasPrefix(line, "#!") {
		return Interpreter{}, false
	}
	line = strings.TrimSpace(line[2:])
	prog, arg := line, ""
	if i := strings.IndexAny(line, " \t"); i >= 0 {
		prog, arg = line[:i], strings.TrimSpace(line[i+1:])
	}
	return Interpreter{Program: prog, Arg: arg}, prog != ""
}

// Shell is the shell the interpreter runs ("bash" for /usr/bin/env bash),
// or "" when it is not a POSIX shell.
func (in Interpreter) Shell() string {
	name := filepath.Base(in.Program)
	if name == "env" {
		words := strings.Fields(in.Arg)
		for len(words) > 0 && strings.HasPrefix(words[0], "-") {
			words = words[1:] // env -S, env -i
		}
		if len(words) == 0 {
			return ""
		}
		name = filepath.Base(words[0])
	}
	if posixShells[name] {
		return name
	}
	return ""
}

// MonitorWrap makes a script run its own body under 'migadvisor monitor':
// a block before the first command re-executes the script, with the same
// interpreter and arguments, under the monitor. Every line of the block ends
// in AutoMarker, so the fingerprint ignores it, and the user's lines are not
// touched. When the monitor is not there at run time, the job runs as it
// would have without the block; the monitor sets MIGADVISOR_MONITORED, so the
// re-executed script does not wrap itself again.
type MonitorWrap struct {
	// Binary is the migadvisor to run; the lean migadvisor-monitor beside it
	// is tried first, then both names on PATH. "" for PATH only.
	Binary string
}

// MonitoredEnv is set by the monitor in its command's environment, so that
// a script that reruns itself under the monitor does it once.
const MonitoredEnv = "MIGADVISOR_MONITORED"

// LeanMonitor is the monitor-only binary, a third of migadvisor's memory.
const LeanMonitor = "migadvisor-monitor"

// Wrap returns data with the block added, or why it cannot be.
func (m MonitorWrap) Wrap(path string, data []byte) ([]byte, error) {
	in, ok := ReadInterpreter(data)
	if !ok {
		return nil, fmt.Errorf("%s has no #! line", path)
	}
	if in.Shell() == "" {
		return nil, fmt.Errorf("%s runs under %s, not a POSIX shell: the monitor wrapper is shell code", path, in.Program)
	}
	s := Parse(path, data)
	if s.FirstCmd == 0 {
		return nil, fmt.Errorf("%s has no command to monitor", path)
	}
	at := s.Lines[s.FirstCmd-1].Start
	nl := "\n"
	if s.Lines[s.FirstCmd-1].CR {
		nl = "\r\n"
	}
	block := m.block(in, nl)
	out := make([]byte, 0, len(data)+len(block))
	out = append(out, data[:at]...)
	out = append(out, block...)
	return append(out, data[at:]...), nil
}

func (m MonitorWrap) block(in Interpreter, nl string) string {
	rerun := ShellQuote(in.Program)
	if in.Arg != "" {
		rerun += " " + ShellQuote(in.Arg)
	}
	candidates := `"$(command -v ` + LeanMonitor + ` 2>/dev/null)" "$(command -v migadvisor 2>/dev/null)"`
	if m.Binary != "" {
		lean := filepath.Join(filepath.Dir(m.Binary), LeanMonitor)
		candidates = ShellQuote(lean) + " " + ShellQuote(m.Binary) + " " + candidates
	}
	lines := []string{
		"# Rerun this job under the GPU memory monitor (added by migadvisor sweep; --no-monitor leaves it out).",
		`if [ -z "${` + MonitoredEnv + `:-}" ]; then`,
		"    for _migadvisor in " + candidates + "; do",
		`        if [ -n "$_migadvisor" ] && [ -x "$_migadvisor" ]; then exec "$_migadvisor" monitor -- ` + rerun + ` "$0" "$@"; fi`,
		"    done",
		"    unset _migadvisor",
		"fi",
	}
	var b strings.Builder
	for _, l := range lines {
		b.WriteString(l + "  " + AutoMarker + nl)
	}
	return b.String()
}

// ShellQuote quotes s as one word for a POSIX shell: single quotes, with
// each ' written as '\”.
func ShellQuote(s string) string {
	return "'" + strings.ReplaceAll(s, "'", `'\''`) + "'"
}

// ShellWord is s as one shell word for a command shown to a user: as it is
// when no character in it is special to the shell, else ShellQuote(s).
func ShellWord(s string) string {
	if s == "" || strings.ContainsFunc(s, func(r rune) bool {
		return !(r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9' || strings.ContainsRune("-_./:=+,@%", r))
	}) {
		return ShellQuote(s)
	}
	return s
}
