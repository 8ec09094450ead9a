package slurm

import (
	"bufio"
	"bytes"
	"fmt"
	"io"
	"os"
	"regexp"
	"strconv"
	"strings"

	"github.com/migadvisor/migadvisor/internal/lazyre"
)

// OOM kinds.
const (
	OOMGPU  = "gpu"
	OOMHost = "host"
)

// OOMEvent is an out-of-memory message found in a job's output.
type OOMEvent struct {
	Kind    string  // OOMGPU or OOMHost
	Source  string  // pytorch, pytorch-mig-assert, tensorflow, jax, cuda, slurm-cgroup, ...
	Line    int     // 1-based; 0 when found in the tail of a capped file
	Text    string  // the line, shortened
	NeedMiB float64 // GPU: a lower bound of the memory the job needs (allocated + requested); Unknown if none
}

// OutputEvidence is what a job's output says about how it went.
type OutputEvidence struct {
	GPUOOM    *OOMEvent // the last GPU OOM message
	HostOOM   *OOMEvent // the last host-memory kill
	TimeLimit bool      // slurmstepd: CANCELLED ... DUE TO TIME LIMIT
	Cancelled bool      // slurmstepd: CANCELLED (scancel, preemption, node failure)

	Work       float64 // the last MIGADVISOR_WORK (or a tool's own figure); Unknown if none
	WorkUnit   string
	WorkSource string // MIGADVISOR_WORK, gromacs, huggingface, or a site pattern's name

	Metrics map[string]float64 // MIGADVISOR_METRIC name value, the last of each
	// Versions are the software a job ran (python, torch, cuda, gromacs,
	// device): its MIGADVISOR_VERSION name value lines, the last of each,
	// and what its output shows of itself (software.go), with "" for a
	// version it does not give.
	Versions map[string]string
	// Settings are the MIGADVISOR_SETTING name value lines: the settings
	// the job ran with that change what its figures prove (a framework's
	// preallocation turned off), the last of each.
	Settings map[string]string
	// Resembles is the workload the output shows (ScanOptions.Workloads'
	// name, output_workload.go); "" for none.
	Resembles string

	// From the monitor (MIGADVISOR_GPU lines, or its summary file): the
	// device with the largest peak when the job used several.
	GPUPeakMiB     float64 // the job's own processes' peak, else the device's; Unknown if none
	GPUUsedPeakMiB float64 // the device's peak memory in use; Unknown if not reported
	GPUTotalMiB    float64
	GPUDevice      string
	GPUProfile     string  // MIG profile of the device, "" for a whole GPU
	GPUUtil        string  // "supported", "unsupported" (A100 MIG), "error", or "" if not reported
	GPUUtilMean    float64 // percent; Unknown unless supported
	GPUUtilMax     float64
	// The share of time device memory was read or written (NVML's memory
	// utilization), percent: mem_util on the line; Unknown when not reported.
	GPUMemUtilMean float64
	GPUMemUtilMax  float64
	GPUSamples     int
	GPUSource      string // "line" or "summary"

	// FirstError is the first line that reads as an error (a Python
	// exception, "error:", a crash): what a job that failed for a reason
	// of its own says first about it. nil: none.
	FirstError *ErrorLine

	Bytes     int64 // bytes read
	Truncated bool  // the file was larger than the cap: its head and tail were read
}

// ErrorLine is a line of a job's output that reads as an error.
type ErrorLine struct {
	File string // the file it is in ("" when read from a stream)
	Line int    // 1-based; 0 when found in the tail of a capped file
	Text string // the line, shortened
}

// WorkPattern is a site's own way of spotting work done in job output: a
// regular expression whose first group is the number.
type WorkPattern struct {
	Name  string
	Regex *regexp.Regexp
	Unit  string
}

// ScanOptions tune ScanOutput.
type ScanOptions struct {
	// MaxBytes caps how much of a file is read (default 64 MiB): half from
	// the head, half from the tail, where OOMs and results are printed.
	MaxBytes int64
	// Patterns are extra work patterns, tried after the built-in ones.
	Patterns []WorkPattern
	// Workloads are the lines that say what a job is, in precedence
	// order (output_workload.go).
	Workloads *OutputWorkloads
}

const maxLine = 64 << 10 // longer lines are read up to this much

