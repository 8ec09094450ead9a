package slurm

import (
	"bytes"

	"github.com/migadvisor/migadvisor/internal/lazyre"
)

// Software a job's output shows it ran, beyond its MIGADVISOR_VERSION
// lines: what holds a job's GPU memory decides what a peak of it proves
// (a caching or preallocating framework's peak is no need), so collect keeps
// what the output says of it. The names are those the MIGADVISOR_VERSION
// lines use (Python's package names); the version is "" where the line
// gives none.
const (
	SoftwarePyTorch    = "torch"
	SoftwareJAX        = "jax"
	SoftwareTensorFlow = "tensorflow"
	SoftwareGROMACS    = "gromacs"
	SoftwareNAMD       = "namd"
	SoftwareLAMMPS     = "lammps"
	SoftwareCuPy       = "cupy"
	// Libraries over a framework: Hugging Face's over PyTorch, Lightning
	// over PyTorch, Keras over TensorFlow (or the backend it is told).
	SoftwareTransformers = "transformers"
	SoftwarePEFT         = "peft"
	SoftwareTRL          = "trl"
	SoftwareLightning    = "lightning"
	SoftwareKeras        = "keras"
	SoftwareAccelerate   = "accelerate"
	SoftwareDeepSpeed    = "deepspeed"
	// SoftwareVLLM is vLLM, which reserves a share of the device
	// (gpu_memory_utilization) for its weights and KV cache at start.
	SoftwareVLLM = "vllm"
	// SoftwareXLA is XLA's own lines, which JAX and TensorFlow print alike.
	SoftwareXLA = "xla"
	// Interpreters: a program of theirs on the GPU runs through a framework.
	SoftwarePython = "python"
	SoftwareR      = "R"
	SoftwareJulia  = "julia"
)

// ansi is the colour codes a program writes around a word: "\x1b[1m",
// "\x1b[0m".
const ansi = `(?:\x1b\[[\d;]*m)*`

// softwareMark is a line only one piece of software prints: its log
// prefix, a traceback through its package, its banner, its progress.
type softwareMark struct {
	name  string
	gate  []byte // cheap test before the expression
	re    *lazyre.Regexp
	group int // the version's group in re; 0: none
}

