package gpu

import (
	"errors"
	"testing"
	"time"

	"github.com/NVIDIA/go-nvml/pkg/nvml"

	"github.com/migadvisor/migadvisor/internal/fakenvml"
)

// tree owns the PIDs in owned; PIDs in hidden are of another namespace.
type tree struct{ owned, hidden map[uint32]bool }

func (t tree) Owns(pid uint32) (bool, bool) { return t.owned[pid], !t.hidden[pid] }

func sampler(t *testing.T, srv *fakenvml.Server, visible string, tr ProcessTree) *Sampler {
	t.Helper()
	lib := srv.Lib()
	all, err := Enumerate(lib)
	if err != nil {
		t.Fatal(err)
	}
	devs, _ := Resolve(all, visible, true)
	return NewSampler(lib, devs, tr)
}

var t0 = time.Date(2026, 11, 21, 10, 0, 0, 0, time.UTC)

func TestSamplerMIGSlice(t *testing.T) {
	srv := node()
	slice := srv.GPUs[0].MIG[1]
	s := sampler(t, srv, "1", tree{owned: map[uint32]bool{100: true, 101: true}})
	steps := []struct {
		used  uint64
		procs map[uint32]uint64
	}{
		{600, nil},
		{9000, map[uint32]uint64{100: 4000, 555: 5000}}, // 555: someone else's, visible here
		{9100, map[uint32]uint64{100: 6000, 101: 2500}}, // the peak: two of ours
		{1200, map[uint32]uint64{100: 700}},
	}
	for i, st := range steps {
		slice.SetUsed(st.used)
		slice.SetProcesses(st.procs)
		if err := s.Sample(t0.Add(time.Duration(i) * time.Second)); err != nil {
			t.Fatal(err)
		}
	}
	got := s.Stats[0]
	if got.Samples != 4 || got.PeakUsedMiB != 9100 || !got.PeakUsedAt.Equal(t0.Add(2*time.Second)) {
		t.Errorf("used peak %v at %v over %d samples", got.PeakUsedMiB, got.PeakUsedAt, got.Samples)
	}
	if got.PeakProcessMiB == nil || *got.PeakProcessMiB != 8500 || got.ProcessScope != ScopeTree || got.Processes != 2 {
		t.Errorf("process peak %v scope %s procs %d, want 8500 tree 2", got.PeakProcessMiB, got.ProcessScope, got.Processes)
	}
	if got.PeakMiB() != 8500 || got.TotalMiB != 9728 || got.Profile != "1g.10gb" {
		t.Errorf("PeakMiB %v total %v profile %s", got.PeakMiB(), got.TotalMiB, got.Profile)
	}
	// A100 MIG: no utilization, and it must not read as 0%.
	if got.Utilization != UtilUnsupported || got.UtilGPUMean != nil || got.UtilGPUMax != nil {
		t.Errorf("utilization %s mean %v", got.Utilization, got.UtilGPUMean)
	}
}

func TestSamplerWholeGPUs(t *testing.T) {
	srv := node()
	gpu := srv.GPUs[1]
	gpu.SetUtilization(40, 10)
	s := sampler(t, srv, "3,0", tree{owned: map[uint32]bool{7: true}})
	gpu.SetUsed(2000)
	_ = s.Sample(t0)
	gpu.SetUtilization(90, 30)
	gpu.SetUsed(1500)
	gpu.ClockMHz = 1600
	_ = s.Sample(t0.Add(time.Second))
	gpu.SetUtilization(0, 0) // idle: its clock is not the job's
	gpu.ClockMHz = 345
	_ = s.Sample(t0.Add(2 * time.Second))
	whole, mig := s.Stats[0], s.Stats[1]
	// The first sample's clock could not be read (no clock: not asked
	// again); the summary still has every other figure.
	if whole.SMClockMean != nil {
		t.Errorf("a clock from a device that had none: %v", *whole.SMClockMean)
	}
	if whole.UtilGPUMean == nil || *whole.UtilGPUMean != 130.0/3 || *whole.UtilGPUMax != 90 || *whole.UtilMemMean != 40.0/3 || *whole.UtilMemMax != 30 {
		t.Errorf("utilization mean %v max %v", whole.UtilGPUMean, whole.UtilGPUMax)
	}
	// No process reported: the device's own use is the figure.
	if whole.PeakProcessMiB != nil || whole.ProcessScope != ScopeNone || whole.PeakMiB() != 2000 {
		t.Errorf("process peak %v scope %s PeakMiB %v", whole.PeakProcessMiB, whole.ProcessScope, whole.PeakMiB())
	}
	if mig.Samples != 3 || mig.Profile != "3g.40gb" {
		t.Errorf("second device %+v", mig)
	}
}

