package slurm

import (
	"slices"
	"strings"
	"testing"
)

// Hostlists as scontrol show hostnames expands them.
func TestExpandHostlist(t *testing.T) {
	for list, want := range map[string]string{
		"n0101":              "n0101",
		"n[0101-0103]":       "n0101 n0102 n0103",
		"n[0101-0103,0105]":  "n0101 n0102 n0103 n0105",
		"gpu01,gpu02":        "gpu01 gpu02",
		"a[1-2]b[1-2]":       "a1b1 a1b2 a2b1 a2b2",
		"n[8-10]":            "n8 n9 n10",
		"rack[1-2]-gpu,misc": "rack1-gpu rack2-gpu misc",
	} {
		got, err := ExpandHostlist(list)
		if err != nil || strings.Join(got, " ") != want {
			t.Errorf("%q: %q, %v; want %q", list, got, err, want)
		}
	}
	for _, bad := range []string{"n[1-", "n]", "n[3-1]", "n[a-b]", "", "n[1-99999999]"} {
		if got, err := ExpandHostlist(bad); err == nil {
			t.Errorf("%q: %q, want an error", bad, got)
		}
	}
	if got, _ := ExpandHostlist("n[01-03]"); !slices.Equal(got, []string{"n01", "n02", "n03"}) {
		t.Errorf("widths: %q", got)
	}
}