var (
	reTorchOOM   = lazyre.New(`(?:CUDA|HIP) out of memory\. Tried to allocate ([\d.]+ (?:bytes|[KMGT]iB))`)
	reTorchInUse = lazyre.New(`this process has ([\d.]+ (?:bytes|[KMGT]iB)) memory in use`)
	reTorchProc  = lazyre.New(`Process \d+ has ([\d.]+ (?:bytes|[KMGT]iB)) memory in use`)
	reTorchAlloc = lazyre.New(`([\d.]+ (?:bytes|[KMGT]iB)) already allocated`)
	reTorchByPT  = lazyre.New(`Of the allocated memory ([\d.]+ (?:bytes|[KMGT]iB)) is allocated by PyTorch`)
	reMIGAssert  = lazyre.New(`NVML_SUCCESS == r INTERNAL ASSERT FAILED at .*CUDACachingAllocator`)
	reTFOOM      = lazyre.New(`OOM when allocating tensor`)
	// TensorFlow's out of memory in eager mode, in a graph's function
	// ("  (0) RESOURCE_EXHAUSTED:  failed to allocate memory"), and from
	// its cuda_malloc_async allocator, which gives the bytes.
	reTFExhausted = lazyre.New(`ResourceExhaustedError: (?:failed to allocate memory|Out of memory while trying to allocate (\d+) bytes)|RESOURCE_EXHAUSTED: +failed to allocate memory`)
	// The BFC allocator's failure, TensorFlow's and JAX's (its path under
	// external/xla/: jaxlib's own XLA), with the bytes it asked for.
	reBFCOOM = lazyre.New(`ran out of memory trying to allocate [\d.]+\s*\w+ \(rounded to (\d+)\)\s*requested by`)
	// JAX's: XLA's RESOURCE_EXHAUSTED, with the bytes ("... allocate
	// 4770354232 bytes."), in XLA's units (jax 0.6: "... allocate
	// 19.59GiB."), or a request's ("Failed to allocate request for 2.99GiB
	// (3206250496B) on device ordinal 0").
	reJAXOOM = lazyre.New(`(?i)RESOURCE[_ ]EXHAUSTED: (?:Out of memory while trying to allocate ([\d.]+) ?(bytes|[KMGT]i?B)|Out of memory|Failed to allocate(?: request for \S+ \((\d+)B\))?)`)
	// CuPy's pool ("cupy.cuda.memory.OutOfMemoryError: Out of memory
	// allocating 1,610,612,736 bytes (allocated so far: 32,233,253,888
	// bytes)."): what it had allocated so far counts the free blocks it
	// kept, which it releases before it gives up, so only the request is
	// a lower bound.
	reCuPyOOM = lazyre.New(`Out of memory allocating ([\d,]+) bytes`)
	// CUDA.jl's ("ERROR: LoadError: Out of GPU memory trying to allocate
	// 7.451 GiB", Base.format_bytes' units).
	reJuliaOOM = lazyre.New(`Out of GPU memory trying to allocate ([\d.]+ (?:bytes|[KMGT]iB))`)
	// vLLM's: no room for a KV cache in its share of the device
	// (gpu_memory_utilization), or not for one request of max_model_len.
	reVLLMOOM = lazyre.New(`No available memory for the cache blocks|KV cache is needed, which is larger than the available KV cache memory|is larger than the maximum number of tokens that can be stored in KV cache`)
	// LAMMPS' GPU package ("ERROR on proc 0: Insufficient memory on
	// accelerator (src/GPU/pair_lj_cut_gpu.cpp:110)").
	reLAMMPSOOM = lazyre.New(`Insufficient memory on accelerator`)
	// CUDA's own, from any program; Amber's pmemd.cuda ("cudaMalloc
	// GpuBuffer::Allocate failed out of memory"); NAMD's second line of a
	// CUDA error (" on Pe 0 (gpu001 device 0 pci 0:7:0): out of memory",
	// from its source: its cudaDie).
	reCUDAOOM   = lazyre.New(`CUDA error: out of memory|cudaErrorMemoryAllocation|CUDA_ERROR_OUT_OF_MEMORY|CUBLAS_STATUS_ALLOC_FAILED|Allocation of the device buffer failed|GpuBuffer::Allocate failed out of memory|\bon Pe \d+ \([^)]*\): out of memory`)
	reHostOOM   = lazyre.New(`Detected \d+ oom[-_]kill event|exceeded (?:virtual )?memory limit|: task \d+: Out Of Memory|Exceeded job memory limit|State: OUT_OF_MEMORY`)
	reCancelled = lazyre.New(`\*\*\* (?:JOB|STEP) [\d._+]+ ON \S+ CANCELLED AT \S+(.*)\*\*\*`)
	reWork      = lazyre.New(`^\s*MIGADVISOR_WORK\s+([-+]?[\d.]+(?:[eE][-+]?\d+)?)\s+(\S.*?)\s*$`)
	reMetric    = lazyre.New(`^\s*MIGADVISOR_METRIC\s+(\S+)\s+([-+]?[\d.]+(?:[eE][-+]?\d+)?)`)
	reVersion   = lazyre.New(`^\s*MIGADVISOR_VERSION\s+(\S+)\s+(\S.{0,199}?)\s*$`)
	reSetting   = lazyre.New(`^\s*MIGADVISOR_SETTING\s+([A-Za-z_][A-Za-z0-9_]*)\s+(\S.{0,199}?)\s*$`)
	reMonitor   = lazyre.New(MonitorLinePrefix + `\s+peak_mib=`)
	reGromacs   = lazyre.New(`^Performance:\s+([\d.]+)\s+[\d.]+`)
	reHFSamples = lazyre.New(`['"]?train_samples_per_second['"]?\s*[:=]\s*([\d.]+)`)
)

