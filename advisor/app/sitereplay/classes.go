package sitereplay

// A class is a kind of GPU job a MIG site runs, with what is true of it
// (its need, its runtime on each profile) and what the site's evidence
// shows of it (the peak a sampler sees, the utilisation, the output).
// Runtimes on the slices scale as Wulver's published tables scale for the
// workloads they publish (catalog/data/reference/wulver), and as a job of
// that kind plausibly would for the rest; each ratio is the runtime on the
// profile over the runtime on a whole A100.
type class struct {
	name string
	// ratio is the runtime on 1g.10gb, 2g.20gb, 3g.40gb and full over the
	// runtime on full. A session's is 1 everywhere: the time it is held
	// does not depend on the slice.
	ratio [4]float64
	// needGiB is the GPU memory the job truly needs, drawn in [lo, hi].
	needGiB [2]float64
	// holder says how the memory a sampler sees relates to the need.
	holder holding
	// heldGiB: a caching framework's reserve on a whole GPU, drawn in
	// [lo, hi] (at least the need); a preallocator's share of the device.
	heldGiB [2]float64
	// util is the mean GPU utilisation on a whole GPU, %, drawn in [lo, hi].
	util [2]float64
	// hours on a whole GPU, drawn in [lo, hi].
	hours [2]float64
	cpus  int
	memGB int
	// output writes the job's output file; nil: the job leaves none.
	output outputFunc
	// session: an interactive allocation (salloc, Open OnDemand).
	session bool
	// fixedTime: the job runs until its time limit, doing what work it can.
	fixedTime bool
	// gpus per job; 0 or 1: one.
	gpus int
}

// holding is what a GPU memory sampler sees of a job's need.
type holding int

const (
	// holdsNeed: a compiled code, or a framework that allocates what it
	// uses: the peak is the need.
	holdsNeed holding = iota
	// caches: PyTorch's caching allocator, Hugging Face on it: the peak is
	// the need plus a reserve that grows with the device.
	caches
	// preallocates: JAX (75% of the device) or TensorFlow (nearly all of
	// it) take a share of the device when they start.
	preallocates
)

// Profiles are the profiles of the month's site (Wulver's), smallest first.
var Profiles = [4]string{"1g.10gb", "2g.20gb", "3g.40gb", "full"}

// usableGiB is each profile's usable memory, as the site file says.
var usableGiB = [4]float64{9.5, 19.5, 39.5, 79.3}

// gresType is each profile's Slurm GPU type at Wulver.
var gresType = [4]string{"a100_10g", "a100_20g", "a100_40g", "a100"}

