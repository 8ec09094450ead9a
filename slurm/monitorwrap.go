package slurm

import (
	"fmt"
	"path/filepath"
	"slices"
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
	return wrapBody(path, data, func(in Interpreter) []string {
		candidates := `"$(command -v ` + LeanMonitor + ` 2>/dev/null)" "$(command -v migadvisor 2>/dev/null)"`
		if m.Binary != "" {
			lean := filepath.Join(filepath.Dir(m.Binary), LeanMonitor)
			candidates = ShellQuote(lean) + " " + ShellQuote(m.Binary) + " " + candidates
		}
		return rerunUnder("Rerun this job under the GPU memory monitor (added by migadvisor sweep; --no-monitor leaves it out).",
			MonitoredEnv, candidates, "monitor --", in, "")
	})
}

// EmulateWrap makes a script run its own body once per MIG profile on the
// whole GPU it gets, under 'migadvisor emulate', the same way: a block
// before the first command re-executes the script under it, once (emulate
// sets EmulatedProfileEnv in each run). Without migadvisor at run time the
// job runs once, as it is.
type EmulateWrap struct {
	Binary   string   // the migadvisor to run ("": migadvisor on PATH)
	Site     string   // --site for emulate ("": the job's own lookup)
	Profiles []string // the profiles to emulate ("": the site's)
	Budget   string   // --budget for each run ("": none)
}

// EmulatedProfileEnv names the profile an emulated run stands for; emulate
// sets it in each run's environment.
const EmulatedProfileEnv = "MIGADVISOR_EMULATED_PROFILE"

// Wrap returns data with the block added, or why it cannot be.
func (e EmulateWrap) Wrap(path string, data []byte) ([]byte, error) {
	return wrapBody(path, data, func(in Interpreter) []string {
		candidates := `"$(command -v migadvisor 2>/dev/null)"`
		if e.Binary != "" {
			candidates = ShellQuote(e.Binary) + " " + candidates
		}
		args := "emulate"
		if e.Site != "" {
			args = "--site " + ShellQuote(e.Site) + " " + args
		}
		if len(e.Profiles) > 0 {
			args += " --profiles " + ShellQuote(strings.Join(e.Profiles, ","))
		}
		if e.Budget != "" {
			args += " --budget " + ShellQuote(e.Budget)
		}
		block := rerunUnder("Run this job once per MIG profile on this whole GPU, under CUDA MPS limits (added by migadvisor sweep --emulate).",
			EmulatedProfileEnv, candidates, args+" --", in, `"$_migadvisor" emulate --help >/dev/null 2>&1`)
		// The job goes on as it is (it never fails for want of migadvisor),
		// and its output says why it was not emulated.
		return slices.Insert(block, len(block)-1, "    "+EmulationSkipped)
	})
}

// EmulationSkipped is the line an emulation job prints, on stderr, where
// no migadvisor that emulates is found on its node: it then runs once, on
// the whole GPU.
const EmulationSkipped = `echo "migadvisor: no migadvisor with emulate on this node (PATH or the sweep's binary): the job runs once, not emulated" >&2`

// wrapBody puts the lines block gives, each marked AutoMarker, before the
// script's first command.
func wrapBody(path string, data []byte, block func(Interpreter) []string) ([]byte, error) {
	in, ok := ReadInterpreter(data)
	if !ok {
		return nil, fmt.Errorf("%s has no #! line", path)
	}
	if in.Shell() == "" {
		return nil, fmt.Errorf("%s runs under %s, not a POSIX shell: the wrapper is shell code", path, in.Program)
	}
	s := Parse(path, data)
	if s.FirstCmd == 0 {
		return nil, fmt.Errorf("%s has no command to run", path)
	}
	at := s.Lines[s.FirstCmd-1].Start
	nl := "\n"
	if s.Lines[s.FirstCmd-1].CR {
		nl = "\r\n"
	}
	var b strings.Builder
	for _, l := range block(in) {
		b.WriteString(l + "  " + AutoMarker + nl)
	}
	out := make([]byte, 0, len(data)+b.Len())
	out = append(out, data[:at]...)
	out = append(out, b.String()...)
	return append(out, data[at:]...), nil
}

// rerunUnder is the block that re-executes the script, with its
// interpreter and arguments, as "PROGRAM ARGS interpreter $0 $@" with the
// first program of candidates that exists (and passes check, when given),
// unless guard is set (the program sets it in the script's environment, so
// this happens once).
func rerunUnder(comment, guard, candidates, args string, in Interpreter, check string) []string {
	rerun := ShellQuote(in.Program)
	if in.Arg != "" {
		rerun += " " + ShellQuote(in.Arg)
	}
	usable := `[ -n "$_migadvisor" ] && [ -x "$_migadvisor" ]`
	if check != "" { // a program too old for args is passed over: the job runs as it is
		usable += " && " + check
	}
	return []string{
		"# " + comment,
		`if [ -z "${` + guard + `:-}" ]; then`,
		"    for _migadvisor in " + candidates + "; do",
		`        if ` + usable + `; then exec "$_migadvisor" ` + args + " " + rerun + ` "$0" "$@"; fi`,
		"    done",
		"    unset _migadvisor",
		"fi",
	}
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

// NoPreallocation are the settings that make the frameworks that hold more
// GPU memory than they use allocate what they use, so that a job's peak is
// its need: JAX neither preallocates nor pools (its platform allocator),
// TensorFlow grows its pool as it needs rather than mapping the device.
// PyTorch keeps its cache (turning it off slows every allocation): its
// need is its own allocated peak, which a job prints (peak_allocated_mib).
var NoPreallocation = [][2]string{
	{"XLA_PYTHON_CLIENT_PREALLOCATE", "false"},
	{"XLA_PYTHON_CLIENT_ALLOCATOR", "platform"},
	{"TF_FORCE_GPU_ALLOW_GROWTH", "true"},
}

// SettingLinePrefix starts the line a job prints for a setting it ran
// with: MIGADVISOR_SETTING NAME VALUE.
const SettingLinePrefix = "MIGADVISOR_SETTING"

// WithoutPreallocation returns data with a block before its first command
// that exports NoPreallocation and prints each as a MIGADVISOR_SETTING
// line, so the run's record says what it ran with. Its lines end in
// AutoMarker: the fingerprint is the script's.
func WithoutPreallocation(path string, data []byte) ([]byte, error) {
	return wrapBody(path, data, func(Interpreter) []string {
		lines := []string{"# Frameworks allocate what they use here, so the GPU peak is the need (migadvisor --no-prealloc)."}
		for _, kv := range NoPreallocation {
			lines = append(lines, "export "+kv[0]+"="+kv[1], "echo "+ShellQuote(SettingLinePrefix+" "+kv[0]+" "+kv[1]))
		}
		return lines
	})
}

// IsSweepVariant reports whether a script is a probe's or a sweep's
// variant: it carries a block a sweep adds (lines ending in AutoMarker
// that rerun it under the monitor or emulate, or set its --no-prealloc
// settings), which no script of a user's own has.
func IsSweepVariant(data []byte) bool {
	for _, line := range strings.Split(string(data), "\n") {
		line = strings.TrimRight(line, " \t\r")
		if strings.HasSuffix(line, AutoMarker) &&
			(strings.Contains(line, MonitoredEnv) || strings.Contains(line, EmulatedProfileEnv) || strings.Contains(line, SettingLinePrefix)) {
			return true
		}
	}
	return false
}
