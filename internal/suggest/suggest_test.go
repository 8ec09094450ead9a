package suggest

import (
	"slices"
	"testing"
)

func TestNearestCountsEdits(t *testing.T) {
	flags := []string{"probe", "profiles", "prior", "json"}
	for typed, want := range map[string]string{
		"prob":   "probe",
		"jsn":    "json",
		"proble": "probe",
		"priro":  "prior", // a swap is two edits
		"bogus":  "",
	} {
		if got := Nearest(typed, flags, 2); got != want {
			t.Errorf("Nearest(%q) = %q, want %q", typed, got, want)
		}
	}
}

func TestNamesFindsWhatAHistoryKnows(t *testing.T) {
	known := []string{"sys/dashboard/sys/jupyter", "ondemand/sys/dashboard/sys/rstudio", "interactive", "train", "bash"}
	for typed, want := range map[string][]string{
		"jupyterlb":   {"sys/dashboard/sys/jupyter"},          // the app's part, two edits
		"Jupyter":     {"sys/dashboard/sys/jupyter"},          // case
		"rstudio":     {"ondemand/sys/dashboard/sys/rstudio"}, // the last part
		"interactiv":  {"interactive"},
		"dashboard":   {"sys/dashboard/sys/jupyter", "ondemand/sys/dashboard/sys/rstudio"}, // held
		"tarin":       {"train"},
		"nothinglike": nil,
		"train":       nil, // the name itself is no suggestion
	} {
		if got := Names(typed, known, 3); !slices.Equal(got, want) && !(len(got) == 0 && len(want) == 0) {
			t.Errorf("Names(%q) = %q, want %q", typed, got, want)
		}
	}
	if got := Names("sys", known, 1); len(got) != 1 {
		t.Errorf("at most n: %q", got)
	}
}
