//go:build !noreport

package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/NVIDIA/go-nvml/pkg/nvml"

	"github.com/migadvisor/migadvisor/bench/monitor"
	"github.com/migadvisor/migadvisor/internal/fakenvml"
)

func TestMonitorCommandLine(t *testing.T) {
	isolate(t)
	cases := []struct {
		args   []string
		code   int
		stderr string
	}{
		{[]string{"monitor", "sh", "-c", "exit 7"}, 7, ""}, // -c is the command's, not ours
		{[]string{"monitor", "--", "sh", "-c", "kill -TERM $$"}, 143, ""},
		{[]string{"monitor", "--interval", "bogus", "--", "true"}, 0, `--interval "bogus" is not a duration`},
		{[]string{"monitor", "--interval=1ms", "true"}, 0, "too short"},
		{[]string{"monitor", "--", "/no/such/program"}, 127, "cannot run /no/such/program"},
		{[]string{"monitor"}, 2, "monitor needs a command"},
		{[]string{"monitor", "--bogus", "true"}, 2, "unknown flag --bogus"},
		{[]string{"--site", "wulver", "monitor", "sh", "-c", "exit 6"}, 6, ""},
	}
	for _, c := range cases {
		_, errOut, code := migadvisor(t, c.args...)
		if code != c.code || !strings.Contains(errOut, c.stderr) {
			t.Errorf("%v: exit %d, stderr %q; want %d and %q", c.args, code, errOut, c.code, c.stderr)
		}
	}
}

func TestHelpCommandTopics(t *testing.T) {
	isolate(t)
	for args, want := range map[string]string{"help monitor": "Usage: migadvisor monitor", "help sweep": "migadvisor sweep - write",
		"help catalog discover": "catalog discover - read", "help": "USAGE:"} {
		out, errOut, code := migadvisor(t, strings.Fields(args)...)
		if code != 0 || !strings.Contains(out, want) {
			t.Errorf("%s: exit %d, stdout %q, stderr %q", args, code, out, errOut)
		}
	}
}

func TestMonitorCommandWritesSummary(t *testing.T) {
	isolate(t)
	srv := &fakenvml.Server{GPUs: []*fakenvml.Device{{Name: "NVIDIA H100 80GB HBM3", UUID: "GPU-1234", TotalMiB: 81559}}}
	srv.GPUs[0].SetUsed(3000)
	srv.GPUs[0].SetUtilization(50, 20)
	old := newNVML
	newNVML = func() nvml.Interface { return srv.Lib() }
	t.Cleanup(func() { newNVML = old })
	t.Setenv("CUDA_VISIBLE_DEVICES", "GPU-1234")
	out := filepath.Join(t.TempDir(), "gpu.json")
	_, errOut, code := migadvisor(t, "monitor", "--out", out, "--interval", "50ms", "sh", "-c", "sleep 0.3; exit 2")
	if code != 2 {
		t.Fatalf("exit %d: %s", code, errOut)
	}
	if !strings.Contains(errOut, "MIGADVISOR_GPU peak_mib=3000 used_peak_mib=3000 total_mib=81559 ") || !strings.Contains(errOut, "util=mean:50,max:50 mem_util=mean:20,max:20 device=NVIDIA H100 80GB HBM3\n") {
		t.Errorf("stderr %q", errOut)
	}
	sum, err := monitor.ReadSummary(out)
	if err != nil {
		t.Fatal(err)
	}
	if sum.ExitStatus != 2 || sum.IntervalMS != 50 || sum.Samples < 2 || sum.Devices[0].Visible != "GPU-1234" {
		t.Errorf("summary %+v", sum)
	}
	if info, _ := os.Stat(out); info.Mode().Perm() != 0o644 {
		t.Errorf("summary mode %v", info.Mode().Perm())
	}
}
