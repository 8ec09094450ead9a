package wrapper

import (
	"strings"
	"testing"

	"github.com/migadvisor/migadvisor/slurm"
)

func TestAsksOwnHelp(t *testing.T) {
	for _, tc := range []struct {
		args    string
		viaShim bool
		want    bool
	}{
		{"--help", false, true},
		{"-h", false, true},
		{"--help", true, false}, // sbatch --help through the shim: Slurm's
		{"--help job.sh", false, false},
		{"job.sh --help", false, false},
		{"", false, false},
	} {
		shim := ""
		if tc.viaShim {
			shim = "1"
		}
		t.Setenv(slurm.ShimEnv, shim)
		if got := AsksOwnHelp(strings.Fields(tc.args)); got != tc.want {
			t.Errorf("AsksOwnHelp(%q), shim %v = %v, want %v", tc.args, tc.viaShim, got, tc.want)
		}
	}
}

func TestIsSbatchName(t *testing.T) {
	for argv0, want := range map[string]bool{
		"sbatch": true, "/usr/local/bin/sbatch": true, "./sbatch": true,
		"migadvisor": false, "/usr/bin/sbatch.real": false, "migadvisor-sbatch": false,
	} {
		if got := IsSbatchName(argv0); got != want {
			t.Errorf("IsSbatchName(%q) = %v, want %v", argv0, got, want)
		}
	}
}
