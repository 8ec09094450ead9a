package memory

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/migadvisor/migadvisor/slurm"
)

// script is a batch script's header, before the body a test gives.
const script = "#!/bin/bash\n#SBATCH --partition=gpu\n#SBATCH --gres=gpu:a100:1\n#SBATCH --cpus-per-task=1\n#SBATCH --mem=4G\n"

// What a script runs, read the ways scripts say it.
func TestScriptSoftware(t *testing.T) {
	cases := map[string]string{
		"module load pytorch/2.1\npython x.py\n":              "torch",
		"ml tensorflow/2.15\n":                                "tensorflow",
		"apptainer exec --nv pytorch_24.01.sif python x.py\n": "torch",
		"source activate jax-env\n":                           "jax",
		"srun gmx_mpi mdrun -s topol.tpr\n":                   "gromacs",
		"torchrun --nproc_per_node=1 train.py\n":              "torch",
		"echo 'import torch is not run'\n":                    "",
		// Python files not found say only that Python runs.
		"python $HOME/train.py\n":                              "python",
		"export TF_FORCE_GPU_ALLOW_GROWTH=true\npython t.py\n": "python",
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
// Keras as its backend, XLA's lines as JAX or TensorFlow; a Python, R or
// Julia program on the GPU that shows no compiled code is a framework's
// too. A compiled code's peak is its need, and the settings that turn a
// framework's habits off still count through the library over it.
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
		{"DeepSpeed", seen("deepspeed"), nil, HolderCaching, "PyTorch", "shows deepspeed"},
		{"Keras on TensorFlow", seen("keras"), nil, HolderPreallocates, "TensorFlow", "shows keras"},
		{"Keras on PyTorch", seen("keras"), map[string]string{"KERAS_BACKEND": "torch"}, HolderCaching, "PyTorch", "shows keras"},
		{"XLA's lines", seen("xla"), nil, HolderPreallocates, "JAX or TensorFlow", "shows xla"},
		{"TensorFlow over XLA's lines", seen("xla", "tensorflow"), nil, HolderPreallocates, "TensorFlow", "shows tensorflow"},
		{"CuPy", seen("cupy"), nil, HolderCaching, "CuPy", "shows cupy"},
		{"PyTorch over the library on it", seen("peft", "torch", "transformers"), nil, HolderCaching, "PyTorch", "shows torch"},
		{"Lightning's cache turned off", seen("lightning"), map[string]string{"PYTORCH_NO_CUDA_MEMORY_CACHING": "1"}, HolderAllocates, "PyTorch", "shows lightning; PYTORCH_NO_CUDA_MEMORY_CACHING=1 turns its cache off"},
		{"Python alone", seen("python"), nil, HolderInterpreted, "a Python framework", "shows python"},
		{"R alone", seen("R"), nil, HolderInterpreted, "an R framework", "shows R"},
		{"Julia alone", seen("julia"), nil, HolderInterpreted, "a Julia framework", "shows julia"},
		{"Python beside a framework", seen("python", "jax"), nil, HolderPreallocates, "JAX", "shows jax"},
		{"Python beside a compiled code", seen("python", "gromacs"), nil, HolderAllocates, "GROMACS", "shows gromacs"},
		{"Python beside a program of its own", seen("python", SoftwareCompiled), nil, HolderAllocates, "a compiled program", "shows compiled"},
		// vLLM reserves gpu_memory_utilization of the device at start, over
		// the PyTorch its tracebacks show.
		{"vLLM", seen("vllm"), nil, HolderPreallocates, "vLLM", "shows vllm"},
		{"vLLM over PyTorch", seen("torch", "vllm"), nil, HolderPreallocates, "vLLM", "shows vllm"},
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
	// The words say why an interpreter's peak is no need.
	if w := HolderOf(seen("python"), nil).Words(); !strings.HasPrefix(w, "a Python framework keeps memory beyond its need") || !strings.Contains(w, "no compiled code") {
		t.Errorf("words: %s", w)
	}
}

// What a job's output shows decides through its record: LAMMPS' banner
// before a post-processing script's Python traceback is a compiled code's
// run, whose peak is its need (LAMMPS 2Aug2023 update 3).
func TestHolderOfAnOutput(t *testing.T) {
	out := "LAMMPS (2 Aug 2023 - Update 3)\nTotal wall time: 0:01:23\nTraceback (most recent call last):\n  File \"/home/u/analyze.py\", line 3, in <module>\nModuleNotFoundError: No module named 'MDAnalysis'\n"
	ev, err := slurm.ScanOutput(strings.NewReader(out), slurm.ScanOptions{})
	if err != nil {
		t.Fatal(err)
	}
	var seen []Software
	for _, n := range SoftwareOfRecord(ev.Versions, "") {
		seen = append(seen, Software{n, "shows " + n})
	}
	if h := HolderOf(seen, nil); h.Kind != HolderAllocates || h.Software != "LAMMPS" {
		t.Errorf("%v: %+v, want LAMMPS, which allocates what it uses", ev.Versions, h)
	}
}

// An out-of-memory message names its software: CuPy's pool, CUDA.jl's
// (under Julia), vLLM's KV cache, LAMMPS' GPU package.
func TestSoftwareOfAnOOM(t *testing.T) {
	for source, want := range map[string]string{"cupy": "cupy", "julia-cuda": "julia", "vllm": "vllm", "lammps": "lammps", "pytorch-mig-assert": "torch"} {
		if got := SoftwareOfRecord(nil, source); len(got) != 1 || got[0] != want {
			t.Errorf("%s: %v, want %s", source, got, want)
		}
	}
}

// What a script runs, read for the interpreters and the compiled codes:
// the program a command runs past its launchers, the script's own #!
// line; a program of the job's own (a path) is a compiled code, a system
// tool before the command is not.
func TestScriptSoftwareInterpretersAndPrograms(t *testing.T) {
	cases := map[string][]string{
		"python train.py\n":                                              {"python"},
		"srun python3.11 -u train.py --epochs 2\n":                       {"python"},
		"apptainer exec --nv img.sif python3 - <<'EOF'\nprint(1)\nEOF\n": {"python"},
		"/usr/bin/time -v python x.py\n":                                 {"python"},
		"Rscript fit.R\n":                                                {"R"},
		"julia --project=. sim.jl\n":                                     {"julia"},
		"srun -n 1 ./md_solver -i in.dat\n":                              {SoftwareCompiled},
		"python prep.py && mpirun -np 4 $HOME/bin/solver\n":              {"python", SoftwareCompiled},
		"python -m torch.distributed.run --nproc_per_node=1 t.py\n":      {"python", "torch"},
		"srun vasp_std\n":                                                {"vasp"},
		"module load python/3.11\necho python x.py\n":                    nil,
		"bash ./run.sh\n":                                                nil,
	}
	for body, want := range cases {
		s := slurm.Parse(filepath.Join(t.TempDir(), "job.sh"), []byte(script+body))
		seen, _ := ScriptSoftware(s)
		var got []string
		for _, x := range seen {
			got = append(got, x.Name)
		}
		if strings.Join(got, ",") != strings.Join(want, ",") {
			t.Errorf("%q: %v, want %v", body, seen, want)
		}
	}
	// A batch script that is itself a Python program.
	s := slurm.Parse(filepath.Join(t.TempDir(), "job.py"), []byte("#!/usr/bin/env -S python3 -u\n#SBATCH --gres=gpu:a100:1\nprint('hi')\n"))
	if seen, _ := ScriptSoftware(s); len(seen) != 1 || seen[0].Name != "python" || seen[0].Why != "its #! line runs python" {
		t.Errorf("a Python batch script: %v", seen)
	}
	// A program by its path whose #! line names Python is no compiled code.
	dir := t.TempDir()
	os.WriteFile(filepath.Join(dir, "train"), []byte("#!/usr/bin/python3\nimport sys\n"), 0o755)
	s = slurm.Parse(filepath.Join(dir, "job.sh"), []byte(script+"srun ./train --epochs 2\n"))
	if seen, _ := ScriptSoftware(s); len(seen) != 1 || seen[0].Name != "python" || seen[0].Why != "line 6 runs train" {
		t.Errorf("a Python program by its path: %v", seen)
	}
	// Nor is a shell's.
	os.WriteFile(filepath.Join(dir, "run"), []byte("#!/bin/bash\npython3 t.py\n"), 0o755)
	s = slurm.Parse(filepath.Join(dir, "job.sh"), []byte(script+"./run\n"))
	if seen, _ := ScriptSoftware(s); len(seen) != 0 {
		t.Errorf("a shell script by its path: %v", seen)
	}
}
