package slurm

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func TestRewriteGPURequest(t *testing.T) {
	const head = "#!/bin/bash\n"
	tests := []struct {
		name, in, req, want string
	}{
		{"replace typed gres", "#SBATCH --gres=gpu:a100:1   # full GPU\necho\n", "--gres=gpu:a100_10g:1",
			"#SBATCH --gres=gpu:a100_10g:1   # full GPU\necho\n"},
		{"keep other gres", "#SBATCH --gres=gpu:a100:1,lscratch:100\necho\n", "--gres=gpu:a100_20g:1",
			"#SBATCH --gres=gpu:a100_20g:1,lscratch:100\necho\n"},
		{"gpu entry not first", "#SBATCH --gres=lscratch:100,gpu:2\necho\n", "--gres=gpu:a100_40g:1",
			"#SBATCH --gres=lscratch:100,gpu:a100_40g:1\necho\n"},
		{"add to a gres list without gpu", "#SBATCH --gres=lscratch:100\necho\n", "--gres=gpu:a100_10g:1",
			"#SBATCH --gres=lscratch:100,gpu:a100_10g:1\necho\n"},
		{"replace --gpus in place", "#SBATCH -p gpu --gpus=1 -t 5\necho\n", "--gres=gpu:a100_10g:1",
			"#SBATCH -p gpu --gres=gpu:a100_10g:1 -t 5\necho\n"},
		{"replace -G", "#SBATCH -G 1\necho\n", "--gres=gpu:a100:1", "#SBATCH --gres=gpu:a100:1\necho\n"},
		{"replace gpus-per-node", "#SBATCH --gpus-per-node=a100_20g:1\n#SBATCH -t 5\necho\n", "--gres=gpu:a100_10g:1",
			"#SBATCH --gres=gpu:a100_10g:1\n#SBATCH -t 5\necho\n"},
		{"several requests become one", "#SBATCH --gres=gpu:1\n#SBATCH --gpus-per-task=1 -n 2\necho\n", "--gres=gpu:a100_10g:1",
			"#SBATCH --gres=gpu:a100_10g:1\n#SBATCH -n 2\necho\n"},
		{"a line left empty goes", "#SBATCH -p gpu\n#SBATCH --gpus=1   # one GPU\n#SBATCH --gres=lscratch:1\necho\n", "--gres=gpu:a100_10g:1",
			"#SBATCH -p gpu\n#SBATCH --gres=lscratch:1,gpu:a100_10g:1\necho\n"},
		{"insert when none", "#SBATCH -p gpu\n#SBATCH -t 5\n\necho\n", "--gres=gpu:a100_10g:1",
			"#SBATCH -p gpu\n#SBATCH -t 5\n#SBATCH --gres=gpu:a100_10g:1\n\necho\n"},
		{"insert after shebang when no directives", "echo\n", "--gres=gpu:a100_10g:1",
			"#SBATCH --gres=gpu:a100_10g:1\necho\n"},
		{"request as --gpus", "#SBATCH --gres=gpu:a100:1,lscratch:5\necho\n", "--gpus=a100_10g:1",
			"#SBATCH --gres=lscratch:5\n#SBATCH --gpus=a100_10g:1\necho\n"},
		{"short cluster", "#SBATCH -HG1\necho\n", "--gres=gpu:a100_10g:1", "#SBATCH -H --gres=gpu:a100_10g:1\necho\n"},
		{"an overridden request goes too", "#SBATCH -G 2\n#SBATCH -G 1\necho\n", "--gres=gpu:a100_10g:1",
			"#SBATCH --gres=gpu:a100_10g:1\necho\n"},
		{"three on one line", "#SBATCH -G0 -G0 -G0\necho\n", "--gres=gpu:a100_10g:1",
			"#SBATCH --gres=gpu:a100_10g:1\necho\n"},
		{"two after the request, a comment after them", "#SBATCH -G0 -G0 -G0   # gpus\necho\n", "--gres=gpu:a100_10g:1",
			"#SBATCH --gres=gpu:a100_10g:1   # gpus\necho\n"},
		{"an overridden gres goes with the last", "#SBATCH --gres=gpu:2\n#SBATCH --gres=gpu:1\necho\n", "--gpus=a100_10g:1",
			"#SBATCH --gpus=a100_10g:1\necho\n"},
		{"late directive untouched", "#SBATCH -G1\necho\n#SBATCH -G 2\n", "--gres=gpu:a100:1",
			"#SBATCH --gres=gpu:a100:1\necho\n#SBATCH -G 2\n"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			s := Parse("job.sh", []byte(head+tc.in))
			out, err := s.Rewrite(Variant{GPURequest: tc.req})
			if err != nil {
				t.Fatal(err)
			}
			if string(out) != head+tc.want {
				t.Errorf("got:\n%s\nwant:\n%s", out, head+tc.want)
			}
		})
	}
}

