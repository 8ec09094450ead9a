package memory

import (
	"cmp"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"slices"
	"strings"

	"github.com/migadvisor/migadvisor/advisor/base/history"
	"github.com/migadvisor/migadvisor/internal/lazyre"
	"github.com/migadvisor/migadvisor/slurm"
)

// What a GPU memory peak proves depends on what held the memory. NVML,
// sacct's gres/gpumem and jobstats see what a process reserved on the
// device: for a compiled CUDA code (GROMACS, NAMD) that is what it uses, its
// need; PyTorch's caching allocator keeps what it freed and grows into the
// memory it is given (Wulver's QLoRA: 5.68 GB allocated, 8.97 GB reserved on
// 1g.10gb, 23.55 GB on 3g.40gb); JAX takes 75% of the device at its first
// operation and TensorFlow nearly all of it. For those a peak is a ceiling
// of the need, which never rules a smaller profile out. A Python, R or
// Julia program reaches the GPU through such a framework (PyTorch, JAX,
// TensorFlow, CuPy, CUDA.jl's pool): where nothing says it runs a compiled
// code, its peak is a ceiling too.
const (
	HolderUnknown      = ""             // nothing tells: a peak is taken as the need
	HolderAllocates    = "allocates"    // allocates what it uses: a peak is the need
	HolderCaching      = "caching"      // a caching allocator: a peak is a ceiling
	HolderPreallocates = "preallocates" // takes a share of the device at start: a peak is a ceiling
	HolderInterpreted  = "interpreted"  // an interpreter's program, no compiled code seen: a peak is a ceiling
)

// Holder is what held a job's GPU memory, as far as the evidence tells.
type Holder struct {
	Kind     string `json:"kind"`               // Holder*
	Software string `json:"software,omitempty"` // PyTorch, JAX, TensorFlow, GROMACS, ...
	Why      string `json:"why"`                // the evidence, in words
}

// Ceiling reports whether a peak of this holder is only a ceiling of the need.
func (h Holder) Ceiling() bool {
	return h.Kind == HolderCaching || h.Kind == HolderPreallocates || h.Kind == HolderInterpreted
}

// Words say what held the memory, how it holds it and how that is known:
// "PyTorch's caching allocator keeps what it frees and grows into the
// memory it has; import torch in train.py, line 3".
func (h Holder) Words() string {
	habit := ""
	switch {
	case h.Software == "":
		return h.Why
	case h.Kind == HolderCaching:
		habit = h.Software + " keeps the memory it frees and grows into what the device has"
		if h.Software == "PyTorch" {
			habit = "PyTorch's caching allocator keeps the memory it frees and grows into what the device has"
		}
	case h.Kind == HolderPreallocates:
		habit = h.Software + " takes a share of the device when it starts"
	case h.Kind == HolderInterpreted:
		habit = h.Software + " keeps memory beyond its need, caching it or taking a share of the device as GPU frameworks do, and no compiled code was seen beside it"
	default:
		habit = h.Software + " allocates what it uses"
	}
	return habit + ": " + h.Why
}

// Software is a piece of software the evidence shows a job runs.
type Software struct {
	Name string // a slurm.Software* name, or a compiled code's
	Why  string // where it was seen: "import torch in train.py, line 3"
}

// softwareKind is how a piece of software holds GPU memory by default, and
// the name in words of what holds it.
type softwareKind struct {
	kind, words string
	// on is the framework a library runs on (transformers on PyTorch): it
	// holds the memory, and its settings change how. "" for a framework.
	on string
	// layer orders the evidence of one kind, from the most telling: the
	// framework itself (0), a library on it (1), lines several frameworks
	// print alike (2).
	layer int
}

