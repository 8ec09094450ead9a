package slurm

import (
	"fmt"
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
