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

// What the software a job shows says of its peak, for the whole class of
// frameworks: the libraries over PyTorch hold memory as PyTorch does,
// Keras as its backend, XLA's lines as JAX or TensorFlow; the settings
// that turn a framework's habits off still count through the library over
// it.
func TestHolderOfTheClass(t *testing.T) {
	seen := func(names ...string) []Software {
		var out []Software
		for _, n := range names {
			out = append(out, Software{n, "shows " + n})
		}
		return out
	}
	cases := []struct {
		name     string
		seen     []Software
		env      map[string]string
		kind     string
		software string
		why      string
	}{
		{"Hugging Face", seen("transformers"), nil, HolderCaching, "PyTorch", "shows transformers"},
		{"PEFT", seen("peft"), nil, HolderCaching, "PyTorch", "shows peft"},
		{"TRL", seen("trl"), nil, HolderCaching, "PyTorch", "shows trl"},
		{"Lightning", seen("lightning"), nil, HolderCaching, "PyTorch", "shows lightning"},
		{"Keras on TensorFlow", seen("keras"), nil, HolderPreallocates, "TensorFlow", "shows keras"},
		{"Keras on PyTorch", seen("keras"), map[string]string{"KERAS_BACKEND": "torch"}, HolderCaching, "PyTorch", "shows keras"},
		{"XLA's lines", seen("xla"), nil, HolderPreallocates, "JAX or TensorFlow", "shows xla"},
		{"TensorFlow over XLA's lines", seen("xla", "tensorflow"), nil, HolderPreallocates, "TensorFlow", "shows tensorflow"},
		{"CuPy", seen("cupy"), nil, HolderCaching, "CuPy", "shows cupy"},
		{"PyTorch over the library on it", seen("peft", "torch", "transformers"), nil, HolderCaching, "PyTorch", "shows torch"},
		{"Lightning's cache turned off", seen("lightning"), map[string]string{"PYTORCH_NO_CUDA_MEMORY_CACHING": "1"}, HolderAllocates, "PyTorch", "shows lightning; PYTORCH_NO_CUDA_MEMORY_CACHING=1 turns its cache off"},
		{"nothing known", seen("bash"), nil, HolderUnknown, "", ""},
	}
	for _, c := range cases {
		h := HolderOf(c.seen, c.env)
		if h.Kind != c.kind || h.Software != c.software || h.Why != c.why {
			t.Errorf("%s: %+v, want %s by %q (%q)", c.name, h, c.kind, c.software, c.why)
		}
		if want := c.kind != HolderUnknown && c.kind != HolderAllocates; h.Ceiling() != want {
			t.Errorf("%s: Ceiling() %v", c.name, h.Ceiling())
		}
	}
}