// The classes. Wulver's tables give GROMACS (499, 266, 187, 182 s), the
// QLoRA fine-tuning (1.092, 0.556, 0.353, 0.267 h; 5.68 GB allocated,
// 23.55 GB reserved on the whole GPU) and the CIFAR-10 and MNIST CNNs (on
// the slices; the whole GPU taken as 7% faster than 3g.40gb, as the slices
// themselves flatten); the matrix product scales with the SMs' TFLOPs.
var classes = map[string]*class{
	"gromacs": {name: "gromacs", ratio: [4]float64{2.740, 1.460, 1.027, 1}, needGiB: [2]float64{0.6, 1.6}, holder: holdsNeed,
		util: [2]float64{30, 55}, hours: [2]float64{3, 10}, cpus: 4, memGB: 16, output: gromacsOutput},
	"qlora": {name: "qlora", ratio: [4]float64{4.090, 2.082, 1.322, 1}, needGiB: [2]float64{5.9, 6.6}, holder: caches,
		heldGiB: [2]float64{22.5, 24.5}, util: [2]float64{70, 92}, hours: [2]float64{0.8, 3}, cpus: 1, memGB: 4, output: huggingFaceOutput},
	"resnet": {name: "resnet", ratio: [4]float64{1.571, 1.206, 1.072, 1}, needGiB: [2]float64{0.6, 1.4}, holder: caches,
		heldGiB: [2]float64{2.5, 5}, util: [2]float64{25, 45}, hours: [2]float64{1.2, 4}, cpus: 1, memGB: 4, output: cifarOutput},
	"deepcnn": {name: "deepcnn", ratio: [4]float64{2.003, 1.323, 1.076, 1}, needGiB: [2]float64{0.5, 1.2}, holder: caches,
		heldGiB: [2]float64{2, 4}, util: [2]float64{30, 55}, hours: [2]float64{1.5, 5}, cpus: 2, memGB: 8, output: cifarOutput},
	"mnist": {name: "mnist", ratio: [4]float64{1.384, 1.170, 1.050, 1}, needGiB: [2]float64{0.3, 0.8}, holder: caches,
		heldGiB: [2]float64{1, 2.5}, util: [2]float64{4, 15}, hours: [2]float64{1.1, 2.5}, cpus: 1, memGB: 4, output: mnistOutput},
	"matmul": {name: "matmul", ratio: [4]float64{7.396, 3.609, 2.406, 1}, needGiB: [2]float64{8, 18}, holder: holdsNeed,
		util: [2]float64{93, 99}, hours: [2]float64{1.5, 6}, cpus: 8, memGB: 32, output: cupyOutput},
	"jax": {name: "jax", ratio: [4]float64{1.70, 1.25, 1.08, 1}, needGiB: [2]float64{2, 6}, holder: preallocates,
		heldGiB: [2]float64{0.75, 0.75}, util: [2]float64{18, 40}, hours: [2]float64{1.5, 6}, cpus: 2, memGB: 16, output: jaxOutput},
	"keras": {name: "keras", ratio: [4]float64{1.85, 1.32, 1.10, 1}, needGiB: [2]float64{3, 8}, holder: preallocates,
		heldGiB: [2]float64{0.97, 0.97}, util: [2]float64{25, 50}, hours: [2]float64{1.5, 5}, cpus: 4, memGB: 16, output: kerasOutput},
	// A compiled solver, bound by memory bandwidth more than by the SMs.
	"solver": {name: "solver", ratio: [4]float64{3.10, 1.75, 1.18, 1}, needGiB: [2]float64{30.4, 33}, holder: holdsNeed,
		util: [2]float64{55, 80}, hours: [2]float64{2, 8}, cpus: 8, memGB: 32, output: solverOutput},
	// A model too big for any slice.
	"bigmodel": {name: "bigmodel", ratio: [4]float64{4.2, 2.2, 1.45, 1}, needGiB: [2]float64{44, 62}, holder: caches,
		heldGiB: [2]float64{66, 76}, util: [2]float64{60, 90}, hours: [2]float64{4, 12}, cpus: 8, memGB: 64, output: huggingFaceOutput},
	// A post-processing code whose peak is a short spike a 30 s sampler
	// mostly misses: Slurm sees 8.5–9.5 GB of the 10.6 GB it needs.
	"spiky": {name: "spiky", ratio: [4]float64{1.35, 1.12, 1.03, 1}, needGiB: [2]float64{10.4, 10.9}, holder: holdsNeed,
		util: [2]float64{6, 18}, hours: [2]float64{1.2, 3}, cpus: 2, memGB: 8, output: postprocOutput},
	// A training job that runs until its time limit (a time-budgeted
	// search): its work, not its runtime, depends on the slice.
	"fixedtime": {name: "fixedtime", ratio: [4]float64{1.9, 1.35, 1.12, 1}, needGiB: [2]float64{1.5, 3.5}, holder: caches,
		heldGiB: [2]float64{5, 9}, util: [2]float64{15, 35}, hours: [2]float64{4, 4}, cpus: 2, memGB: 8, output: fixedTimeOutput, fixedTime: true},
	// A PyTorch job that needs more than 1g.10gb: its runs there die.
	"midmodel": {name: "midmodel", ratio: [4]float64{2.6, 1.5, 1.15, 1}, needGiB: [2]float64{12, 15}, holder: caches,
		heldGiB: [2]float64{20, 28}, util: [2]float64{40, 70}, hours: [2]float64{1, 4}, cpus: 2, memGB: 16, output: torchOutput},
	"session": {name: "session", ratio: [4]float64{1, 1, 1, 1}, needGiB: [2]float64{0.8, 3}, holder: caches,
		heldGiB: [2]float64{2, 7}, util: [2]float64{1, 6}, hours: [2]float64{1, 4}, cpus: 4, memGB: 16, session: true},
	"ddp": {name: "ddp", ratio: [4]float64{1, 1, 1, 1}, needGiB: [2]float64{20, 40}, holder: caches,
		heldGiB: [2]float64{50, 70}, util: [2]float64{60, 90}, hours: [2]float64{3, 10}, cpus: 16, memGB: 64, output: torchOutput, gpus: 2},
}
