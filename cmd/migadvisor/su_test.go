package main

import (
	"strings"
	"testing"
)

// What su prints for a script or flags is TestGolden's (testdata/su).

// su --help says what su does without a flag: the defaults it prints are
// the ones it applies.
func TestSUHelpDefaultsMatchTheBehaviour(t *testing.T) {
	isolate(t)
	out, _, _ := migadvisor(t, "su", "--help")
	for _, want := range []string{
		"--gpus value       how many of the profile (default: 1, or the script's)",
		"--cpus value       CPUs (default: 1, or the script's)",
		"--hours value      run time in hours (default: 1, or the script's --time)",
		"--partition value  partition (default: the script's, else the profile's first, else the site's default)",
	} {
		if !strings.Contains(out, want) {
			t.Errorf("su --help lacks %q:\n%s", want, out)
		}
	}
	if strings.Contains(out, "(default: 0)") {
		t.Errorf("su --help names a default su does not use:\n%s", out)
	}
}
