package slurm

import (
	"reflect"
	"testing"
)

func TestParseCommandLineFindsTheScript(t *testing.T) {
	cases := []struct {
		args   []string
		script string
		wrap   string
		opts   []string
	}{
		{[]string{"job.sh"}, "job.sh", "", nil},
		{[]string{"-p", "gpu", "--gres=gpu:a100_10g:1", "job.sh", "--epochs", "3"}, "job.sh", "", []string{"partition", "gres"}},
		{[]string{"--export=ALL,X=1 2", "-N1", "--time", "1:00", "my job.sh"}, "my job.sh", "", []string{"export", "nodes", "time"}},
		{[]string{"--parsable", "--test-only", "--", "-odd-name.sh", "a"}, "-odd-name.sh", "", []string{"parsable", "test-only"}},
		{[]string{"--wrap", "python train.py --lr 1e-3", "-c", "4"}, "", "python train.py --lr 1e-3", []string{"wrap", "cpus-per-task"}},
		{[]string{"--parsable"}, "", "", []string{"parsable"}}, // the script on stdin
		{[]string{"--exclusive=user", "-Hv", "job.sh"}, "job.sh", "", []string{"exclusive", "hold", "verbose"}},
		{[]string{"--part=gpu", "job.sh"}, "job.sh", "", []string{"partition"}}, // a unique prefix
	}
	for _, c := range cases {
		cl := ParseCommandLine(c.args)
		var names []string
		for _, o := range cl.Options {
			names = append(names, o.Name)
		}
		if cl.Script() != c.script || cl.Wrap != c.wrap || !reflect.DeepEqual(names, c.opts) || len(cl.Problems) != 0 {
			t.Errorf("%q: script %q wrap %q options %v problems %v", c.args, cl.Script(), cl.Wrap, names, cl.Problems)
		}
	}
}

func TestParseCommandLineKeepsGoingPastUnknownOptions(t *testing.T) {
	cl := ParseCommandLine([]string{"--frobnicate", "job.sh", "x"})
	if cl.Script() != "job.sh" || len(cl.Problems) != 1 || cl.Problems[0].Code != "unknown-option" {
		t.Errorf("script %q problems %v", cl.Script(), cl.Problems)
	}
	if cl := ParseCommandLine([]string{"--wrap=true", "job.sh"}); len(cl.Problems) != 1 || cl.Problems[0].Code != "wrap-and-script" {
		t.Errorf("--wrap with a script: %v", cl.Problems)
	}
}

func TestCommandLineResourcesPrecedence(t *testing.T) {
	script := Parse("job.sh", []byte("#!/bin/bash\n#SBATCH --gres=gpu:a100:1\n#SBATCH -p gpu\n#SBATCH -t 2:00:00\n#SBATCH --mem=8G\ntrue\n"))
	env := []string{"SBATCH_PARTITION=debug_gpu", "SBATCH_TIMELIMIT=30", "HOME=/home/x", "SBATCH_MEM_PER_NODE=garbage"}
	cl := ParseCommandLine([]string{"--gres=gpu:a100_20g:1", "-t", "45", "job.sh"})
	r := cl.Resources(script, env)
	if r.Partition != "debug_gpu" || r.Time.Duration.Minutes() != 45 || len(r.GPUs) != 1 || r.GPUs[0].Type != "a100_20g" || r.MemMiB != 8192 {
		t.Errorf("resources %+v", r)
	}
	// The script's own Resources are untouched.
	if script.Resources.Partition != "gpu" || script.Resources.GPUs[0].Type != "a100" {
		t.Errorf("the script changed: %+v", script.Resources)
	}
	// Without the command-line --gres the script's stands.
	if r := ParseCommandLine([]string{"job.sh"}).Resources(script, nil); r.GPUs[0].Type != "a100" || r.MemMiB != 8192 {
		t.Errorf("script only: %+v", r)
	}
}
