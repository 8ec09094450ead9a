package slurm

import (
	"fmt"
	"slices"
	"strings"
)

// CommandLine is an sbatch command line as sbatch reads it: its options (in
// order), the batch script and the script's own arguments. Nothing in it is
// ever rewritten: a wrapper passes the original argv on.
type CommandLine struct {
	Args        []string
	Options     []Option // Option.Start is the index in Args of the option's first word
	ScriptIndex int      // index in Args of the script; -1 when the script comes from --wrap or stdin
	Wrap        string   // --wrap's command, "" if none
	Problems    []Problem
}

// Script is the batch script's path, or "" when it comes from --wrap or stdin.
func (c *CommandLine) Script() string {
	if c.ScriptIndex < 0 {
		return ""
	}
	return c.Args[c.ScriptIndex]
}

// Has reports whether an option (by long name) is on the command line.
func (c *CommandLine) Has(name string) bool {
	for _, o := range c.Options {
		if o.Name == name {
			return true
		}
	}
	return false
}

// ParseCommandLine reads sbatch's arguments (without the program name) with
// getopt_long's rules, as sbatch does: options until the first word that is
// not one (or "--"); that word is the script, the rest its arguments. An
// unknown option is a Problem and is taken to have no value, as sbatch would
// stop there anyway.
func ParseCommandLine(args []string) *CommandLine {
	c := &CommandLine{Args: args, ScriptIndex: -1}
	words := make([]word, len(args))
	for i, a := range args {
		words[i] = word{text: a, start: i, end: i + 1}
	}
	s := &Script{}
	for i := 0; i < len(words); i++ {
		w := words[i].text
		switch {
		case w == "--":
			if i+1 < len(words) {
				c.ScriptIndex = i + 1
			}
			i = len(words)
		case strings.HasPrefix(w, "--") && len(w) > 2:
			i += s.parseLong(0, 0, words, i)
		case strings.HasPrefix(w, "-") && len(w) > 1:
			i += s.parseShort(0, 0, words, i)
		default:
			c.ScriptIndex = i
			i = len(words)
		}
	}
	c.Options, c.Problems = s.Options, s.Problems
	if o := lastOption(c.Options, "wrap"); o != nil {
		c.Wrap = o.Value
		if c.ScriptIndex >= 0 {
			c.Problems = append(c.Problems, Problem{Code: "wrap-and-script", Fatal: true,
				Message: fmt.Sprintf("--wrap and a script (%s) together: sbatch refuses both", c.Script())})
		}
	}
	return c
}

func lastOption(opts []Option, name string) *Option {
	for i := len(opts) - 1; i >= 0; i-- {
		if opts[i].Name == name {
			return &opts[i]
		}
	}
	return nil
}

// Resources are what the job asks for with sbatch's precedence: the command
// line over SBATCH_* environment variables over the script's #SBATCH lines.
// env is the environment as "NAME=value" strings; script may be nil.
func (c *CommandLine) Resources(script *Script, env []string) Resources {
	var r Resources
	if script != nil {
		r = script.Resources
		r.GPUs = append([]GPURequest(nil), r.GPUs...)
	}
	// Indices order the sources for effectiveGPUs: the script's options
	// come first, then the environment's, then the command line's.
	const envBase, argBase = 1 << 20, 2 << 20
	// A value sbatch would reject leaves what was there (sbatch stops anyway).
	set := func(o Option, index int) {
		next := r
		if next.apply(o, index) == nil {
			r = next
		}
	}
	for i, o := range envOptions(env) {
		set(o, envBase+i)
	}
	for i, o := range c.Options {
		set(o, argBase+i)
	}
	r.GPUs = effectiveGPUs(r.GPUs)
	return r
}

// envOptions are the SBATCH_* input environment variables that set resources
// (sbatch's man page, "INPUT ENVIRONMENT VARIABLES"), as options.
func envOptions(env []string) []Option {
	var opts []Option
	for _, kv := range env {
		name, value, ok := strings.Cut(kv, "=")
		if !ok || !strings.HasPrefix(name, "SBATCH_") {
			continue
		}
		if long, ok := sbatchEnv[name]; ok {
			opts = append(opts, Option{Name: long, Flag: name, Value: value, HasValue: true})
		}
	}
	return opts
}

// sbatchEnv maps the resource-related SBATCH_* variables to their options.
var sbatchEnv = map[string]string{
	"SBATCH_PARTITION": "partition", "SBATCH_QOS": "qos", "SBATCH_ACCOUNT": "account",
	"SBATCH_TIMELIMIT": "time", "SBATCH_GRES": "gres", "SBATCH_GPUS": "gpus",
	"SBATCH_GPUS_PER_NODE": "gpus-per-node", "SBATCH_GPUS_PER_TASK": "gpus-per-task",
	"SBATCH_CPUS_PER_GPU": "cpus-per-gpu", "SBATCH_MEM_PER_CPU": "mem-per-cpu",
	"SBATCH_MEM_PER_GPU": "mem-per-gpu", "SBATCH_MEM_PER_NODE": "mem", "SBATCH_EXCLUSIVE": "exclusive",
	"SBATCH_JOB_NAME": "job-name",
}

// WithoutUnknownOption is the command line without Args[i], an option
// sbatch does not know that stands alone as its own word (a wrapper's own
// flag, like "--mig-apply"), as ParseCommandLine reads the arguments
// without it, and true; false where Args[i] is no such option (the
// script, after it, a known option or an option's value). An unknown
// option takes no value and changes nothing of how the words around it
// are read: removing it shifts the later words, and drops its problem.
func (c *CommandLine) WithoutUnknownOption(i int) (*CommandLine, bool) {
	if i < 0 || i >= len(c.Args) || (c.ScriptIndex >= 0 && i >= c.ScriptIndex) {
		return nil, false
	}
	w := c.Args[i]
	if !strings.HasPrefix(w, "--") || len(w) <= 2 || strings.Contains(w, "=") {
		return nil, false
	}
	inOption := func(j int) bool {
		for _, o := range c.Options {
			if o.Start <= j && j < o.End {
				return true // the option itself, or its value word
			}
		}
		return false
	}
	if inOption(i) {
		return nil, false
	}
	if spec, _ := lookupLong(w[2:]); spec != nil {
		return nil, false
	}
	// Its problem: the one after those of the same name that the options
	// before it made ("--flag" and "--flag=value" are said alike).
	before := 0
	for j := 0; j < i; j++ {
		if (c.Args[j] == w || strings.HasPrefix(c.Args[j], w+"=")) && !inOption(j) {
			before++
		}
	}
	problem := -1
	for k, p := range c.Problems {
		if p.Code == "unknown-option" && strings.HasPrefix(p.Message, w+" is ") {
			if before == 0 {
				problem = k
				break
			}
			before--
		}
	}
	if problem < 0 {
		return nil, false
	}
	out := &CommandLine{Args: append(c.Args[:i:i], c.Args[i+1:]...), ScriptIndex: c.ScriptIndex, Wrap: c.Wrap,
		Options: slices.Clone(c.Options)}
	if len(c.Problems) > 1 { // none left is none, as a parse finds it
		out.Problems = append(c.Problems[:problem:problem], c.Problems[problem+1:]...)
	}
	for k := range out.Options {
		if o := &out.Options[k]; o.Start > i {
			o.Start, o.End = o.Start-1, o.End-1
		}
	}
	if out.ScriptIndex > i {
		out.ScriptIndex--
	}
	return out, true
}
