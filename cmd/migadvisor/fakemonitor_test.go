//go:build !noreport

package main

import (
	"fmt"
	"os"
	"strconv"

	"github.com/NVIDIA/go-nvml/pkg/nvml"

	"github.com/migadvisor/migadvisor/internal/fakenvml"
)

// fakeMonitorEnv, set to a figure in MiB, makes this test binary run as
// `migadvisor monitor` on a fake NVML whose one device, a 1g.10gb slice
// of an A100, holds that much: a session's monitor must measure something,
// and neither the dev cluster's GPUs (Slurm's alone) nor a unit test's
// machine have a slice. Everything else is the real monitor's: the job it
// learns from Slurm's environment, where it writes its summary.
const fakeMonitorEnv = "MIGADVISOR_TEST_FAKE_MONITOR_MIB"

func init() {
	if used := os.Getenv(fakeMonitorEnv); used != "" {
		os.Exit(fakeMonitor(used))
	}
}

// fakeMonitor runs `migadvisor monitor` (this process's arguments) on the
// fake slice.
func fakeMonitor(usedMiB string) int {
	mib, err := strconv.ParseUint(usedMiB, 10, 64)
	if err != nil {
		fmt.Fprintf(os.Stderr, "%s: %v\n", fakeMonitorEnv, err)
		return 2
	}
	slice := &fakenvml.Device{Name: "NVIDIA A100-SXM4-80GB MIG 1g.10gb", UUID: "MIG-1111aaaa-0000-0000-0000-000000000000",
		TotalMiB: 9728, GI: 9}
	slice.SetUsed(mib)
	srv := &fakenvml.Server{GPUs: []*fakenvml.Device{{Name: "NVIDIA A100-SXM4-80GB", UUID: "GPU-aaaa1111-0000-0000-0000-000000000000",
		TotalMiB: 81920, MIG: []*fakenvml.Device{slice}}}}
	newNVML = func() nvml.Interface { return srv.Lib() }
	os.Setenv("CUDA_VISIBLE_DEVICES", slice.UUID)
	return run(append([]string{"migadvisor"}, os.Args[1:]...), os.Stdout, os.Stderr)
}
