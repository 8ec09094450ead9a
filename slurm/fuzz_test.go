package slurm

import (
	"os"
	"testing"
)

// FuzzParse checks that any input parses without panicking, and that a
// rewrite of any parsed script reads back with exactly the requested GPU and
// the same fingerprint.
func FuzzParse(f *testing.F) {
	for _, seed := range []string{
		"#!/bin/bash\n#SBATCH --gres=gpu:a100:1,lscratch:100 -p gpu\necho\n",
		"#!/bin/bash\n#SBATCH -HG1 -J 'a b' -t 1-00:00\n#SBATCH hetjob\n#SBATCH -n2\nrun\n",
		"#!/bin/bash\r\n#SBATCH --gpus=a100_10g:1,a100_20g:1 # c\r\n",
	} {
		f.Add([]byte(seed))
	}
	if files, err := os.ReadDir("../examples"); err == nil {
		for _, e := range files {
			if data, err := os.ReadFile("../examples/" + e.Name()); err == nil && !e.IsDir() {
				f.Add(data)
			}
		}
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		s := Parse("fuzz.sh", data)
		_ = s.Resources.CPUs()
		_ = s.Resources.MemoryMiB(4096, 1<<20)
		out, err := s.Rewrite(Variant{GPURequest: "--gres=gpu:a100_10g:1", JobName: "x y"})
		if err != nil {
			t.Fatal(err)
		}
		back := Parse("fuzz.sh", out)
		if s.FirstCmd != 0 && back.Fingerprint() != s.Fingerprint() {
			t.Fatalf("fingerprint changed:\n%q\n->\n%q", data, out)
		}
		if g := back.Resources.GPUs; !s.HetJob && (len(g) != 1 || g[0].Type != "a100_10g" || g[0].Count != 1) {
			t.Fatalf("GPUs after rewrite %+v:\n%q\n->\n%q", g, data, out)
		}
	})
}