// softwareKinds says how each piece of software holds GPU memory by
// default. Compiled codes allocate what they use.
var softwareKinds = map[string]softwareKind{
	slurm.SoftwarePyTorch:      {HolderCaching, "PyTorch", "", 0},
	slurm.SoftwareCuPy:         {HolderCaching, "CuPy", "", 0},
	slurm.SoftwareJAX:          {HolderPreallocates, "JAX", "", 0},
	slurm.SoftwareTensorFlow:   {HolderPreallocates, "TensorFlow", "", 0},
	slurm.SoftwareTransformers: {HolderCaching, "PyTorch", slurm.SoftwarePyTorch, 1},
	slurm.SoftwarePEFT:         {HolderCaching, "PyTorch", slurm.SoftwarePyTorch, 1},
	slurm.SoftwareTRL:          {HolderCaching, "PyTorch", slurm.SoftwarePyTorch, 1},
	slurm.SoftwareDeepSpeed:    {HolderCaching, "PyTorch", slurm.SoftwarePyTorch, 1},
	slurm.SoftwareAccelerate:   {HolderCaching, "PyTorch", slurm.SoftwarePyTorch, 1},
	slurm.SoftwareLightning:    {HolderCaching, "PyTorch", slurm.SoftwarePyTorch, 1},
	slurm.SoftwareKeras:        {HolderPreallocates, "TensorFlow", slurm.SoftwareTensorFlow, 1}, // its default backend; KERAS_BACKEND
	slurm.SoftwareXLA:          {HolderPreallocates, "JAX or TensorFlow", "", 2},
	// vLLM reserves gpu_memory_utilization of the device (0.9 unless told)
	// at start, for its weights and as much KV cache as fits, over PyTorch.
	slurm.SoftwareVLLM:    {HolderPreallocates, "vLLM", "", 0},
	slurm.SoftwareGROMACS: {HolderAllocates, "GROMACS", "", 0},
	slurm.SoftwareNAMD:    {HolderAllocates, "NAMD", "", 0},
	slurm.SoftwareLAMMPS:  {HolderAllocates, "LAMMPS", "", 0},
	"amber":               {HolderAllocates, "Amber", "", 0},
	"vasp":                {HolderAllocates, "VASP", "", 0},
	"cp2k":                {HolderAllocates, "CP2K", "", 0},
	"quantum-espresso":    {HolderAllocates, "Quantum ESPRESSO", "", 0},
	"relion":              {HolderAllocates, "RELION", "", 0},
	SoftwareCompiled:      {HolderAllocates, "a compiled program", "", 0},
	// What an interpreter's program holds is its framework's: PyTorch, JAX,
	// TensorFlow, CuPy; R's torch and tensorflow; CUDA.jl's pool.
	slurm.SoftwarePython: {HolderInterpreted, "a Python framework", "", 0},
	slurm.SoftwareR:      {HolderInterpreted, "an R framework", "", 0},
	slurm.SoftwareJulia:  {HolderInterpreted, "a Julia framework", "", 0},
}

// SoftwareCompiled is a program of the job's own a script runs by its
// path (./solver, $HOME/bin/md): a compiled code, which allocates what it
// uses.
const SoftwareCompiled = "compiled"

// kerasBackends are KERAS_BACKEND's values that name a framework.
var kerasBackends = map[string]string{"tensorflow": slurm.SoftwareTensorFlow, "jax": slurm.SoftwareJAX, "torch": slurm.SoftwarePyTorch}

// holderRank orders the kinds from the one whose peak proves most: with
// several pieces of software, the least telling decides.
var holderRank = map[string]int{HolderAllocates: 1, HolderCaching: 2, HolderPreallocates: 3}

