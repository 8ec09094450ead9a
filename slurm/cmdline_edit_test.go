package slurm

import (
	"reflect"
	"testing"
)

func TestWithSettingsReplacesInPlaceOrInsertsBeforeTheScript(t *testing.T) {
	cases := []struct {
		args     []string
		settings []Setting
		want     []string
	}{
		// Replaced in place, both words of a two-word option; nothing else moves.
		{[]string{"-p", "gpu", "--export=ALL,X=1 2", "job.sh", "--lr", "1e-3"},
			[]Setting{{Name: "partition", Value: "debug_gpu"}},
			[]string{"--partition=debug_gpu", "--export=ALL,X=1 2", "job.sh", "--lr", "1e-3"}},
		// Inserted before the script; the script's own arguments are not options.
		{[]string{"--parsable", "my job.sh", "--gres=x"},
			[]Setting{{Name: "gres", Value: "gpu:a100_20g:1"}, {Name: "time", Value: "1:00:00"}},
			[]string{"--parsable", "--gres=gpu:a100_20g:1", "--time=1:00:00", "my job.sh", "--gres=x"}},
		// Before the "--" that protects an odd script name.
		{[]string{"--", "-odd.sh"}, []Setting{{Name: "gres", Value: "gpu:a100_10g:1"}},
			[]string{"--gres=gpu:a100_10g:1", "--", "-odd.sh"}},
		// The last of repeated options is the one in effect.
		{[]string{"--gres=gpu:a100:1", "--gres", "gpu:a100:1", "job.sh"}, []Setting{{Name: "gres", Value: "gpu:a100_10g:1"}},
			[]string{"--gres=gpu:a100:1", "--gres=gpu:a100_10g:1", "job.sh"}},
	}
	for _, c := range cases {
		orig := append([]string(nil), c.args...)
		got := ParseCommandLine(c.args).WithSettings(c.settings)
		if !reflect.DeepEqual(got, c.want) {
			t.Errorf("%q: got %q, want %q", c.args, got, c.want)
		}
		if !reflect.DeepEqual(c.args, orig) {
			t.Errorf("the original arguments changed: %q", c.args)
		}
	}
}

func TestGPUSettingOverridesTheRequestInEffect(t *testing.T) {
	gres := Parse("job.sh", []byte("#!/bin/bash\n#SBATCH --gres=gpu:a100:1,tmpfs:10G\ntrue\n"))
	gpus := Parse("job.sh", []byte("#!/bin/bash\n#SBATCH --gpus=a100:1\ntrue\n"))
	cases := []struct {
		script *Script
		args   []string
		env    []string
		want   Setting
	}{
		{gres, []string{"job.sh"}, nil, Setting{Name: "gres", Value: "gpu:a100_20g:1,tmpfs:10G", Was: "gpu:a100:1,tmpfs:10G"}},
		{gpus, []string{"job.sh"}, nil, Setting{Name: "gpus", Value: "a100_20g:1", Was: "a100:1"}},
		{gres, []string{"--gres=gpu:a100_10g:1", "job.sh"}, nil, Setting{Name: "gres", Value: "gpu:a100_20g:1", Was: "gpu:a100_10g:1"}},
		{gres, []string{"job.sh"}, []string{"SBATCH_GRES=gpu:1"}, Setting{Name: "gres", Value: "gpu:a100_20g:1", Was: "gpu:1"}},
	}
	for _, c := range cases {
		cl := ParseCommandLine(c.args)
		got, err := cl.GPUSetting(cl.Resources(c.script, c.env), c.script, c.env, "--gres=gpu:a100_20g:1")
		if err != nil || got != c.want {
			t.Errorf("%q %q: %+v %v, want %+v", c.args, c.env, got, err, c.want)
		}
	}
	none := Parse("job.sh", []byte("#!/bin/bash\ntrue\n"))
	cl := ParseCommandLine([]string{"job.sh"})
	if _, err := cl.GPUSetting(cl.Resources(none, nil), none, nil, "--gres=gpu:a100_20g:1"); err == nil {
		t.Error("a job without a GPU got a GPU setting")
	}
}
