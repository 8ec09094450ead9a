package memory

import (
	"path/filepath"
	"testing"

	"github.com/migadvisor/migadvisor/slurm"
)

// script is a batch script's header, before the body a test gives.
const script = "#!/bin/bash\n#SBATCH --partition=gpu\n#SBATCH --gres=gpu:a100:1\n#SBATCH --cpus-per-task=1\n#SBATCH --mem=4G\n"

// What a script runs, read the ways scripts say it.
func TestScriptSoftware(t *testing.T) {
	cases := map[string]string{
		"module load pytorch/2.1\npython x.py\n":               "torch",
		"ml tensorflow/2.15\n":                                 "tensorflow",
		"apptainer exec --nv pytorch_24.01.sif python x.py\n":  "torch",
		"source activate jax-env\n":                            "jax",
		"srun gmx_mpi mdrun -s topol.tpr\n":                    "gromacs",
		"torchrun --nproc_per_node=1 train.py\n":               "torch",
		"echo 'import torch is not run'\n":                     "",
		"python $HOME/train.py\n":                              "",
		"export TF_FORCE_GPU_ALLOW_GROWTH=true\npython t.py\n": "",
	}
	for body, want := range cases {
		s := slurm.Parse(filepath.Join(t.TempDir(), "job.sh"), []byte(script+body))
		seen, _ := ScriptSoftware(s)
		got := ""
		if len(seen) > 0 {
			got = seen[0].Name
		}
		if got != want {
			t.Errorf("%q: %q (%v), want %q", body, got, seen, want)
		}
	}
}