// HolderOf decides what held the job's memory from the software seen and
// the environment the script sets, which turns a framework's habits off.
// A library holds memory as the framework it runs on, which is named when
// both are seen. An interpreter decides only where nothing else does: its
// program runs on the GPU through a framework, unless a compiled code was
// seen beside it.
func HolderOf(seen []Software, env map[string]string) Holder {
	var h Holder
	var interpreted *Holder
	layer := 0
	for _, s := range seen {
		k, ok := softwareKinds[s.Name]
		if !ok {
			continue
		}
		if k.kind == HolderInterpreted {
			if interpreted == nil {
				interpreted = &Holder{Kind: HolderInterpreted, Software: k.words, Why: s.Why}
			}
			continue
		}
		on := k.on
		if b := kerasBackends[strings.ToLower(env["KERAS_BACKEND"])]; s.Name == slurm.SoftwareKeras && b != "" {
			on = b
		}
		kind, words, why := k.kind, k.words, s.Why
		if on != "" {
			kind, words = softwareKinds[on].kind, softwareKinds[on].words
		}
		if setting, changed := envKind(cmp.Or(on, s.Name), env); changed != "" {
			kind, why = changed, why+"; "+setting
		}
		if r := holderRank[kind]; r > holderRank[h.Kind] || r == holderRank[h.Kind] && k.layer < layer {
			h, layer = Holder{Kind: kind, Software: words, Why: why}, k.layer
		}
	}
	if h.Kind == HolderUnknown && interpreted != nil {
		return *interpreted
	}
	return h
}

// envKind is how the environment the script sets changes the way a
// framework holds memory: the setting in words and the kind it makes, or ""
// when nothing changes it.
func envKind(name string, env map[string]string) (setting, kind string) {
	is := func(k string, vs ...string) bool { return slices.Contains(vs, strings.ToLower(env[k])) }
	switch name {
	case slurm.SoftwarePyTorch:
		if is("PYTORCH_NO_CUDA_MEMORY_CACHING", "1", "true") {
			return "PYTORCH_NO_CUDA_MEMORY_CACHING=1 turns its cache off", HolderAllocates
		}
	case slurm.SoftwareJAX:
		switch {
		case is("XLA_PYTHON_CLIENT_ALLOCATOR", "platform"):
			return "XLA_PYTHON_CLIENT_ALLOCATOR=platform allocates what it uses", HolderAllocates
		case is("XLA_PYTHON_CLIENT_PREALLOCATE", "false", "0"):
			return "XLA_PYTHON_CLIENT_PREALLOCATE=false: it grows its pool as it needs, and keeps it", HolderCaching
		}
	case slurm.SoftwareTensorFlow:
		if is("TF_FORCE_GPU_ALLOW_GROWTH", "true", "1") {
			return "TF_FORCE_GPU_ALLOW_GROWTH=true: it grows its pool as it needs, and keeps it", HolderCaching
		}
	}
	return "", ""
}

// Python packages that name the framework beneath them.
var pythonPackages = map[string]string{
	"torch": slurm.SoftwarePyTorch, "torchvision": slurm.SoftwarePyTorch, "lightning": slurm.SoftwarePyTorch,
	"pytorch_lightning": slurm.SoftwarePyTorch, "transformers": slurm.SoftwarePyTorch, "peft": slurm.SoftwarePyTorch,
	"accelerate": slurm.SoftwarePyTorch, "deepspeed": slurm.SoftwarePyTorch, "trl": slurm.SoftwarePyTorch,
	"bitsandbytes": slurm.SoftwarePyTorch, "timm": slurm.SoftwarePyTorch,
	"jax": slurm.SoftwareJAX, "flax": slurm.SoftwareJAX, "optax": slurm.SoftwareJAX,
	"tensorflow": slurm.SoftwareTensorFlow, "keras": slurm.SoftwareTensorFlow, "tf_keras": slurm.SoftwareTensorFlow,
	"cupy": slurm.SoftwareCuPy, "vllm": slurm.SoftwareVLLM,
	"pytorch": slurm.SoftwarePyTorch, // in image and environment names only
}

// reImport is a Python import of a package, at the start of a statement:
// a file's line or a heredoc's, or python -c's text.
var reImport = lazyre.New(`(?:^|[;"'\s])(?:import|from)\s+([A-Za-z_][A-Za-z0-9_]*)`)

