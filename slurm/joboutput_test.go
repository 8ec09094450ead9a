package slurm

import (
	"math"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
)

func scanString(t *testing.T, s string) *OutputEvidence {
	t.Helper()
	ev, err := ScanOutput(strings.NewReader(s), ScanOptions{})
	if err != nil {
		t.Fatal(err)
	}
	return ev
}

// Outputs of the dev cluster's outcome jobs (their scripts sit beside them).
func TestScanDevClusterOutputs(t *testing.T) {
	dir := "../testdata/joboutput/devcluster"
	scan := func(name string) *OutputEvidence {
		ev, err := ScanFile(filepath.Join(dir, name), ScanOptions{})
		if err != nil {
			t.Fatal(err)
		}
		return ev
	}
	if ev := scan("slurm-2.out"); ev.Work != 1200 || ev.WorkUnit != "samples" || ev.Metrics["accuracy"] != 97.5 || ev.GPUOOM != nil || ev.HostOOM != nil {
		t.Errorf("completed job: %+v", ev)
	}
	if ev := scan("slurm-4.out"); ev.HostOOM == nil || ev.HostOOM.Line != 3 || ev.GPUOOM != nil {
		t.Errorf("host OOM job: %+v", ev)
	}
	ev := scan("slurm-5.out")
	if ev.GPUOOM == nil || ev.GPUOOM.Source != "pytorch" || ev.GPUOOM.Line != 3 || !near(ev.GPUOOM.NeedMiB, (2.00+8.30)*1024) {
		t.Errorf("GPU OOM job: %+v %+v", ev, ev.GPUOOM)
	}
	if ev := scan("slurm-6.out"); !ev.TimeLimit || ev.Cancelled {
		t.Errorf("timeout job: %+v", ev)
	}
	if ev := scan("slurm-7.out"); ev.TimeLimit || !ev.Cancelled {
		t.Errorf("cancelled job: %+v", ev)
	}
	if ev := scan("fx_8_2.out"); ev.Work != 2 || ev.WorkUnit != "items" {
		t.Errorf("array task: %+v", ev)
	}
}