// AllocatedMetric is the MIGADVISOR_METRIC a job prints for its framework's
// peak of allocated GPU memory, in MiB (PyTorch:
// torch.cuda.max_memory_allocated() / 2**20). It is the best figure of the
// need: NVML's peak includes what a caching allocator reserved.
const AllocatedMetric = "peak_allocated_mib"

// maxVersions bounds the MIGADVISOR_VERSION names kept from one output.
const maxVersions = 32

// A line is looked at closely only when it holds one of these.
var interesting = [][]byte{
	[]byte("memory"), []byte("MEMORY"), []byte("OOM"), []byte("oom"), []byte("MIGADVISOR_"),
	[]byte("Performance:"), []byte("train_samples_per_second"), []byte("CANCELLED"), []byte("ASSERT"),
	[]byte("RESOURCE_EXHAUSTED"), []byte("Resource exhausted"), []byte("ALLOC_FAILED"), []byte("Out Of Memory"),
	[]byte("Allocation of the device buffer"), []byte("KV cache"),
}

// ScanFile scans a job's output file; see ScanOutput.
func ScanFile(path string, opt ScanOptions) (*OutputEvidence, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	st, err := f.Stat()
	if err != nil {
		return nil, err
	}
	max := opt.MaxBytes
	if max <= 0 {
		max = 64 << 20
	}
	if st.Size() <= max {
		ev, err := ScanOutput(f, opt)
		if err == nil && ev.FirstError != nil {
			ev.FirstError.File = path
		}
		return ev, err
	}
	ev := newEvidence()
	s := scanner{ev: ev, opt: opt}
	if err := s.scan(io.LimitReader(f, max/2), 1); err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	if _, err := f.Seek(st.Size()-max/2, io.SeekStart); err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	br := bufio.NewReader(f)
	skipped, _ := br.ReadSlice('\n') // the first tail line is likely partial
	s.ev.Bytes += int64(len(skipped))
	if err := s.scan(br, 0); err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	ev.Truncated = true
	if ev.FirstError != nil {
		ev.FirstError.File = path
	}
	return ev, nil
}

// ScanOutput reads a job's output (stdout and stderr as Slurm wrote them) line
// by line and extracts its evidence: OOMs, time limit, cancellation, work done,
// metrics and the GPU monitor's peak. It reads a stream once, in bounded memory.
func ScanOutput(r io.Reader, opt ScanOptions) (*OutputEvidence, error) {
	s := scanner{ev: newEvidence(), opt: opt}
	if err := s.scan(r, 1); err != nil {
		return nil, err
	}
	return s.ev, nil
}

func newEvidence() *OutputEvidence {
	return &OutputEvidence{Work: Unknown, GPUPeakMiB: Unknown, GPUUsedPeakMiB: Unknown, GPUTotalMiB: Unknown, GPUUtilMean: Unknown, GPUUtilMax: Unknown,
		GPUMemUtilMean: Unknown, GPUMemUtilMax: Unknown}
}

