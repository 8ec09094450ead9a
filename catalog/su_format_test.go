package catalog

import "testing"

// A figure reached in two orders rounds the same way: recommend's and the
// docs' SU per 1M steps of one run (3 SU/h, 15 s, 400 steps) once read
// 31.2 and 31.3.
func TestRoundSUIgnoresFloatNoise(t *testing.T) {
	byRate := 3.0 * (15.0 / 400) / 3600 * 1e6
	bySU := 3.0 * 15 / 3600 / 400 * 1e6
	if RoundSU(byRate) != RoundSU(bySU) || FormatSU(bySU) != "31.3" {
		t.Errorf("%v → %s, %v → %s; want both 31.3", byRate, FormatSU(byRate), bySU, FormatSU(bySU))
	}
}