// Commands and modules of compiled codes, and the frameworks modules name.
var (
	commandSoftware = map[string]string{"gmx": slurm.SoftwareGROMACS, "gmx_mpi": slurm.SoftwareGROMACS,
		"gmx_d": slurm.SoftwareGROMACS, "mdrun": slurm.SoftwareGROMACS, "namd2": "namd", "namd3": "namd",
		"lmp": "lammps", "lmp_gpu": "lammps", "lmp_mpi": "lammps", "pmemd.cuda": "amber", "pmemd.cuda.MPI": "amber",
		"vasp_std": "vasp", "vasp_gam": "vasp", "vasp_ncl": "vasp", "vasp_gpu": "vasp", "pw.x": "quantum-espresso",
		"cp2k": "cp2k", "cp2k.psmp": "cp2k", "cp2k.popt": "cp2k", "cp2k.ssmp": "cp2k", "relion_refine": "relion",
		"relion_refine_mpi": "relion", "torchrun": slurm.SoftwarePyTorch, "deepspeed": slurm.SoftwarePyTorch,
		"accelerate": "accelerate", "vllm": slurm.SoftwareVLLM}
	moduleSoftware = map[string]string{"pytorch": slurm.SoftwarePyTorch, "torch": slurm.SoftwarePyTorch,
		"py-torch": slurm.SoftwarePyTorch, "pytorch-gpu": slurm.SoftwarePyTorch, "tensorflow": slurm.SoftwareTensorFlow,
		"tensorflow-gpu": slurm.SoftwareTensorFlow, "jax": slurm.SoftwareJAX, "gromacs": slurm.SoftwareGROMACS,
		"namd": "namd", "lammps": "lammps", "amber": "amber", "cupy": slurm.SoftwareCuPy, "vasp": "vasp", "cp2k": "cp2k",
		"quantum-espresso": "quantum-espresso", "qe": "quantum-espresso", "relion": "relion"}
	// reImageFramework finds a framework in a container image's or an
	// environment's name: pytorch_24.01.sif, docker://tensorflow/tensorflow.
	reImageFramework = lazyre.New(`(?i)(pytorch|torch|tensorflow|jax)`)
)

// maxScanned bounds what is read of each Python file a script runs, and
// how many are read: the sbatch wrapper reads them at submission.
const (
	maxScannedBytes = 256 << 10
	maxScannedFiles = 4
)