type scanner struct {
	ev  *OutputEvidence
	opt ScanOptions
}

// scan reads lines; firstLine 0 means line numbers are unknown (a file's tail).
func (s *scanner) scan(r io.Reader, firstLine int) error {
	br := bufio.NewReaderSize(r, maxLine)
	n := firstLine
	for {
		line, err := br.ReadSlice('\n')
		s.ev.Bytes += int64(len(line))
		if err == bufio.ErrBufferFull {
			// Look at the first maxLine bytes; skip the rest of the line.
			for err == bufio.ErrBufferFull {
				var more []byte
				more, err = br.ReadSlice('\n')
				s.ev.Bytes += int64(len(more))
			}
		}
		if len(line) > 0 {
			s.line(bytes.TrimRight(line, "\r\n"), n)
		}
		if err == io.EOF {
			return nil
		}
		if err != nil {
			return err
		}
		if n > 0 {
			n++
		}
	}
}

func (s *scanner) line(b []byte, n int) {
	s.software(b)
	s.workload(b)
	if s.ev.FirstError == nil {
		s.firstError(b, n)
	}
	hit := false
	for _, k := range interesting {
		if bytes.Contains(b, k) {
			hit = true
			break
		}
	}
	if !hit && len(s.opt.Patterns) == 0 {
		return
	}
	text := string(b)
	if hit {
		s.known(text, n)
	}
	for _, p := range s.opt.Patterns {
		if m := p.Regex.FindStringSubmatch(text); len(m) > 1 {
			if v, err := strconv.ParseFloat(m[1], 64); err == nil {
				s.ev.Work, s.ev.WorkUnit, s.ev.WorkSource = v, p.Unit, p.Name
			}
		}
	}
}

func (s *scanner) known(text string, n int) {
	ev := s.ev
	if m := reWork.FindStringSubmatch(text); m != nil {
		if v, err := strconv.ParseFloat(m[1], 64); err == nil {
			ev.Work, ev.WorkUnit, ev.WorkSource = v, m[2], "MIGADVISOR_WORK"
		}
		return
	}
	if m := reMetric.FindStringSubmatch(text); m != nil {
		if v, err := strconv.ParseFloat(m[2], 64); err == nil {
			if ev.Metrics == nil {
				ev.Metrics = map[string]float64{}
			}
			ev.Metrics[m[1]] = v
		}
		return
	}
	if m := reVersion.FindStringSubmatch(text); m != nil {
		s.setVersion(m[1], m[2])
		return
	}
	if m := reSetting.FindStringSubmatch(text); m != nil {
		if ev.Settings == nil {
			ev.Settings = map[string]string{}
		}
		if _, ok := ev.Settings[m[1]]; ok || len(ev.Settings) < maxVersions {
			ev.Settings[m[1]] = m[2]
		}
		return
	}
	if loc := reMonitor.FindStringIndex(text); loc != nil {
		monitorLine(ev, text[loc[0]+len(MonitorLinePrefix):])
		return
	}
	if oom := gpuOOM(text); oom != nil {
		oom.Line, oom.Text = n, shorten(text)
		if old := ev.GPUOOM; oom.NeedMiB == Unknown && old != nil && old.Source == oom.Source {
			// TensorFlow's error after its allocator's line: the bytes
			// the allocator asked for stay the need's lower bound.
			oom.NeedMiB = old.NeedMiB
		}
		ev.GPUOOM = oom
		return
	}
	if reHostOOM.MatchString(text) {
		ev.HostOOM = &OOMEvent{Kind: OOMHost, Source: "slurm", Line: n, Text: shorten(text), NeedMiB: Unknown}
		return
	}
	if m := reCancelled.FindStringSubmatch(text); m != nil {
		if strings.Contains(m[1], "TIME LIMIT") {
			ev.TimeLimit = true
		} else {
			ev.Cancelled = true
		}
		return
	}
	if m := reGromacs.FindStringSubmatch(text); m != nil && ev.WorkSource != "MIGADVISOR_WORK" {
		ev.Work, _ = strconv.ParseFloat(m[1], 64)
		ev.WorkUnit, ev.WorkSource = "ns/day", "gromacs"
		return
	}
	if m := reHFSamples.FindStringSubmatch(text); m != nil && ev.WorkSource != "MIGADVISOR_WORK" {
		ev.Work, _ = strconv.ParseFloat(m[1], 64)
		ev.WorkUnit, ev.WorkSource = "samples/s", "huggingface"
	}
}