func TestRewriteOtherFields(t *testing.T) {
	in := "#!/bin/bash\n#SBATCH --job-name=train -p debug_gpu --qos=debug\necho\n"
	out, err := Parse("job.sh", []byte(in)).Rewrite(Variant{Partition: "gpu", QoS: "standard", JobName: "train-full"})
	if err != nil {
		t.Fatal(err)
	}
	want := "#!/bin/bash\n#SBATCH --job-name=train-full -p gpu --qos=standard\necho\n"
	if string(out) != want {
		t.Errorf("got %q\nwant %q", out, want)
	}
	// A name that needs quoting is quoted so sbatch reads it back whole.
	out, _ = Parse("job.sh", []byte(in)).Rewrite(Variant{JobName: `my "big" job #1`})
	if got := Parse("v.sh", out).Resources.JobName; got != `my "big" job #1` {
		t.Errorf("job name read back as %q from %q", got, out)
	}
}

func TestRewriteRejectsNonGPURequest(t *testing.T) {
	s := Parse("job.sh", []byte("#!/bin/bash\necho\n"))
	for _, req := range []string{"--partition=gpu", "--gres=gpu:1 --time=5", "nonsense"} {
		if _, err := s.Rewrite(Variant{GPURequest: req}); err == nil {
			t.Errorf("request %q accepted", req)
		}
	}
}

// TestRewriteRoundTrip checks the properties every rewrite must keep, over the
// example scripts and the fuzz corpus: the variant asks for exactly the
// profile, every other directive and the body are unchanged, and the
// fingerprint is the same.
func TestRewriteRoundTrip(t *testing.T) {
	requests := []string{"--gres=gpu:a100_10g:1", "--gres=gpu:a100:1", "--gpus=a100_40g:1"}
	for _, file := range scriptCorpus(t) {
		data, err := os.ReadFile(file)
		if err != nil {
			t.Fatal(err)
		}
		orig := Parse(file, data)
		for _, req := range requests {
			v := Variant{GPURequest: req, JobName: "variant-x", Partition: "gpu"}
			out, err := orig.Rewrite(v)
			if err != nil {
				t.Fatalf("%s: %v", file, err)
			}
			back := Parse(file, out)
			want, _ := ParseRequest(req)
			gpus := back.Resources.GPUs
			wantGPU := Parse("r", []byte("#!/bin/sh\n#SBATCH "+req+"\n")).Resources.GPUs[0]
			if len(gpus) != 1 || gpus[0].Type != wantGPU.Type || gpus[0].Count != wantGPU.Count || gpus[0].Option != want.Name {
				t.Errorf("%s with %s: GPUs read back as %+v", file, req, gpus)
			}
			if back.Resources.JobName != "variant-x" || back.Resources.Partition != "gpu" {
				t.Errorf("%s: job name %q partition %q", file, back.Resources.JobName, back.Resources.Partition)
			}
			if back.Fingerprint() != orig.Fingerprint() {
				t.Errorf("%s with %s: fingerprint changed", file, req)
			}
			if a, b := untouched(orig), untouched(back); a != b {
				t.Errorf("%s with %s: other directives changed:\n%s\n---\n%s", file, req, a, b)
			}
			if a, b := body(orig), body(back); a != b {
				t.Errorf("%s with %s: body changed", file, req)
			}
		}
	}
}

// untouched renders the options a GPU/partition/name rewrite must not change.
func untouched(s *Script) string {
	var b strings.Builder
	for _, o := range s.Options {
		switch o.Name {
		case OptGPUs, OptGPUsPerNode, OptGPUsPerTask, OptGPUsPerSocket, "partition", "job-name":
			continue
		case OptGres:
			if v, _ := gresWithGPU(o.Value, Option{Name: "none"}); v != "" {
				b.WriteString("gres=" + v + "\n")
			}
			continue
		}
		b.WriteString(o.Name + "=" + o.Value + "\n")
	}
	return b.String()
}

func body(s *Script) string {
	if s.FirstCmd == 0 {
		return ""
	}
	return string(s.Data[s.Lines[s.FirstCmd-1].Start:])
}

// scriptCorpus is every example script and fuzz seed in the repository.
func scriptCorpus(t *testing.T) []string {
	t.Helper()
	var files []string
	for _, pattern := range []string{"../examples/*.sh", "../testdata/scripts/*.sh"} {
		m, err := filepath.Glob(pattern)
		if err != nil {
			t.Fatal(err)
		}
		files = append(files, m...)
	}
	if len(files) < 6 {
		t.Fatalf("script corpus has only %d files", len(files))
	}
	return files
}