var softwareMarks = []softwareMark{
	// Tracebacks and warnings through the package, PyTorch's own errors. A
	// package's path is site-packages' in a virtual environment or conda,
	// dist-packages' in NGC's and Debian's images
	// ("/usr/local/lib/python3.10/dist-packages/torch/..."), and starts
	// there in torchrun's own log lines ("W1126 22:01:25.726000 3361578
	// site-packages/torch/distributed/run.py:792]", PyTorch 2.5). Its own
	// log lines since 2.4, from its source tree ("W1114 17:59:52.294000
	// 3097815 torch/distributed/run.py:774] Setting OMP_NUM_THREADS ...",
	// "W0312 10:00:00.123000 140123 torch/_dynamo/convert_frame.py:844]"),
	// torch.load's warning (2.4), torchvision's download of a model's
	// weights, the error a device's failure raises since 2.8
	// ("torch.AcceleratorError: CUDA error: out of memory").
	{SoftwarePyTorch, []byte("torch"), lazyre.New(`\b(?:site|dist)-packages[/\\]torch(?:vision|audio)?[/\\]|\btorch\.(?:OutOfMemoryError|cuda\.OutOfMemoryError|distributed\.|AcceleratorError\b)|\bCUDACachingAllocator\b|` +
		`\b[IWEF]\d{4} \d\d:\d\d:\d\d\.\d+ +\d+ (?:\S*[/\\])?torch[/\\]_?\w+[/\\]|` +
		"You are using `torch\\.load` with `weights_only=False`|" +
		`^Downloading: "https://download\.pytorch\.org/models/`), 0},
	// c10d's warnings, with the rank torchrun prefixes ("[rank0]:[W530
	// 08:34:35.154236112 ProcessGroupNCCL.cpp:1250] Warning: ...", 2.4).
	{SoftwarePyTorch, []byte("ProcessGroupNCCL"), lazyre.New(`\bProcessGroupNCCL\.cpp:\d+\]`), 0},
	// Hugging Face: transformers' progress as it loads a sharded model
	// ("Loading checkpoint shards: 100%|...| 2/2"), its Trainer's log
	// lines, printed as Python dicts ("{'loss': 1.87, 'grad_norm': 0.45,
	// 'learning_rate': 0.0002, 'epoch': 0.25}", "{'train_runtime': 612.3,
	// ...}"; newer releases quote the figures, "{'loss': '1.873', ...}")
	// through tqdm.write, after the bar it clears on the same line; a
	// program's own dict of a loss and an epoch is not the Trainer's, which
	// logs the learning rate, the evaluation's runtime or the training's),
	// and tracebacks through the packages.
	{SoftwareTransformers, []byte("Loading checkpoint shards"), lazyre.New(`Loading checkpoint shards:`), 0},
	// Its warnings as it loads a model and generates ("Some weights of
	// BertForSequenceClassification were not initialized from the model
	// checkpoint at bert-base-uncased ...", "Setting `pad_token_id` to
	// `eos_token_id`:2 for open-end generation."), its Trainer's header
	// ("***** Running training *****").
	{SoftwareTransformers, []byte("from the model checkpoint"), lazyre.New(`^Some weights of (?:the model checkpoint at \S+ were not used when initializing|\S+ were not initialized from the model checkpoint)`), 0},
	{SoftwareTransformers, []byte("***** Running"), lazyre.New(`^\*{5} Running (?:training|Evaluation|Prediction) \*{5}`), 0},
	{SoftwareTransformers, []byte("for open-end generation"), lazyre.New("^Setting `pad_token_id` to `eos_token_id`:\\S+ for open-end generation"), 0},
	{SoftwareTransformers, []byte("'epoch': "), lazyre.New(`\{'loss': '?[-\d.e+]+'?, (?:'grad_norm': [^,]+, )?'learning_rate': .*'epoch': '?[\d.e+-]+'?\}|` +
		`\{'eval_loss': .*'eval_runtime': .*'epoch': '?[\d.e+-]+'?\}|\{'train_runtime': '?[\d.e+-]+'?, .*'epoch': '?[\d.e+-]+'?\}`), 0},
	{SoftwareTransformers, []byte("transformers"), lazyre.New(`\b(?:site|dist)-packages[/\\]transformers[/\\]`), 0},
	// PEFT's print_trainable_parameters(): "trainable params: 4,194,304 ||
	// all params: 3,504,607,232 || trainable%: 0.1197".
	{SoftwarePEFT, []byte("trainable%"), lazyre.New(`trainable params: [\d,]+ \|\| all params: [\d,]+ \|\| trainable%`), 0},
	{SoftwarePEFT, []byte("peft"), lazyre.New(`\b(?:site|dist)-packages[/\\]peft[/\\]`), 0},
	// Accelerate's tracebacks (its own lines come with the commands).
	{SoftwareAccelerate, []byte("accelerate"), lazyre.New(`\b(?:site|dist)-packages[/\\]accelerate[/\\]`), 0},
	// Accelerate's warnings as it launches ("The following values were not
	// passed to `accelerate launch` and had defaults used instead:") and
	// of an old kernel ("Detected kernel version 4.18.0, which is below
	// the recommended minimum of 5.5.0; this can cause the process to
	// hang.").
	{SoftwareAccelerate, []byte("accelerate launch"), lazyre.New("were not passed to `accelerate launch` and had defaults used instead"), 0},
	{SoftwareAccelerate, []byte("Detected kernel version"), lazyre.New(`^Detected kernel version [\d.]+, which is below the recommended minimum of [\d.]+; this can cause the process to hang`), 0},
	// DeepSpeed's log lines, one with its version ("[2024-09-15
	// 00:13:05,386] [INFO] [real_accelerator.py:203:get_accelerator]
	// Setting ds_accelerator to cuda (auto detect)", "... DeepSpeed info:
	// version=0.14.4, git-hash=unknown, git-branch=unknown").
	{SoftwareDeepSpeed, []byte("ds_accelerator"), lazyre.New(`\] Setting ds_accelerator to \w+`), 0},
	{SoftwareDeepSpeed, []byte("DeepSpeed info: version="), lazyre.New(`DeepSpeed info: version=([^,\s]+)`), 1},
	{SoftwareTRL, []byte("trl"), lazyre.New(`\b(?:site|dist)-packages[/\\]trl[/\\]`), 0},
	// PyTorch Lightning's banner ("GPU available: True (cuda), used: True";
	// 1.x: "GPU available: True, used: True"), alone or through Python's
	// logging ("INFO: ...", "INFO:lightning.pytorch.utilities.rank_zero:..."),
	// the device each rank sees, its model summary's header.
	{SoftwareLightning, []byte("available: True"), lazyre.New(`\bGPU available: True(?: \(cuda\))?, used: True`), 0},
	{SoftwareLightning, []byte("LOCAL_RANK"), lazyre.New(`\bLOCAL_RANK: \d+ - CUDA_VISIBLE_DEVICES: \[`), 0},
	// Lightning 2's advice on a device with Tensor Cores ("You are using a
	// CUDA device ('NVIDIA A100-SXM4-80GB') that has Tensor Cores. ..."),
	// the end of a fit ("`Trainer.fit` stopped: `max_epochs=10`
	// reached."), its bar with the logger's version ("Epoch 0: 100%|...|
	// 1563/1563 [00:30<00:00, 51.2it/s, v_num=0, train_loss=0.300]").
	{SoftwareLightning, []byte("that has Tensor Cores"), lazyre.New(`^You are using a CUDA device \('[^']+'\) that has Tensor Cores`), 0},
	{SoftwareLightning, []byte("Trainer.fit` stopped"), lazyre.New("`Trainer\\.fit` stopped: "), 0},
	{SoftwareLightning, []byte("v_num="), lazyre.New(`\| \d+/\d+ \[[\d:]+<[\d:?]+, [^\]]*\bv_num=`), 0},
	{SoftwareLightning, []byte("| Params"), lazyre.New(`^\s*\| Name\s+\| Type\s+\| Params\b`), 0},
	{SoftwareLightning, []byte("lightning"), lazyre.New(`\b(?:site|dist)-packages[/\\](?:pytorch_)?lightning[/\\]`), 0},
	// Keras' progress of an epoch, as it lands in a file: on Linux it
	// redraws the bar even where the output is no terminal, each update
	// after backspaces and a carriage return on the same line, Keras 3's in
	// colour ("\r\x1b[1m 12/469\x1b[0m \x1b[37m━━━━\x1b[0m \x1b[1m2s\x1b[0m
	// 5ms/step - loss: ...\x08\x08...\r\x1b[1m469/469\x1b[0m ..."), Keras 2's
	// with an ETA until the epoch's last ("\r 13/469 [====>.....] - ETA: 1s
	// - loss: ...", "469/469 [=====] - 5s 10ms/step - ..."; an epoch's line
	// may be longer than what is read of a line, so the first update
	// counts); verbose=2's, one line an epoch (Keras 3's "469/469 - 5s -
	// 10ms/step - loss: ...", tf.keras 2's "469/469 - 5s - loss: ... -
	// 5s/epoch - 10ms/step"); Keras 3's model summary, in a box. "Epoch
	// 1/10" alone is not Keras': other programs print it too, and so is a
	// count of steps with a time a step ("100/1000 - 2s - 12ms/step").
	{SoftwareKeras, []byte("━"), lazyre.New(`(?:^|[\r\x08])\s*` + ansi + `\s*\d+/\d+` + ansi + ` (?:` + ansi + `[━─]+` + ansi + `)+ +` + ansi + `\S+?` + ansi + ` \d+(?:ms|us|s)/step\b`), 0},
	{SoftwareKeras, []byte("] - "), lazyre.New(`(?:^|[\r\x08])\s*\d+/\d+ \[[=>.]+\] - (?:ETA: |\S+ \d+(?:ms|us|s)/step\b)`), 0},
	{SoftwareKeras, []byte("/step"), lazyre.New(`^\s*\d+/\d+ - \S+ - (?:\d+(?:ms|us|s)/step - \w+: |.* - \d+(?:ms|us|s)/epoch - \d+(?:ms|us|s)/step\s*$)`), 0},
	{SoftwareKeras, []byte("Layer (type)"), lazyre.New(`^┃ Layer \(type\)\s+┃ Output Shape`), 0},
	{SoftwareKeras, []byte("keras"), lazyre.New(`\b(?:site|dist)-packages[/\\](?:tf_)?keras[/\\]`), 0},
	// vLLM: its engine's start with its version ("INFO 10-06 15:56:35
	// [core.py:77] Initializing a V1 LLM engine (v0.11.0) with config: ...",
	// a V1 engine's lines prefixed "(EngineCore_DP0 pid=41565) "; 0.5's
	// "Initializing an LLM engine (v0.5.0)"), its share of the device ("the
	// current vLLM instance can use total_gpu_memory (79.15GiB) x
	// gpu_memory_utilization (0.70) = 55.09GiB", 0.9), its errors that ask
	// for more of it, the platform it found (0.7: "INFO 09-01 08:52:22
	// __init__.py:190] Automatically detected platform cuda."). Its "Loading
	// safetensors checkpoint shards" is SGLang's too.
	{SoftwareVLLM, []byte("LLM engine (v"), lazyre.New(`Initializing an? (?:V1 )?LLM engine \(v([^)\s]+)\)`), 1},
	{SoftwareVLLM, []byte("gpu_memory_utilization"), lazyre.New("the current vLLM instance can use total_gpu_memory|Try increasing `gpu_memory_utilization`"), 0},
	{SoftwareVLLM, []byte("detected platform"), lazyre.New(`^(?:\(\w+ pid=\d+\) )?INFO \d\d-\d\d \d\d:\d\d:\d\d \[?[\w.]+\.py:\d+\] Automatically detected platform \w+`), 0},
	// JAX: tracebacks and errors, the devices as it prints them
	// ("[CudaDevice(id=0)]", 0.4.20's "[cuda(id=0), cuda(id=1)]", older
	// "[StreamExecutorGpuDevice(id=0, ...)]", "[GpuDevice(id=0,
	// process_index=0)]"). A device as str, "gpu:0", is no mark: it is how
	// Slurm writes a GPU (squeue's and sinfo's gres, "gpu:1").
	{SoftwareJAX, []byte("jax"), lazyre.New(`\b(?:site|dist)-packages[/\\]jax(?:lib)?[/\\]|\bjaxlib\.xla_extension\.XlaRuntimeError\b|\bjax\._src\.|\bjax\.errors\.|\bjaxlib\._jax\.`), 0},
	// jaxlib's own XLA logs under external/xla/ ("W
	// external/xla/xla/service/gpu/nvptx_compiler.cc:760] ..."; TensorFlow's
	// is external/local_xla/).
	{SoftwareJAX, []byte("external/xla/"), lazyre.New(`(?:^|\s)[IWEF] external/xla/xla/`), 0},
	{SoftwareJAX, []byte("Device(id="), lazyre.New(`\b(?:Cuda|Gpu|StreamExecutorGpu|Rocm)Device\(id=\d+`), 0},
	{SoftwareJAX, []byte("(id="), lazyre.New(`\[(?:cuda|gpu|rocm)\(id=\d+\)`), 0},
	// XLA's service on the GPU ("XLA service 0x... initialized for platform
	// CUDA", "StreamExecutor device (0): NVIDIA A100-SXM4-80GB, Compute
	// Capability 8.0"): JAX's, or TensorFlow's, which names itself on
	// other lines.
	{SoftwareXLA, []byte("XLA service"), lazyre.New(`XLA service \S+ initialized for platform (?:CUDA|ROCM)`), 0},
	{SoftwareXLA, []byte("StreamExecutor device"), lazyre.New(`StreamExecutor device \(\d+\): `), 0},
	// TensorFlow's log lines ("I tensorflow/core/...", "W external/local_xla/...")
	// and the one that says how much of the device it mapped.
	{SoftwareTensorFlow, []byte("tensorflow"), lazyre.New(`\b[IWEF] tensorflow/|\b(?:site|dist)-packages[/\\]tensorflow[/\\]|Created device /job:\S+ with \d+ MB memory`), 0},
	{SoftwareTensorFlow, []byte("Created device"), lazyre.New(`Created device /job:\S+ with \d+ MB memory`), 0},
	// TensorFlow 2.15+ logs XLA's and TSL's lines from its own copies ("E
	// external/local_xla/xla/stream_executor/cuda/cuda_fft.cc:477] Unable to
	// register cuFFT factory ...").
	{SoftwareTensorFlow, []byte("external/local_"), lazyre.New(`(?:^|\s)[IWEF] external/local_(?:xla|tsl)/`), 0},
	// CuPy: its errors ("cupy.cuda.memory.OutOfMemoryError: Out of memory
	// allocating ..."), tracebacks through its package and its compiled
	// modules ("File "cupy/_core/core.pyx", line 1,476").
	{SoftwareCuPy, []byte("cupy"), lazyre.New(`\bcupy(?:_backends)?\.cuda\.|\b(?:site|dist)-packages[/\\]cupy(?:_backends)?[/\\]|"cupy(?:_backends)?/\S+\.pyx"`), 0},
	// GROMACS's banner: ":-) GROMACS - gmx mdrun, 2023.3 (-:".
	{SoftwareGROMACS, []byte("GROMACS"), lazyre.New(`GROMACS - gmx\S* \S+, (\S+) \(-:|^GROMACS version:\s+(\S+)`), 1},
	// NAMD's and LAMMPS' banners, with their versions ("Info: NAMD 3.0.1 for
	// Linux-x86_64-multicore-CUDA", "LAMMPS (2 Aug 2023 - Update 3)"): a
	// compiled code, whose peak is its need even where a Python script
	// beside it fails with a traceback.
	{SoftwareNAMD, []byte("Info: NAMD"), lazyre.New(`^Info: NAMD (\S+) for \S+`), 1},
	{SoftwareLAMMPS, []byte("LAMMPS ("), lazyre.New(`^LAMMPS \((\d{1,2} \w{3} \d{4}(?: - [^)]*)?)\)\s*$`), 1},
	// The interpreters, by how they stop: Python's traceback (with the
	// prefix torchrun's ranks print since PyTorch 2.4, "[rank0]: ", or srun
	// --label's, "0: "), Rscript's last line on an error, Julia's error in a
	// script.
	{SoftwarePython, []byte("Traceback"), lazyre.New(`^` + rankPrefix + `Traceback \(most recent call last\):`), 0},
	{SoftwareR, []byte("Execution halted"), lazyre.New(`^Execution halted\s*$`), 0},
	{SoftwareJulia, []byte("LoadError"), lazyre.New(`^ERROR: LoadError: `), 0},
	// Julia's stack trace through CUDA.jl ("    @ CUDA
	// ~/.julia/packages/CUDA/35NC6/lib/cudadrv/libcuda.jl:30"), and the
	// script it ran ("in expression starting at /home/u/run.jl:12").
	{SoftwareJulia, []byte(".julia"), lazyre.New(`@ CUDA ~?\S*[/\\]\.julia[/\\]packages[/\\]CUDA[/\\]`), 0},
	{SoftwareJulia, []byte("in expression starting at"), lazyre.New(`^in expression starting at \S+\.jl:\d+$`), 0},
}