// gpuOOM classifies a line as a GPU out-of-memory message, with the need's
// lower bound where the message gives it.
func gpuOOM(text string) *OOMEvent {
	if strings.Contains(text, "The caller indicates that this is not a failure") {
		return nil // TensorFlow/XLA's warning, not an error
	}
	if strings.Contains(text, "Failed to allocate device memory of") && strings.Contains(text, "cuda_executor") {
		// XLA's preallocation backing off: it asks for 75% of the device,
		// and for 90% of that again each time the device says no, and goes
		// on with what it got. A real JAX OOM says RESOURCE_EXHAUSTED: Out
		// of memory while trying to allocate.
		return nil
	}
	if m := reTorchOOM.FindStringSubmatch(text); m != nil {
		need := Unknown * 1.0
		if tried, ok := parseTorchSize(m[1]); ok {
			held := 0.0
			for _, re := range []*lazyre.Regexp{reTorchInUse, reTorchAlloc, reTorchByPT} {
				if h := re.FindStringSubmatch(text); h != nil {
					held, _ = parseTorchSize(h[1])
					break
				}
			}
			if held == 0 {
				for _, h := range reTorchProc.FindAllStringSubmatch(text, -1) {
					v, _ := parseTorchSize(h[1])
					held += v
				}
			}
			need = tried + held
		}
		return &OOMEvent{Kind: OOMGPU, Source: "pytorch", NeedMiB: need}
	}
	switch {
	case reMIGAssert.MatchString(text):
		return &OOMEvent{Kind: OOMGPU, Source: "pytorch-mig-assert", NeedMiB: Unknown}
	case reTFOOM.MatchString(text):
		return &OOMEvent{Kind: OOMGPU, Source: "tensorflow", NeedMiB: Unknown}
	}
	// Before JAX's: TensorFlow says RESOURCE_EXHAUSTED too.
	if m := reTFExhausted.FindStringSubmatch(text); m != nil {
		return &OOMEvent{Kind: OOMGPU, Source: "tensorflow", NeedMiB: bytesMiB(m[1], "bytes")}
	}
	if m := reBFCOOM.FindStringSubmatch(text); m != nil {
		source := "tensorflow"
		if strings.Contains(text, "external/xla/") {
			source = "jax"
		}
		return &OOMEvent{Kind: OOMGPU, Source: source, NeedMiB: bytesMiB(m[1], "bytes")}
	}
	if m := reCuPyOOM.FindStringSubmatch(text); m != nil {
		return &OOMEvent{Kind: OOMGPU, Source: "cupy", NeedMiB: bytesMiB(strings.ReplaceAll(m[1], ",", ""), "bytes")}
	}
	if m := reJuliaOOM.FindStringSubmatch(text); m != nil {
		need := Unknown * 1.0
		if v, ok := parseTorchSize(m[1]); ok {
			need = v
		}
		return &OOMEvent{Kind: OOMGPU, Source: "julia-cuda", NeedMiB: need}
	}
	switch {
	case reVLLMOOM.MatchString(text):
		return &OOMEvent{Kind: OOMGPU, Source: "vllm", NeedMiB: Unknown}
	case reLAMMPSOOM.MatchString(text):
		return &OOMEvent{Kind: OOMGPU, Source: "lammps", NeedMiB: Unknown}
	case reCUDAOOM.MatchString(text):
		return &OOMEvent{Kind: OOMGPU, Source: "cuda", NeedMiB: Unknown}
	}
	if m := reJAXOOM.FindStringSubmatch(text); m != nil {
		need := bytesMiB(m[1], m[2])
		if m[3] != "" {
			need = bytesMiB(m[3], "bytes")
		}
		return &OOMEvent{Kind: OOMGPU, Source: "jax", NeedMiB: need}
	}
	return nil
}

// bytesMiB reads a figure in bytes or in XLA's units ("19.59", "GiB";
// K, M, G, T with or without the i, all powers of 1024), in MiB; Unknown
// where there is none.
func bytesMiB(num, unit string) float64 {
	v, err := strconv.ParseFloat(num, 64)
	if err != nil {
		return Unknown
	}
	var shift uint
	switch {
	case unit == "":
		return Unknown
	case unit[0] == 'b' || unit[0] == 'B':
	case unit[0] == 'K' || unit[0] == 'k':
		shift = 10
	case unit[0] == 'M' || unit[0] == 'm':
		shift = 20
	case unit[0] == 'G' || unit[0] == 'g':
		shift = 30
	case unit[0] == 'T' || unit[0] == 't':
		shift = 40
	default:
		return Unknown
	}
	return v * float64(uint64(1)<<shift) / (1 << 20)
}

