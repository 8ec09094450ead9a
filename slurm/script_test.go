package slurm

import (
	"fmt"
	"strings"
	"testing"
)

// opts renders the parsed options as "name=value" for compact comparison.
func opts(s *Script) string {
	var parts []string
	for _, o := range s.Options {
		if o.HasValue {
			parts = append(parts, o.Name+"="+o.Value)
		} else {
			parts = append(parts, o.Name)
		}
	}
	return strings.Join(parts, " ")
}

func codes(s *Script) string {
	var c []string
	for _, p := range s.Problems {
		c = append(c, fmt.Sprintf("%d:%s", p.Line, p.Code))
	}
	return strings.Join(c, " ")
}

func TestParseDirectives(t *testing.T) {
	tests := []struct {
		name, script, want, problems string
	}{
		{"long with equals", "#!/bin/bash\n#SBATCH --partition=gpu\n", "partition=gpu", ""},
		{"long with space", "#!/bin/bash\n#SBATCH --partition gpu\n", "partition=gpu", ""},
		{"short with space", "#!/bin/bash\n#SBATCH -p gpu\n", "partition=gpu", ""},
		{"short attached", "#!/bin/bash\n#SBATCH -n4\n#SBATCH -N1\n", "ntasks=4 nodes=1", ""},
		{"short G and t", "#!/bin/bash\n#SBATCH -G 1 -t 1:00:00\n", "gpus=1 time=1:00:00", ""},
		{"J o e A q c", "#!/bin/sh\n#SBATCH -J x -o o.out -e e.err -A acct -q low -c 2\n",
			"job-name=x output=o.out error=e.err account=acct qos=low cpus-per-task=2", ""},
		{"several per line", "#!/bin/bash\n#SBATCH --nodes=1 --ntasks=2 --mem=4G\n", "nodes=1 ntasks=2 mem=4G", ""},
		{"trailing comment", "#!/bin/bash\n#SBATCH --gres=gpu:a100_10g:1      # Change to 20g\n", "gres=gpu:a100_10g:1", ""},
		{"comment glued to value", "#!/bin/bash\n#SBATCH --time=59:00# one hour\n", "time=59:00", ""},
		{"double-quoted value", "#!/bin/bash\n#SBATCH --job-name=\"my job\"\n", "job-name=my job", ""},
		{"single-quoted value", "#!/bin/bash\n#SBATCH -J 'a # b'\n", "job-name=a # b", ""},
		{"escaped blank", "#!/bin/bash\n#SBATCH -J a\\ b\n", "job-name=a b", ""},
		{"flag without value", "#!/bin/bash\n#SBATCH --exclusive --requeue -H\n", "exclusive requeue hold", ""},
		{"optional value", "#!/bin/bash\n#SBATCH --exclusive=user\n", "exclusive=user", ""},
		{"short cluster", "#!/bin/bash\n#SBATCH -HG1\n", "hold gpus=1", ""},
		{"unique prefix", "#!/bin/bash\n#SBATCH --part=gpu --ntasks-per-n=2\n", "partition=gpu ntasks-per-node=2", ""},
		{"no space after SBATCH", "#!/bin/bash\n#SBATCH--time=5\n", "time=5", ""},
		{"double-hash is a comment", "#!/bin/bash\n##SBATCH --time=5\n#SBATCH -p gpu\n", "partition=gpu", ""},
		{"spaced hash is a comment", "#!/bin/bash\n# SBATCH --time=5\n", "", ""},
		{"indented is a comment", "#!/bin/bash\n  #SBATCH --time=5\n#SBATCH -p gpu\n", "partition=gpu", ""},
		{"blank and comment lines keep the header open", "#!/bin/bash\n\n# setup\n   \n#SBATCH -p gpu\n", "partition=gpu", ""},
		{"first command ends the header", "#!/bin/bash\n#SBATCH -p gpu\nmodule load x\n#SBATCH -t 5\n", "partition=gpu", ""},
		{"no trailing newline", "#!/bin/bash\n#SBATCH -p gpu", "partition=gpu", ""},
		{"unknown option", "#!/bin/bash\n#SBATCH --gpu=1\n", "", "2:unknown-option"},
		{"ambiguous prefix", "#!/bin/bash\n#SBATCH --mem-per=4G\n", "", "2:unknown-option"},
		{"time is ambiguous with time-min", "#!/bin/bash\n#SBATCH --ti=5\n", "", "2:unknown-option"},
		{"missing value", "#!/bin/bash\n#SBATCH --time\n", "", "2:missing-value"},
		{"stray word", "#!/bin/bash\n#SBATCH gpu\n", "", "2:invalid-directive"},
		{"value on a flag", "#!/bin/bash\n#SBATCH --hold=yes\n", "", "2:bad-value"},
		{"no shebang", "#SBATCH -p gpu\necho hi\n", "partition=gpu", "1:no-shebang"},
		{"crlf", "#!/bin/bash\r\n#SBATCH -p gpu\r\necho\r\n", "partition=gpu", "1:crlf"},
		{"empty", "", "", "1:empty-script"},
		{"bad time", "#!/bin/bash\n#SBATCH --time=1:xx\n", "time=1:xx", "2:bad-value"},
		{"bad memory", "#!/bin/bash\n#SBATCH --mem=1.5G\n", "mem=1.5G", "2:bad-value"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			s := Parse("job.sh", []byte(tc.script))
			if got := opts(s); got != tc.want {
				t.Errorf("options = %q, want %q", got, tc.want)
			}
			if got := codes(s); got != tc.problems {
				t.Errorf("problems = %q, want %q", got, tc.problems)
			}
		})
	}
}