// markPairs are the pairs of adjacent bytes of each mark's gate, in the
// order of softwareMarks.
var markPairs = func() []bytePairs {
	out := make([]bytePairs, len(softwareMarks))
	for i, m := range softwareMarks {
		out[i] = pairsOf(m.gate)
	}
	return out
}()

// bytePairs is a set of pairs of adjacent bytes, hashed into 256 bits. A
// line holds a gate only if it holds every pair of it: one pass over the
// line rules out most of the marks' gates, where a search for each reads
// the line once a mark (with the marks of the whole class of frameworks,
// that halved the speed of a scan of a job's output).
type bytePairs [4]uint64

func pairsOf(b []byte) bytePairs {
	var p bytePairs
	for i := 1; i < len(b); i++ {
		h := (uint(b[i-1])*31 + uint(b[i])) & 255
		p[h>>6] |= 1 << (h & 63)
	}
	return p
}

func (p *bytePairs) holds(q *bytePairs) bool {
	return p[0]&q[0] == q[0] && p[1]&q[1] == q[1] && p[2]&q[2] == q[2] && p[3]&q[3] == q[3]
}

// software notes the software a line shows, keeping a version the job
// printed itself (MIGADVISOR_VERSION) over none.
func (s *scanner) software(b []byte) {
	line := pairsOf(b)
	for i := range markPairs {
		if !line.holds(&markPairs[i]) {
			continue
		}
		m := &softwareMarks[i]
		if !bytes.Contains(b, m.gate) {
			continue
		}
		if v, seen := s.ev.Versions[m.name]; seen && (v != "" || m.group == 0) {
			continue // known, or this mark gives no version
		}
		sub := m.re.Get().FindSubmatch(b)
		if sub == nil {
			continue
		}
		version := ""
		for _, g := range sub[1:] {
			if m.group > 0 && len(g) > 0 {
				version = string(g)
				break
			}
		}
		s.setVersion(m.name, version)
	}
}

