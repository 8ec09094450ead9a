package accuracy

// The emulation gate: which emulated workloads are scored, in which role,
// against which of Wulver's published ratios, and what the scores must show
// for a claim to be made. It was fixed (2026-12-06) before the capture it
// judges, testdata/nvml/h100-emulate-gate, was taken; the earlier captures,
// testdata/nvml/h100-emulate-workloads, were seen while the runtime model
// was built and are reported as its development set. Neither the list nor
// the rules change with a result: a workload that fails is reported
// failing, and one that yields no ratio fails the gate.
//
// The rules:
//   - Every workload of the capture is one of EmulationGate's (a directory
//     named after none of them fails the gate), and every workload of the
//     gate yields its ratios (one that yields none fails it).
//   - Rows of the role Measuring are right by construction, the bandwidth
//     probe being a copy and the triad's fitted ceiling forcing its ratios:
//     they check the measuring of the slices, each corrected ratio within
//     MeasuringTolerance of the slices' share of the memory system, and
//     are left out of every score of the model.
//   - Rows of the roles Kernel and Training stand beside the baselines that
//     need no emulation: the A100 slices' SM ratio (time ∝ 1/SM) and its
//     square root (1/√SM), and beside the emulation as it ran. The model is
//     claimed for a role only where its mean absolute error over the role's
//     rows is below each of theirs; the training rows are the headline.
//   - Every clock is held to the GPU's rated one (slurm.EmulationRecord's
//     RanAt), the one the H100-to-A100 factor (catalog.Relative) assumes.

// EmulationRole is what a workload's rows can show.
type EmulationRole string

const (
	// Measuring rows are right by construction: checks of the measuring.
	Measuring EmulationRole = "measuring"
	// Kernel rows are one kernel each, whose time the SMs alone set.
	Kernel EmulationRole = "kernel"
	// Training rows are whole jobs, CPU and GPU: what the emulation is for.
	Training EmulationRole = "training"
)

// MeasuringTolerance is how far a Measuring row may be from its
// construction before the measuring of the slices is called broken.
const MeasuringTolerance = 0.05

// GatedWorkload is one emulated workload of the gate.
type GatedWorkload struct {
	// Dir names the workload's captures: Dir, Dir-2, Dir-3... in a capture
	// directory, each an emulation of it, taken together (medians).
	Dir string
	// Name is the workload's name in the table; Published's where empty.
	Name string
	// Published is the Wulver case it is held to (a reference benchmark,
	// a row of the matrix-multiplication table, or BandwidthShareCase).
	Published string
	// Rate captures the workload's rate (work per second) in its output.
	Rate string
	Role EmulationRole
}

// BandwidthShareCase is the published case of a streaming kernel: a real
// slice's share of the memory system (its memory slices, 1 of 8 for an
// A100's 1g.10gb).
const BandwidthShareCase = "a slice's share of bandwidth"

// metricRate is the rate a workload prints as a MIGADVISOR_METRIC line.
func metricRate(name string) string { return `^MIGADVISOR_METRIC ` + name + ` ([\d.]+)` }

// EmulationGate is every emulated workload, in the table's order.
var EmulationGate = []GatedWorkload{
	{Dir: "fp16", Published: "matrix_multiplication FP16", Rate: `^rate fp16 ([\d.]+)`, Role: Kernel},
	{Dir: "matmul", Name: "matrix_multiplication FP16, beside copies", Published: "matrix_multiplication FP16", Rate: `^rate fp16 ([\d.]+)`, Role: Kernel},
	{Dir: "matmul", Published: "matrix_multiplication FP32", Rate: `^rate tf32 ([\d.]+)`, Role: Kernel},
	{Dir: "stream", Name: "copy", Published: BandwidthShareCase, Rate: `^rate copy ([\d.]+)`, Role: Measuring},
	{Dir: "stream", Name: "triad", Published: BandwidthShareCase, Rate: `^rate triad ([\d.]+)`, Role: Measuring},
	{Dir: "mnist", Published: "pytorch_mnist_simplecnn", Rate: metricRate("samples_per_s"), Role: Training},
	{Dir: "deepcnn", Published: "pytorch_cifar10_deepcnn", Rate: metricRate("samples_per_s"), Role: Training},
	{Dir: "resnet", Published: "pytorch_cifar10_resnet", Rate: metricRate("samples_per_s"), Role: Training},
	{Dir: "llm", Name: "llm-finetuning, bf16 LoRA", Published: "llm-finetuning", Rate: metricRate("tokens_per_s"), Role: Training},
}
