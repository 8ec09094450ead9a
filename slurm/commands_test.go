package slurm

import (
	"reflect"
	"testing"
)

// A script's commands are its simple commands as a shell splits them, each
// with the line it starts on: continued lines joined, comments and the
// lines migadvisor added left out, the #SBATCH header not read.
func TestCommandsSplitTheScriptAsAShellDoes(t *testing.T) {
	s := Parse("job.sh", []byte("#!/bin/bash\n#SBATCH --gres=gpu:1\n# a comment\nmodule load cuda && echo 'a; b'\n"+
		"torchrun \\\n  --nproc_per_node=2 train.py # two\nmigadvisor monitor -- true "+AutoMarker+"\nA=\"x y\" run | tee log &\n"))
	want := []Command{
		{Words: []string{"module", "load", "cuda"}, Line: 4},
		{Words: []string{"echo", "a; b"}, Line: 4},
		{Words: []string{"torchrun", "--nproc_per_node=2", "train.py"}, Line: 5},
		{Words: []string{"A=x y", "run"}, Line: 8},
		{Words: []string{"tee", "log"}, Line: 8},
	}
	if got := s.Commands(); !reflect.DeepEqual(got, want) {
		t.Errorf("Commands() = %q\nwant %q", got, want)
	}
}

func TestSplitShellKeepsQuotesEscapesAndExpansions(t *testing.T) {
	cases := []struct {
		line string
		want [][]string
	}{
		{`python -c "import torch; print(1)"`, [][]string{{"python", "-c", "import torch; print(1)"}}},
		{`a\ b "c\"d" 'e\f' $X ${Y:-4}`, [][]string{{"a b", `c"d`, `e\f`, "$X", "${Y:-4}"}}},
		{"x || y; (z)", [][]string{{"x"}, {"y"}, {"z"}}},
		{"run#not-a-comment # a comment; not run", [][]string{{"run#not-a-comment"}}},
		{"", nil},
	}
	for _, c := range cases {
		if got := SplitShell(c.line); !reflect.DeepEqual(got, c.want) {
			t.Errorf("SplitShell(%q) = %q, want %q", c.line, got, c.want)
		}
	}
}

func TestWordsThatAreNoLaunch(t *testing.T) {
	for _, w := range []string{"echo", "module", "pip", "["} {
		if !PrintOnly(w) {
			t.Errorf("PrintOnly(%q) = false", w)
		}
	}
	if PrintOnly("torchrun") || PrintOnly("python") {
		t.Error("a launcher is taken as print-only")
	}
	if !CommandPrefix("nohup") || !CommandPrefix("then") || CommandPrefix("srun") {
		t.Error("CommandPrefix misreads nohup, then or srun")
	}
	if name, value, ok := Assignment("NGPUS=4"); !ok || name != "NGPUS" || value != "4" {
		t.Errorf("Assignment(NGPUS=4) = %q, %q, %v", name, value, ok)
	}
	if _, _, ok := Assignment("--nproc_per_node=4"); ok {
		t.Error("a flag is taken as an assignment")
	}
}