// parseTorchSize reads PyTorch's format_size: "512 bytes", "20.00 MiB", "7.45 GiB".
func parseTorchSize(s string) (float64, bool) {
	num, unit, ok := strings.Cut(s, " ")
	if !ok {
		return 0, false
	}
	v := bytesMiB(num, unit)
	return v, v != Unknown
}

func shorten(s string) string {
	s = strings.TrimSpace(s)
	if len(s) > 240 {
		s = s[:240] + "…"
	}
	return s
}

// MonitorLinePrefix starts the line the GPU monitor writes per device.
const MonitorLinePrefix = "MIGADVISOR_GPU"

// monitorLine reads "peak_mib=… used_peak_mib=… total_mib=… samples=…
// scope=… util=… mem_util=… profile=… device=NAME WITH SPACES". device comes
// last and takes the rest of the line; mem_util (mean:X,max:Y) is there only
// where both are known (and not in older monitors' lines); fields it does
// not know are skipped. Of several lines (several GPUs) the one with the
// largest peak counts.
func monitorLine(ev *OutputEvidence, text string) {
	line := OutputEvidence{GPUUsedPeakMiB: Unknown, GPUTotalMiB: Unknown, GPUUtilMean: Unknown, GPUUtilMax: Unknown,
		GPUMemUtilMean: Unknown, GPUMemUtilMax: Unknown, GPUSource: "line"}
	rest := strings.TrimSpace(text)
	for rest != "" {
		word, after, _ := strings.Cut(rest, " ")
		key, value, ok := strings.Cut(word, "=")
		if !ok {
			break
		}
		if key == "device" {
			line.GPUDevice = strings.TrimSpace(strings.TrimPrefix(rest, "device="))
			break
		}
		number, err := strconv.ParseFloat(value, 64)
		switch {
		case key == "peak_mib" && err == nil:
			line.GPUPeakMiB = number
		case key == "used_peak_mib" && err == nil:
			line.GPUUsedPeakMiB = number
		case key == "total_mib" && err == nil:
			line.GPUTotalMiB = number
		case key == "samples" && err == nil:
			line.GPUSamples = int(number)
		case key == "profile":
			line.GPUProfile = value
		case key == "util":
			line.GPUUtil, line.GPUUtilMean, line.GPUUtilMax = parseUtil(value)
		case key == "mem_util":
			_, line.GPUMemUtilMean, line.GPUMemUtilMax = parseUtil(value)
		}
		rest = strings.TrimSpace(after)
	}
	if ev.GPUPeakMiB != Unknown && ev.GPUPeakMiB >= line.GPUPeakMiB {
		return
	}
	ev.GPUPeakMiB, ev.GPUUsedPeakMiB, ev.GPUTotalMiB, ev.GPUDevice = line.GPUPeakMiB, line.GPUUsedPeakMiB, line.GPUTotalMiB, line.GPUDevice
	ev.GPUProfile, ev.GPUUtil, ev.GPUUtilMean, ev.GPUUtilMax = line.GPUProfile, line.GPUUtil, line.GPUUtilMean, line.GPUUtilMax
	ev.GPUMemUtilMean, ev.GPUMemUtilMax = line.GPUMemUtilMean, line.GPUMemUtilMax
	ev.GPUSamples, ev.GPUSource = line.GPUSamples, line.GPUSource
}

// parseUtil reads util=unsupported or util=mean:43,max:98 (and mem_util's
// mean:21,max:60).
func parseUtil(v string) (state string, mean, peak float64) {
	mean, peak = Unknown, Unknown
	if !strings.HasPrefix(v, "mean:") {
		return v, mean, peak
	}
	for _, part := range strings.Split(v, ",") {
		k, num, _ := strings.Cut(part, ":")
		f, err := strconv.ParseFloat(num, 64)
		if err != nil {
			continue
		}
		if k == "mean" {
			mean = f
		} else if k == "max" {
			peak = f
		}
	}
	return "supported", mean, peak
}