// Messages as the frameworks print them (wulver-and-mig-facts §5, with the sources named there).
func TestScanOOMMessages(t *testing.T) {
	cases := []struct {
		line, kind, source string
		need               float64 // MiB, Unknown when the message gives no figure
	}{
		{"torch.OutOfMemoryError: CUDA out of memory. Tried to allocate 7.45 GiB. GPU 0 has a total capacity of 79.18 GiB of which 73.07 GiB is free. Including non-PyTorch memory, this process has 6.10 GiB memory in use. 9.90 GiB allowed; Of the allocated memory 5.59 GiB is allocated by PyTorch, and 1.95 MiB is reserved by PyTorch but unallocated.",
			OOMGPU, "pytorch", (7.45 + 6.10) * 1024},
		{"RuntimeError: CUDA out of memory. Tried to allocate 384.00 MiB (GPU 0; 14.76 GiB total capacity; 11.04 GiB already allocated; 259.75 MiB free; 11.10 GiB reserved in total by PyTorch)",
			OOMGPU, "pytorch", 384 + 11.04*1024},
		{"torch.OutOfMemoryError: CUDA out of memory. Tried to allocate 546.00 MiB. GPU 0 has a total capacity of 15.77 GiB of which 514.19 MiB is free. Process 562167 has 15.25 GiB memory in use. Of the allocated memory 13.73 GiB is allocated by PyTorch",
			OOMGPU, "pytorch", 546 + 13.73*1024},
		{"torch.cuda.OutOfMemoryError: CUDA out of memory. Tried to allocate 20.00 MiB. GPU 0 has a total capacty of 14.75 GiB of which 11.06 MiB is free.",
			OOMGPU, "pytorch", 20},
		{"OutOfMemoryError: CUDA out of memory. Tried to allocate 3725.29 GiB. GPU", OOMGPU, "pytorch", 3725.29 * 1024},
		{`RuntimeError: NVML_SUCCESS == r INTERNAL ASSERT FAILED at "../c10/cuda/CUDACachingAllocator.cpp":830, please report a bug to PyTorch.`, OOMGPU, "pytorch-mig-assert", Unknown},
		{"ResourceExhaustedError: OOM when allocating tensor with shape[16,112,112,147] and type float on /job:localhost/replica:0/task:0/device:GPU:0 by allocator GPU_0_bfc", OOMGPU, "tensorflow", Unknown},
		{"W tensorflow/tsl/framework/bfc_allocator.cc:485] Allocator (GPU_0_bfc) ran out of memory trying to allocate 3.07GiB (rounded to 3300000000)requested by op _EagerConst", OOMGPU, "tensorflow", 3300000000.0 / (1 << 20)},
		{"jaxlib.xla_extension.XlaRuntimeError: RESOURCE_EXHAUSTED: Out of memory while trying to allocate 4770354232 bytes.", OOMGPU, "jax", 4770354232.0 / (1 << 20)},
		// JAX's in XLA's units (jax 0.6), a request's bytes (jaxlib 0.1).
		{"jax.errors.JaxRuntimeError: RESOURCE_EXHAUSTED: Out of memory while trying to allocate 19.59GiB. [executable_name='jit_concatenate']", OOMGPU, "jax", 19.59 * 1024},
		{"RuntimeError: Resource exhausted: Failed to allocate request for 32.00MiB (33554432B) on device ordinal 0", OOMGPU, "jax", 32},
		{"jaxlib.xla_extension.XlaRuntimeError: RESOURCE_EXHAUSTED: Failed to allocate request for 2.99GiB (3206250496B) on device ordinal 0", OOMGPU, "jax", 3206250496.0 / (1 << 20)},
		// The BFC allocator under jaxlib's own XLA (jax 0.4.2x) is JAX's.
		{"2024-05-01 12:00:00.1: W external/xla/xla/tsl/framework/bfc_allocator.cc:501] Allocator (GPU_0_bfc) ran out of memory trying to allocate 6.20GiB (rounded to 6656950272)requested by op ", OOMGPU, "jax", 6656950272.0 / (1 << 20)},
		// TensorFlow's RESOURCE_EXHAUSTED (TF 2.x: eager, a graph's
		// function, the cuda_malloc_async allocator) is no JAX OOM.
		{"tensorflow.python.framework.errors_impl.ResourceExhaustedError: failed to allocate memory [Op:Cast]", OOMGPU, "tensorflow", Unknown},
		{"  (0) RESOURCE_EXHAUSTED:  failed to allocate memory", OOMGPU, "tensorflow", Unknown},
		{"  (0) RESOURCE_EXHAUSTED: failed to allocate memory", OOMGPU, "tensorflow", Unknown},
		{"ResourceExhaustedError: Out of memory while trying to allocate 4294967296 bytes.", OOMGPU, "tensorflow", 4096},
		// CuPy 13's pool: the request only, what it had so far counts the
		// free blocks it released before it gave up.
		{"cupy.cuda.memory.OutOfMemoryError: Out of memory allocating 1,610,612,736 bytes (allocated so far: 32,233,253,888 bytes).", OOMGPU, "cupy", 1536},
		// CUDA.jl 5's, under julia's LoadError.
		{"ERROR: LoadError: Out of GPU memory trying to allocate 7.451 GiB", OOMGPU, "julia-cuda", 7.451 * 1024},
		// vLLM's (0.6 to 0.11): no KV cache fits its share of the device.
		{"ValueError: No available memory for the cache blocks. Try increasing `gpu_memory_utilization` when initializing the engine.", OOMGPU, "vllm", Unknown},
		{"ValueError: To serve at least one request with the models's max seq len (131072), (16.00 GiB KV cache is needed, which is larger than the available KV cache memory (9.86 GiB). Based on the available memory, the estimated maximum model length is 80768.", OOMGPU, "vllm", Unknown},
		// Compiled codes: LAMMPS' GPU package (2Aug2023), Amber's
		// pmemd.cuda, NAMD's CUDA error's second line (from its source).
		{"ERROR on proc 0: Insufficient memory on accelerator (src/GPU/pair_lj_cut_gpu.cpp:110)", OOMGPU, "lammps", Unknown},
		{"cudaMalloc GpuBuffer::Allocate failed out of memory", OOMGPU, "cuda", Unknown},
		{" on Pe 0 (gpu001 device 0 pci 0:7:0): out of memory", OOMGPU, "cuda", Unknown},
		{"RuntimeError: CUDA error: out of memory", OOMGPU, "cuda", Unknown},
		{"std::bad_alloc: cudaErrorMemoryAllocation: out of memory", OOMGPU, "cuda", Unknown},
		{"call to cuMemAlloc returned error 2 (CUDA_ERROR_OUT_OF_MEMORY): Out of memory", OOMGPU, "cuda", Unknown},
		{"RuntimeError: CUDA error: CUBLAS_STATUS_ALLOC_FAILED when calling `cublasCreate(handle)`", OOMGPU, "cuda", Unknown},
		{"Allocation of the device buffer failed. CUDA error #2 (cudaErrorMemoryAllocation): out of memory.", OOMGPU, "cuda", Unknown},
		{"slurmstepd: error: Detected 1 oom-kill event(s) in StepId=1042215.batch cgroup. Some of your processes may have been killed by the cgroup out-of-memory handler.", OOMHost, "slurm", Unknown},
		{"slurmstepd: error: Detected 2 oom_kill events in StepId=7.0. Some of the step tasks have been OOM Killed.", OOMHost, "slurm", Unknown},
		{"slurmstepd-vm: error: StepId=59.batch exceeded memory limit (59240448 > 52428800), being killed", OOMHost, "slurm", Unknown},
		{"srun: error: nic5-w052: task 13: Out Of Memory", OOMHost, "slurm", Unknown},
	}
	for _, c := range cases {
		ev := scanString(t, "start\n"+c.line+"\nend\n")
		oom := ev.GPUOOM
		if c.kind == OOMHost {
			oom = ev.HostOOM
		}
		if oom == nil || oom.Kind != c.kind || oom.Source != c.source || oom.Line != 2 || !near(oom.NeedMiB, c.need) {
			t.Errorf("%.60s…: got %+v", c.line, oom)
		}
	}
}

