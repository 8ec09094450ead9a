package advisor

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/migadvisor/migadvisor/catalog/catalogtest"

	"github.com/migadvisor/migadvisor/catalog"
	"github.com/migadvisor/migadvisor/slurm"
)

func TestRecogniseWorkloadReadsTheCodeAScriptRuns(t *testing.T) {
	set, _ := catalog.ReferenceFor(catalogtest.Wulver(t))
	dir := t.TempDir()
	write := func(name, text string) string {
		p := filepath.Join(dir, name)
		if err := os.WriteFile(p, []byte(text), 0o644); err != nil {
			t.Fatal(err)
		}
		return p
	}
	write("finetune.py", "from peft import LoraConfig, get_peft_model\n")
	write("plain.py", "print('hello')\n")
	cases := map[string]string{
		"#!/bin/bash\n#SBATCH --gres=gpu:a100:1\nsrun python -u finetune.py --epochs 1\n": "llm-finetuning",
		"#!/bin/bash\nmodule load GROMACS\ngmx mdrun -deffnm md\n":                        "gromacs_performance",
		"#!/bin/bash\npython plain.py\n":                                                  "",
		"#!/bin/bash\npython missing.py\n":                                                "",
	}
	for text, want := range cases {
		s := slurm.Parse(write("job.sh", text), []byte(text))
		b, ok := RecogniseWorkload(set, s)
		got := ""
		if ok {
			got = b.Name
		}
		if got != want {
			t.Errorf("%q: recognised %q, want %q", text, got, want)
		}
	}
}