// ScriptSoftware reads what software the script runs, and the environment
// it sets: its commands (modules loaded, compiled codes, container images),
// the program each runs past its launchers (an interpreter, python -m's
// module, a program of the job's own found by its path), the script's own
// #! line, Python imports in its own lines (heredocs, python -c) and in the
// Python files it runs, found where sbatch runs it (--chdir), beside the
// script or in the working directory.
func ScriptSoftware(s *slurm.Script) ([]Software, map[string]string) {
	if s == nil {
		return nil, nil
	}
	var seen []Software
	add := func(name, why string) {
		if !slices.ContainsFunc(seen, func(x Software) bool { return x.Name == name }) {
			seen = append(seen, Software{name, why})
		}
	}
	env := map[string]string{}
	files := 0
	for _, cmd := range s.Commands() {
		words := cmd.Words
		for i, w := range words {
			if name, value, ok := slurm.Assignment(w); ok && (i == 0 || words[i-1] == "export" || isAssignment(words[i-1])) {
				env[name] = value
			}
		}
		line := cmd.Line
		for i, w := range words {
			base := filepath.Base(w)
			switch {
			case (w == "load" || w == "add") && i > 0 && (words[i-1] == "module" || words[i-1] == "ml"),
				i == 1 && words[0] == "ml" && w != "load":
				for _, m := range words[i:] {
					if name, ok := moduleSoftware[strings.ToLower(strings.SplitN(m, "/", 2)[0])]; ok {
						add(name, fmt.Sprintf("line %d loads module %s", line, m))
					}
				}
			case commandSoftware[base] != "" && !slurm.PrintOnly(words[0]):
				add(commandSoftware[base], fmt.Sprintf("line %d runs %s", line, base))
			case strings.HasSuffix(w, ".sif") || strings.HasPrefix(w, "docker://") || i > 0 && words[i-1] == "activate":
				if m := reImageFramework.FindStringSubmatch(base); m != nil {
					add(pythonPackages[strings.ToLower(m[1])], fmt.Sprintf("line %d runs %s", line, w))
				}
			case strings.HasSuffix(w, ".py") && !strings.Contains(w, "$") && !slurm.PrintOnly(words[0]) && files < maxScannedFiles:
				files++
				if pkg, at, ok := fileImports(w, s); ok {
					add(pythonPackages[pkg], fmt.Sprintf("%s imports %s (its line %d)", w, pkg, at))
				}
			}
		}
		if at := programAt(words); at >= 0 {
			w := words[at]
			name, own := programSoftware(w)
			if own && files < maxScannedFiles {
				// A script with no extension says what it is on its #! line
				// (./train may be Python's, ./run a shell's); a program that
				// cannot be read is taken for the compiled code a path names
				// most often.
				files++
				var script bool
				name, script = fileInterpreter(w, s)
				own = !script
			}
			switch {
			case name != "":
				add(name, fmt.Sprintf("line %d runs %s", line, filepath.Base(w)))
				if mod, fw := moduleRun(words[at+1:]); name == slurm.SoftwarePython && fw != "" {
					add(fw, fmt.Sprintf("line %d runs %s -m %s", line, filepath.Base(w), mod))
				}
			case own:
				add(SoftwareCompiled, fmt.Sprintf("line %d runs %s", line, w))
			}
		}
	}
	if in, ok := slurm.ReadInterpreter(s.Data); ok {
		// A batch script that is itself a program (#!/usr/bin/env python3).
		if name := interpreterOf(in); name != "" {
			add(name, "its #! line runs "+name)
		}
	}
	for _, ln := range s.Lines {
		if ln.Kind != slurm.LineCommand {
			continue
		}
		text := s.LineText(ln.Num)
		if words := slurm.SplitShell(text); len(words) > 0 && len(words[0]) > 0 && slurm.PrintOnly(words[0][0]) {
			continue // echo "import torch" prints, runs nothing
		}
		if pkg, ok := importsIn(text); ok {
			add(pythonPackages[pkg], fmt.Sprintf("line %d imports %s", ln.Num, pkg))
		}
	}
	return seen, env
}

// reInterpreter is an interpreter a command runs: python, python3.11,
// ipython; Rscript and R; julia.
var reInterpreter = lazyre.New(`^(?:(python|ipython|pypy)[0-9.]*|(Rscript|R)|(julia))$`)

// interpreters names the interpreter a program is, or "".
func interpreters(base string) string {
	m := reInterpreter.FindStringSubmatch(base)
	switch {
	case m == nil:
		return ""
	case m[1] != "":
		return slurm.SoftwarePython
	case m[2] != "":
		return slurm.SoftwareR
	}
	return slurm.SoftwareJulia
}

// launchers run the command their arguments name (srun python x.py,
// apptainer exec IMAGE python, conda run -n ENV python, timeout 2h ./md).
var launchers = map[string]bool{"srun": true, "mpirun": true, "mpiexec": true, "ibrun": true, "jsrun": true, "aprun": true,
	"charmrun": true, "apptainer": true, "singularity": true, "exec": true, "run": true, "numactl": true, "taskset": true,
	"nice": true, "stdbuf": true, "timeout": true, "nsys": true, "profile": true, "ncu": true, "compute-sanitizer": true,
	"cuda-memcheck": true, "conda": true, "mamba": true, "micromamba": true, "uv": true, "pixi": true, "poetry": true}

