package monitor

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"testing"
	"time"

	"github.com/migadvisor/migadvisor/bench/gpu"
)

// benchChildEnv makes the test binary act as a monitor process for
// BenchmarkMonitorProcess, so its CPU time and memory are its own.
const benchChildEnv = "MIGADVISOR_BENCH_MONITOR_OUT"

func TestMain(m *testing.M) {
	if out := os.Getenv(benchChildEnv); out != "" {
		os.Exit(benchChild(out))
	}
	os.Exit(m.Run())
}

// benchChild monitors "sleep" on a fake 1g.10gb slice at the default interval.
func benchChild(out string) int {
	srv := slice()
	srv.GPUs[0].MIG[0].SetUsed(4000)
	seconds := os.Getenv("MIGADVISOR_BENCH_SECONDS")
	status, sum, err := Run(Options{Command: []string{"sleep", seconds}, NVML: srv.Lib, Stderr: os.Stderr,
		Env: func(k string) (string, bool) {
			return map[string]string{"CUDA_VISIBLE_DEVICES": "0"}[k], k == "CUDA_VISIBLE_DEVICES"
		}})
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return status
	}
	if err := sum.Write(out); err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	return status
}

// BenchmarkMonitorProcess's targets (docs/performance.md): under 1% of one
// core and under 30 MB resident, about four times the development
// machine's figures (CPU time, which other work on the machine changes little).
const (
	monitorBoundCPUPct = 1.0
	monitorBoundRSSMB  = 30.0
)

// BenchmarkMonitorProcess runs a whole monitor process (this test binary,
// re-executed) around a 5 s command at the default 500 ms interval, and
// reports its own CPU use as a share of one core and its peak RSS, the
// largest of its runs; it fails over either target. The NVML is the fake
// one: the driver's own cost is measured on a GPU (docs/performance.md).
func BenchmarkMonitorProcess(b *testing.B) {
	const seconds = 5
	var cpuPct, rss float64
	for i := 0; i < b.N; i++ {
		out := filepath.Join(b.TempDir(), "summary.json")
		cmd := exec.Command(os.Args[0], "-test.run=^$")
		cmd.Env = append(os.Environ(), benchChildEnv+"="+out, "MIGADVISOR_BENCH_SECONDS="+strconv.Itoa(seconds))
		cmd.Stderr = os.Stderr
		if err := cmd.Run(); err != nil {
			b.Fatal(err)
		}
		sum, err := ReadSummary(out)
		if err != nil {
			b.Fatal(err)
		}
		if sum.Samples < seconds*2 || sum.Overhead == nil {
			b.Fatalf("%d samples, overhead %+v", sum.Samples, sum.Overhead)
		}
		cpuPct, rss = max(cpuPct, sum.Overhead.CPUPercent), max(rss, sum.Overhead.MaxRSSMiB)
	}
	b.ReportMetric(cpuPct, "cpu%")
	b.ReportMetric(rss, "MiB-RSS")
	if cpuPct >= monitorBoundCPUPct {
		b.Errorf("the monitor process uses %.2f%% of one core, not under the target of %.0f%%", cpuPct, monitorBoundCPUPct)
	}
	if rss*1.048576 >= monitorBoundRSSMB { // MiB to MB
		b.Errorf("the monitor process peaks at %.1f MiB resident (%.1f MB), not under the target of %.0f MB", rss, rss*1.048576, monitorBoundRSSMB)
	}
}

// BenchmarkSample is one sample of one MIG device with two processes.
func BenchmarkSample(b *testing.B) {
	srv := slice()
	dev := srv.GPUs[0].MIG[0]
	dev.SetUsed(5000)
	dev.SetProcesses(map[uint32]uint64{uint32(os.Getpid()): 4000, 1: 100})
	lib := srv.Lib()
	all, err := gpu.Enumerate(lib)
	if err != nil {
		b.Fatal(err)
	}
	s := gpu.NewSampler(lib, all, newProcTree(os.Getppid(), ""))
	now := time.Now()
	b.ReportAllocs()
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		if err := s.Sample(now); err != nil {
			b.Fatal(err)
		}
	}
}