// The allocator's line gives the bytes, the error after it none: the
// bytes stay the need's lower bound (TensorFlow 2.12, jax 0.4.2x).
func TestScanOOMNeedOfTheAllocatorsLine(t *testing.T) {
	for _, c := range []struct {
		out, source string
		need        float64
	}{
		{"2023-06-01 12:00:00.000000: W tensorflow/tsl/framework/bfc_allocator.cc:485] Allocator (GPU_0_bfc) ran out of memory trying to allocate 3.07GiB (rounded to 3300000000)requested by op _EagerConst\n" +
			"tensorflow.python.framework.errors_impl.ResourceExhaustedError: {{function_node __wrapped__AddV2_device_/job:localhost/replica:0/task:0/device:GPU:0}} OOM when allocating tensor with shape[1024,1024,1024] and type float on /job:localhost/replica:0/task:0/device:GPU:0 by allocator GPU_0_bfc [Op:AddV2] name: \n",
			"tensorflow", 3300000000.0 / (1 << 20)},
		{"2024-05-01 12:00:00.1: W external/xla/xla/tsl/framework/bfc_allocator.cc:501] Allocator (GPU_0_bfc) ran out of memory trying to allocate 6.20GiB (rounded to 6656950272)requested by op \n" +
			"2024-05-01 12:00:00.2: E external/xla/xla/pjrt/pjrt_stream_executor_client.cc:2716] Execution of replica 0 failed: RESOURCE_EXHAUSTED: Out of memory while trying to allocate 6656950272 bytes.\n",
			"jax", 6656950272.0 / (1 << 20)},
	} {
		oom := scanString(t, c.out).GPUOOM
		if oom == nil || oom.Source != c.source || oom.Line != 2 || !near(oom.NeedMiB, c.need) {
			t.Errorf("%.60s…: got %+v", c.out, oom)
		}
	}
}

func TestScanNotOOM(t *testing.T) {
	for _, line := range []string{
		"Allocator (GPU_0_bfc) ran out of memory trying to allocate 1.25GiB with freed_by_count=0. The caller indicates that this is not a failure, but may mean that there could be performance gains if more memory were available.",
		"epoch 3: memory 5.2 GiB, loss 0.12",
		"slurmstepd: error: StepId=3.0 hit memory limit at least once during execution. This may or may not result in some failure.",
		"PYTORCH_CUDA_ALLOC_CONF=expandable_segments:True",
	} {
		if ev := scanString(t, line+"\n"); ev.GPUOOM != nil || ev.HostOOM != nil {
			t.Errorf("%q read as an OOM: %+v %+v", line, ev.GPUOOM, ev.HostOOM)
		}
	}
}