// reLauncherValue is a word among a launcher's arguments that is no
// program: a count, a duration, a container image.
var reLauncherValue = lazyre.New(`^[0-9][0-9.]*[smhd]?$|\.(?:sif|simg|img)$|^(?:docker|library|oras|shub|docker-archive)://`)

// programAt is the index of the word that names the program a simple
// command runs, past assignments, prefixes (time, env, exec), launchers
// with their options and their options' values; -1 for none or a command
// that runs nothing (echo, module).
func programAt(words []string) int {
	launched, afterOption := false, false
	for i, w := range words {
		base := filepath.Base(w)
		switch {
		case isAssignment(w) || w == "export" && i == 0:
		case launchers[base] || slurm.CommandPrefix(base): // time -v, env -i take options too
			launched = true
		case launched && (strings.HasPrefix(w, "-") || reLauncherValue.MatchString(w)):
			afterOption = strings.HasPrefix(w, "-") && !strings.Contains(w, "=")
			continue
		case i == 0 && slurm.PrintOnly(w):
			return -1
		case launched && afterOption && !strings.Contains(w, "/") && interpreters(base) == "" && !strings.HasSuffix(w, ".py"):
			// the value of the option before it (mpirun --bind-to core)
		default:
			return i
		}
		afterOption = false
	}
	return -1
}

// scriptExtensions are the programs run by an interpreter of their
// extension; a shell script says nothing of itself.
var scriptExtensions = map[string]string{".py": slurm.SoftwarePython, ".R": slurm.SoftwareR, ".jl": slurm.SoftwareJulia,
	".sh": "", ".bash": "", ".csh": "", ".zsh": "", ".pl": "", ".rb": ""}

// systemTools are programs found by their path that are not the job's own.
var systemTools = map[string]bool{"nvidia-smi": true, "hostname": true, "date": true, "sleep": true, "env": true,
	"time": true, "true": true, "false": true, "bash": true, "sh": true}

// programSoftware is what the program a command runs says: the interpreter
// it is or its script's extension calls; own where it is a program of the
// job's own, found by its path (./solver, $HOME/bin/md, not /usr/bin/...
// or a script of the shell's), which is a compiled code unless its #! line
// says otherwise.
func programSoftware(w string) (name string, own bool) {
	base := filepath.Base(w)
	if name := interpreters(base); name != "" {
		return name, false
	}
	if name, ok := scriptExtensions[filepath.Ext(base)]; ok {
		return name, false
	}
	for _, dir := range []string{"/bin/", "/usr/bin/", "/sbin/", "/usr/sbin/"} {
		if strings.HasPrefix(w, dir) {
			return "", false
		}
	}
	return "", strings.Contains(w, "/") && !systemTools[base] && commandSoftware[base] == ""
}

// fileInterpreter reads a program's #! line: whether it is a script, and
// the interpreter it names ("" for a shell's).
func fileInterpreter(name string, s *slurm.Script) (string, bool) {
	f := openNear(name, s)
	if f == nil {
		return "", false
	}
	defer f.Close()
	var head [256]byte
	n, _ := io.ReadFull(f, head[:])
	in, ok := slurm.ReadInterpreter(head[:n])
	if !ok {
		return "", false
	}
	return interpreterOf(in), true
}

// interpreterOf names the interpreter a #! line runs, or "" (a shell).
func interpreterOf(in slurm.Interpreter) string {
	prog := in.Program
	if filepath.Base(prog) == "env" { // #!/usr/bin/env -S python3 -u: the first word past env's options
		prog = ""
		for _, w := range strings.Fields(in.Arg) {
			if !strings.HasPrefix(w, "-") {
				prog = w
				break
			}
		}
	}
	return interpreters(filepath.Base(prog))
}