func TestParseLineKinds(t *testing.T) {
	s := Parse("job.sh", []byte("#!/bin/bash\n#SBATCH -p gpu\n\n# note\necho hi\n#SBATCH -t 5\n"))
	want := []LineKind{LineComment, LineDirective, LineBlank, LineComment, LineCommand, LineLateDirective}
	for i, k := range want {
		if s.Lines[i].Kind != k {
			t.Errorf("line %d kind = %d, want %d", i+1, s.Lines[i].Kind, k)
		}
	}
	if s.FirstCmd != 5 {
		t.Errorf("FirstCmd = %d, want 5", s.FirstCmd)
	}
	if got := s.LateDirectives(); len(got) != 1 || got[0] != 6 {
		t.Errorf("LateDirectives = %v, want [6]", got)
	}
}

func TestOptionByteRanges(t *testing.T) {
	src := "#!/bin/bash\n#SBATCH -p gpu --time=5   # c\n"
	s := Parse("job.sh", []byte(src))
	want := []string{"-p gpu", "--time=5"}
	for i, o := range s.Options {
		if got := src[o.Start:o.End]; got != want[i] {
			t.Errorf("option %d covers %q, want %q", i, got, want[i])
		}
	}
}

func TestLastOptionWins(t *testing.T) {
	s := Parse("job.sh", []byte("#!/bin/bash\n#SBATCH -p general\n#SBATCH --partition=gpu\n#SBATCH --gres=gpu:1\n#SBATCH --gres=gpu:a100_20g:1\n"))
	if s.Resources.Partition != "gpu" {
		t.Errorf("partition = %q, want the last one", s.Resources.Partition)
	}
	if g := s.Resources.GPUs; len(g) != 1 || g[0].Type != "a100_20g" || g[0].Line != 5 {
		t.Errorf("GPUs = %+v, want only the last --gres", g)
	}
}

func TestHetJobComponentsAreSeparate(t *testing.T) {
	s := Parse("job.sh", []byte("#!/bin/bash\n#SBATCH -p gpu --gres=gpu:a100_10g:1\n#SBATCH hetjob\n#SBATCH -p general -n 8\n"))
	if !s.HetJob || s.Resources.Partition != "gpu" || s.Resources.NTasks != 0 {
		t.Errorf("het=%v partition=%q ntasks=%d: component 1 leaked into component 0", s.HetJob, s.Resources.Partition, s.Resources.NTasks)
	}
}