func TestScanWorkAndTools(t *testing.T) {
	ev := scanString(t, "MIGADVISOR_WORK 10 tokens\nMIGADVISOR_WORK 166327 tokens\nMIGADVISOR_METRIC accuracy 98.1\nMIGADVISOR_METRIC loss 0.25\n")
	if ev.Work != 166327 || ev.WorkUnit != "tokens" || ev.Metrics["loss"] != 0.25 || ev.Metrics["accuracy"] != 98.1 {
		t.Errorf("the last MIGADVISOR_WORK counts: %+v", ev)
	}
	ev = scanString(t, "MIGADVISOR_VERSION torch 2.4.0\nMIGADVISOR_VERSION device NVIDIA H100 80GB HBM3  \nMIGADVISOR_VERSION torch 2.11.0\nMIGADVISOR_VERSION empty\n")
	if len(ev.Versions) != 2 || ev.Versions["torch"] != "2.11.0" || ev.Versions["device"] != "NVIDIA H100 80GB HBM3" {
		t.Errorf("versions: %q", ev.Versions)
	}
	ev = scanString(t, "               (ns/day)    (hour/ns)\nPerformance:      123.456        0.194\n")
	if ev.Work != 123.456 || ev.WorkUnit != "ns/day" || ev.WorkSource != "gromacs" {
		t.Errorf("GROMACS: %+v", ev)
	}
	ev = scanString(t, "{'train_runtime': 100.1, 'train_samples_per_second': 9.99, 'train_steps_per_second': 1.2}\n")
	if ev.Work != 9.99 || ev.WorkUnit != "samples/s" {
		t.Errorf("Hugging Face: %+v", ev)
	}
	ev = scanString(t, "MIGADVISOR_WORK 50 samples\nPerformance: 10.0 2.4\n")
	if ev.WorkSource != "MIGADVISOR_WORK" || ev.Work != 50 {
		t.Errorf("the job's own figure wins over a tool's: %+v", ev)
	}
	ev = scanString(t, "MIGADVISOR_GPU peak_mib=5812 total_mib=9728 device=NVIDIA A100-SXM4-80GB MIG 1g.10gb\n")
	if ev.GPUPeakMiB != 5812 || ev.GPUTotalMiB != 9728 || ev.GPUDevice != "NVIDIA A100-SXM4-80GB MIG 1g.10gb" || ev.GPUUtil != "" || ev.GPUUsedPeakMiB != Unknown {
		t.Errorf("monitor line: %+v", ev)
	}
	// Two GPUs: the larger peak is the job's figure per GPU.
	ev = scanString(t, "MIGADVISOR_GPU peak_mib=30100 used_peak_mib=30500 total_mib=81559 samples=120 scope=tree util=mean:43,max:98 device=NVIDIA H100 80GB HBM3\n"+
		"MIGADVISOR_GPU peak_mib=5120 used_peak_mib=5400 total_mib=9728 samples=118 scope=tree util=unsupported profile=1g.10gb device=NVIDIA A100-SXM4-80GB MIG 1g.10gb\n")
	if ev.GPUPeakMiB != 30100 || ev.GPUUsedPeakMiB != 30500 || ev.GPUSamples != 120 || ev.GPUUtil != "supported" || ev.GPUUtilMean != 43 || ev.GPUUtilMax != 98 || ev.GPUDevice != "NVIDIA H100 80GB HBM3" || ev.GPUProfile != "" {
		t.Errorf("two monitor lines: %+v", ev)
	}
	ev = scanString(t, "MIGADVISOR_GPU peak_mib=5120 used_peak_mib=5400 total_mib=9728 samples=118 scope=tree util=unsupported profile=1g.10gb device=NVIDIA A100-SXM4-80GB MIG 1g.10gb\n")
	if ev.GPUUtil != "unsupported" || ev.GPUUtilMean != Unknown || ev.GPUProfile != "1g.10gb" || ev.GPUSource != "line" {
		t.Errorf("MIG monitor line: %+v", ev)
	}
	// Memory utilization (mem_util) where the device reports it; a line
	// without it (an older monitor's, or the two above) leaves it unknown,
	// and a field no reader knows yet is skipped.
	if ev.GPUMemUtilMean != Unknown || ev.GPUMemUtilMax != Unknown {
		t.Errorf("memory utilization of a line without mem_util: %v %v", ev.GPUMemUtilMean, ev.GPUMemUtilMax)
	}
	ev = scanString(t, "MIGADVISOR_GPU peak_mib=30100 used_peak_mib=30500 total_mib=81559 samples=120 scope=tree util=mean:43,max:98 mem_util=mean:21,max:60 future=x device=NVIDIA H100 80GB HBM3\n")
	if ev.GPUUtil != "supported" || ev.GPUUtilMean != 43 || ev.GPUUtilMax != 98 || ev.GPUMemUtilMean != 21 || ev.GPUMemUtilMax != 60 ||
		ev.GPUDevice != "NVIDIA H100 80GB HBM3" || ev.GPUSamples != 120 {
		t.Errorf("monitor line with mem_util: %+v", ev)
	}
	// Of two GPUs the one with the larger peak gives its memory utilization too.
	ev = scanString(t, "MIGADVISOR_GPU peak_mib=900 total_mib=81559 samples=5 util=mean:90,max:99 mem_util=mean:80,max:95 device=NVIDIA H100 80GB HBM3\n"+
		"MIGADVISOR_GPU peak_mib=30100 total_mib=81559 samples=5 util=mean:43,max:98 mem_util=mean:21,max:60 device=NVIDIA H100 80GB HBM3\n")
	if ev.GPUPeakMiB != 30100 || ev.GPUMemUtilMean != 21 || ev.GPUMemUtilMax != 60 {
		t.Errorf("two monitor lines with mem_util: %+v", ev)
	}
	site := WorkPattern{Name: "lammps", Regex: regexp.MustCompile(`^Performance: ([\d.]+) tau/day`), Unit: "tau/day"}
	ev, _ = ScanOutput(strings.NewReader("Performance: 4321.5 tau/day, 10 timesteps/s\n"), ScanOptions{Patterns: []WorkPattern{site}})
	if ev.Work != 4321.5 || ev.WorkSource != "lammps" {
		t.Errorf("site pattern: %+v", ev)
	}
}