// moduleRun is the module python -m runs (python -m
// torch.distributed.run), from the interpreter's arguments, and the
// framework it names; "" for none.
func moduleRun(args []string) (module, framework string) {
	for i, a := range args {
		switch {
		case a == "-m" && i+1 < len(args):
			pkg, _, _ := strings.Cut(args[i+1], ".")
			return args[i+1], pythonPackages[pkg]
		case !strings.HasPrefix(a, "-"):
			return "", ""
		}
	}
	return "", ""
}

// isAssignment reports whether a word sets a shell variable (NAME=value).
func isAssignment(word string) bool {
	_, _, ok := slurm.Assignment(word)
	return ok
}

// importsIn reads a line for an import of a framework's package: the
// package's name.
func importsIn(line string) (string, bool) {
	if !strings.Contains(line, "import") {
		return "", false
	}
	for _, m := range reImport.FindAllStringSubmatch(line, -1) {
		if _, ok := pythonPackages[m[1]]; ok {
			return m[1], true
		}
	}
	return "", false
}

// fileImports reads a Python file the script runs for a framework's
// import: the package and the import's line. A relative name is looked for
// where sbatch runs the script (its --chdir), beside the script, and in the
// working directory.
func fileImports(name string, s *slurm.Script) (string, int, bool) {
	f := openNear(name, s)
	if f == nil {
		return "", 0, false
	}
	data, err := io.ReadAll(io.LimitReader(f, maxScannedBytes))
	f.Close()
	if err != nil {
		return "", 0, false
	}
	for i, line := range strings.Split(string(data), "\n") {
		if pkg, ok := importsIn(line); ok {
			return pkg, i + 1, true
		}
	}
	return "", 0, false
}

// openNear opens a file the script names: a relative name where sbatch
// runs the script (its --chdir), beside the script, or in the working
// directory. nil when none opens.
func openNear(name string, s *slurm.Script) *os.File {
	places := []string{name}
	if !filepath.IsAbs(name) {
		places = nil
		if o := s.LastOption("chdir"); o != nil && filepath.IsAbs(o.Value) {
			places = append(places, filepath.Join(o.Value, name))
		}
		places = append(places, filepath.Join(filepath.Dir(s.Path), name), name)
	}
	for _, p := range places {
		if f, err := os.Open(p); err == nil {
			return f
		}
	}
	return nil
}

// oomSoftware names the software of an out-of-memory message's source
// (slurm.OOMEvent.Source; "pytorch-mig-assert" is PyTorch's too,
// "julia-cuda" CUDA.jl's, under Julia).
var oomSoftware = map[string]string{"pytorch": slurm.SoftwarePyTorch, "tensorflow": slurm.SoftwareTensorFlow, "jax": slurm.SoftwareJAX,
	"cupy": slurm.SoftwareCuPy, "julia": slurm.SoftwareJulia, "vllm": slurm.SoftwareVLLM, "lammps": slurm.SoftwareLAMMPS}

// SoftwareOfRecord is the software a job's record shows it ran: the names
// of its versions (those whose holding of memory is known), and the
// framework of its OOM message (oomSource, slurm.OOMEvent.Source).
func SoftwareOfRecord(versions map[string]string, oomSource string) []string {
	var out []string
	for name := range versions {
		if _, ok := softwareKinds[name]; ok {
			out = append(out, name)
		}
	}
	for source, name := range oomSoftware {
		if strings.HasPrefix(oomSource, source) && !slices.Contains(out, name) {
			out = append(out, name)
		}
	}
	slices.Sort(out)
	return out
}

// HolderOfRecord is what held a job's memory as its own record shows it
// (the software its output showed): what its peak proves, for a list of
// jobs. recommend reads the script too.
func HolderOfRecord(r *history.JobRecord) Holder {
	names := SoftwareOfRecord(r.Versions, r.GPUOOM)
	seen := make([]Software, 0, len(names))
	for _, n := range names {
		seen = append(seen, Software{n, fmt.Sprintf("job %s's output shows %s", r.JobID, n)})
	}
	return HolderOf(seen, nil)
}
