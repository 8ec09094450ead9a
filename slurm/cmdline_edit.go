package slurm

import (
	"fmt"
	"slices"
)

// Setting is one option of a changed command line, as the user would type it.
type Setting struct {
	Name  string // long name: "gres", "partition", "time"
	Value string
	Was   string // the value in effect before (from any source), "" if none
}

func (s Setting) String() string { return "--" + s.Name + "=" + s.Value }

// Before is the option as it was in effect, "(none)" when it was not set.
func (s Setting) Before() string {
	if s.Was == "" {
		return "(no --" + s.Name + ")"
	}
	return "--" + s.Name + "=" + s.Was
}

// WithSettings returns the arguments with each setting applied: the last
// occurrence of the option on the command line takes the new value in place
// (both words of "-p gpu" become "--partition=new"), else "--name=value" is
// inserted just before the script, where it overrides the environment and
// the script's #SBATCH lines. Everything else keeps its place and bytes.
func (c *CommandLine) WithSettings(settings []Setting) []string {
	args := slices.Clone(c.Args)
	var inserts []string
	replaced := map[int]bool{}
	for _, s := range settings {
		if o := lastOption(c.Options, s.Name); o != nil {
			last := o.Start + 1
			if !o.Attached && o.HasValue {
				last++ // the value word
			}
			args[o.Start] = s.String()
			for i := o.Start + 1; i < last; i++ {
				replaced[i] = true
			}
			continue
		}
		inserts = append(inserts, s.String())
	}
	var out []string
	for i, a := range args {
		if i == c.insertAt() {
			out = append(out, inserts...)
		}
		if !replaced[i] {
			out = append(out, a)
		}
	}
	if c.insertAt() == len(args) {
		out = append(out, inserts...)
	}
	return out
}

// insertAt is where new options go: before the script (or the "--" that
// precedes it), else after the last option.
func (c *CommandLine) insertAt() int {
	if c.ScriptIndex < 0 {
		return len(c.Args)
	}
	if c.ScriptIndex > 0 && c.Args[c.ScriptIndex-1] == "--" {
		return c.ScriptIndex - 1
	}
	return c.ScriptIndex
}

// Effective is the value an option has for sbatch: the command line's last,
// else its SBATCH_* environment variable, else the script's last #SBATCH
// line (of the first component).
func (c *CommandLine) Effective(name string, script *Script, env []string) (string, bool) {
	if o := lastOption(c.Options, name); o != nil {
		return o.Value, true
	}
	if o := lastOption(envOptions(env), name); o != nil {
		return o.Value, true
	}
	if script != nil {
		for i := len(script.Options) - 1; i >= 0; i-- {
			if o := script.Options[i]; o.Name == name && o.Component == 0 {
				return o.Value, true
			}
		}
	}
	return "", false
}

// GPUSetting is the setting that makes the job ask for the GPU request req
// (one option, like a site profile's "--gres=gpu:a100_20g:1") instead of
// the one GPU request in effect, written with the same option so that it
// overrides that one: other GRES in a --gres list are kept. res is what the
// job asks for, c.Resources(script, env), as the caller computed it once
// for the submission.
func (c *CommandLine) GPUSetting(res Resources, script *Script, env []string, req string) (Setting, error) {
	want, err := ParseGPURequest(req)
	if err != nil {
		return Setting{}, err
	}
	gpus := res.GPUs
	if len(gpus) != 1 {
		return Setting{}, fmt.Errorf("the job asks for %d kinds of GPU, not one", len(gpus))
	}
	name := gpus[0].Option
	was, _ := c.Effective(name, script, env)
	s := Setting{Name: name, Was: was}
	if name == OptGres {
		s.Value, _ = gresWithGPU(was, Option{Name: OptGres, Value: fmt.Sprintf("gpu:%s:%d", want.Type, want.Count)})
	} else {
		s.Value = fmt.Sprintf("%s:%d", want.Type, want.Count)
	}
	return s, nil
}