// A driver outside the job's PID namespace reports PIDs that are not ours to
// match: then every process on the device counts, and the scope says so.
func TestSamplerForeignPIDs(t *testing.T) {
	srv := node()
	gpu := srv.GPUs[1]
	s := sampler(t, srv, "3", tree{hidden: map[uint32]bool{90001: true, 90002: true}})
	gpu.SetProcesses(map[uint32]uint64{90001: 3000, 90002: 1000})
	_ = s.Sample(t0)
	st := s.Stats[0]
	if st.PeakProcessMiB == nil || *st.PeakProcessMiB != 4000 || st.ProcessScope != ScopeDevice {
		t.Errorf("peak %v scope %s, want 4000 device", st.PeakProcessMiB, st.ProcessScope)
	}
}

func TestSamplerErrors(t *testing.T) {
	srv := node()
	gpu := srv.GPUs[1]
	s := sampler(t, srv, "3", nil)
	gpu.FailProcesses(nvml.ERROR_NO_PERMISSION)
	gpu.SetUsed(3000)
	if err := s.Sample(t0); err != nil {
		t.Fatalf("a process query refused must not stop sampling: %v", err)
	}
	if st := s.Stats[0]; st.PeakMiB() != 3000 || len(st.Notes) != 1 {
		t.Errorf("PeakMiB %v notes %q", st.PeakMiB(), st.Notes)
	}
	gpu.FailMemory(nvml.ERROR_GPU_IS_LOST)
	err := s.Sample(t0.Add(time.Second))
	if !errors.Is(err, ErrSampling) {
		t.Fatalf("err = %v, want ErrSampling", err)
	}
	if st := s.Stats[0]; st.Samples != 1 || st.PeakUsedMiB != 3000 {
		t.Errorf("what was sampled before the error is lost: %+v", st)
	}
}

// A driver without the v2 memory call still gives the memory in use.
func TestSamplerOldDriver(t *testing.T) {
	srv := node()
	srv.NoV2 = true
	s := sampler(t, srv, "3", nil)
	if s.MemoryV2 {
		t.Fatal("MemoryV2 set although the driver lacks it")
	}
	srv.GPUs[1].SetUsed(777)
	if err := s.Sample(t0); err != nil || s.Stats[0].PeakUsedMiB != 777 {
		t.Errorf("err %v peak %v", err, s.Stats[0].PeakUsedMiB)
	}
}

// A call the driver library lacks panics in go-nvml; sampling turns it into an error.
func TestSamplerRecoversFromPanics(t *testing.T) {
	s := &Sampler{Stats: []*DeviceStats{{Device: Device{Name: "broken", Handle: nil}}}}
	if err := s.Sample(t0); !errors.Is(err, ErrSampling) {
		t.Fatalf("err = %v, want ErrSampling", err)
	}
}

// The SM clock is averaged over the samples that found the GPU busy: an
// idle GPU's clock drops, and is not the clock the job ran at.
func TestSamplerSMClock(t *testing.T) {
	srv := node()
	gpu := srv.GPUs[1]
	s := sampler(t, srv, "3", tree{})
	for _, c := range []struct{ util, mhz uint32 }{{90, 1600}, {0, 345}, {70, 1700}} {
		gpu.SetUtilization(c.util, 10)
		gpu.ClockMHz = c.mhz
		_ = s.Sample(t0)
	}
	if got := s.Stats[0].SMClockMean; got == nil || *got != 1650 {
		t.Errorf("mean busy clock %v, want 1650", got)
	}
}