// A huge output is read at its head and tail only, and says so.
func TestScanFileCapped(t *testing.T) {
	path := filepath.Join(t.TempDir(), "big.out")
	var b strings.Builder
	b.WriteString("MIGADVISOR_METRIC first 1\n")
	for b.Len() < 3<<20 {
		b.WriteString("step 123456 loss 0.5 lr 0.001 ....................................................\n")
	}
	b.WriteString(strings.Repeat("x", 200<<10) + "\n") // a very long line
	b.WriteString("torch.OutOfMemoryError: CUDA out of memory. Tried to allocate 1.00 GiB. GPU 0 has a total capacity of 9.50 GiB of which 0 bytes is free. Including non-PyTorch memory, this process has 9.40 GiB memory in use.\n")
	if err := os.WriteFile(path, []byte(b.String()), 0o600); err != nil {
		t.Fatal(err)
	}
	ev, err := ScanFile(path, ScanOptions{MaxBytes: 1 << 20})
	if err != nil {
		t.Fatal(err)
	}
	if !ev.Truncated || ev.GPUOOM == nil || ev.GPUOOM.Line != 0 || ev.Metrics["first"] != 1 || ev.Bytes > 1<<20+4096 {
		t.Fatalf("capped scan: truncated %v oom %+v metrics %v bytes %d", ev.Truncated, ev.GPUOOM, ev.Metrics, ev.Bytes)
	}
	full, err := ScanFile(path, ScanOptions{})
	if err != nil || full.Truncated || full.GPUOOM == nil || full.GPUOOM.Line < 30000 {
		t.Fatalf("uncapped scan: %+v %v", full, err)
	}
}

// The out-of-memory errors real programs printed on an H100
// (testdata/joboutput/h100-oom) are read with their source, their need and
// the software that ran: a framework's figure, never the device's.
func TestScanRealOOMsOfAnH100(t *testing.T) {
	for _, c := range []struct {
		file, source, software string
		need                   float64 // MiB
	}{
		{"torch-oom.out", "pytorch", SoftwarePyTorch, 1396.98*1024 + 518},
		{"torch-oom-fill.out", "pytorch", SoftwarePyTorch, 3.73*1024 + 78.76*1024},
		{"jax-oom.out", "jax", SoftwareJAX, 279.40 * 1024},
		{"jax-oom-fill.out", "jax", SoftwareJAX, 7.45 * 1024},
		{"cupy-oom.out", "cupy", SoftwareCuPy, 1.5e12 / (1 << 20)},
	} {
		f, err := os.Open(filepath.Join("../testdata/joboutput/h100-oom", c.file))
		if err != nil {
			t.Fatal(err)
		}
		ev, err := ScanOutput(f, ScanOptions{})
		f.Close()
		if err != nil {
			t.Fatal(err)
		}
		oom := ev.GPUOOM
		if oom == nil || oom.Source != c.source || math.Abs(oom.NeedMiB-c.need) > 1 {
			t.Errorf("%s: GPU OOM %+v, want source %s, need %.1f MiB", c.file, oom, c.source, c.need)
		}
		if _, ok := ev.Versions[c.software]; !ok {
			t.Errorf("%s: software %v, want %s among it", c.file, ev.Versions, c.software)
		}
	}
}