// setVersion records a piece of software and its version ("" unknown):
// a version replaces none, and the names kept stay bounded.
func (s *scanner) setVersion(name, version string) {
	ev := s.ev
	if ev.Versions == nil {
		ev.Versions = map[string]string{}
	}
	old, ok := ev.Versions[name]
	switch {
	case ok && version == "" && old != "":
	case ok || len(ev.Versions) < maxVersions:
		ev.Versions[name] = version
	}
}

// rankPrefix is what starts each line of a rank's output: torchrun's
// "[rank1]: " (PyTorch 2.4), srun --label's "1: ".
const rankPrefix = `(?:\[rank\d+\]: ?|\d+: )?`

// reErrorLine is a line that reads as an error: a Python exception
// ("ModuleNotFoundError: No module named 'x'", a rank's "[rank1]:
// torch.OutOfMemoryError: ..."), a program's or Slurm's "error:" ("srun:
// error: ...", "error: ..."), and anywhere in a line a crash as the shell
// reports it ("line 8: 1234 Segmentation fault").
var reErrorLine = lazyre.New(`^\s*` + rankPrefix + `(?:[A-Za-z_][\w.]*(?:Error|Exception)(?::|$)|(?:\S+: )?(?:error|ERROR|Error|FATAL|Fatal error)\b\s*[:!])|Segmentation fault|Bus error|Aborted \(core dumped\)`)

// errorGates are cheap tests before reErrorLine: a line that holds none of
// them is no error line.
var errorGates = [][]byte{[]byte("rror"), []byte("xception"), []byte("FATAL"), []byte("fault"), []byte("Aborted")}

// firstError notes the line when it is the output's first error line.
func (s *scanner) firstError(b []byte, n int) {
	hit := false
	for _, g := range errorGates {
		if bytes.Contains(b, g) {
			hit = true
			break
		}
	}
	if !hit || !reErrorLine.Get().Match(b) {
		return
	}
	s.ev.FirstError = &ErrorLine{Line: n, Text: shorten(string(bytes.TrimSpace(b)))}
}
