package main

import (
	"encoding/json"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

// writeTable writes a CSV into the test's directory.
func writeTable(t *testing.T, name, text string) string {
	t.Helper()
	file := filepath.Join(t.TempDir(), name)
	if err := os.WriteFile(file, []byte(text), 0o644); err != nil {
		t.Fatal(err)
	}
	return file
}

// Without tables, the site's reference benchmarks: the table, then the
// verdict, is TestGolden's (testdata/accuracy).

const longTable = `Job,GPU Profile,Runtime (min)
resnet,1g.5gb,30
resnet,MIG 3g.20gb,12
resnet,full,7.5
bert,2g.10gb,50
bert,4g.20gb,26
bert,7g.40gb,17

`

// --gpu scores a table measured elsewhere on its model's profiles; a set
// per file, named by it.
func TestAccuracyOfATableOnAGPUModel(t *testing.T) {
	isolate(t)
	file := writeTable(t, "lab.csv", longTable)
	out, errOut, code := migadvisor(t, "accuracy", file, "--gpu", "A100-40GB")
	if code != 0 || errOut != "" {
		t.Fatalf("exit %d: %s", code, errOut)
	}
	if !strings.Contains(out, "\nlab  one profile known ") || !strings.Contains(out, "\nlab, all three: migadvisor ") {
		t.Errorf("out:\n%s", out)
	}
	// On the Wulver site, 1g.5gb is no profile.
	_, errOut, code = migadvisor(t, "accuracy", file)
	if code != 1 || !strings.HasPrefix(errOut, "migadvisor: "+file+":2: \"1g.5gb\" names no one profile of site wulver") {
		t.Errorf("exit %d, %q", code, errOut)
	}
}

// A mistake in a table is its file and line, exit 1; flag mistakes are
// usage errors.
func TestAccuracyErrors(t *testing.T) {
	isolate(t)
	bad := writeTable(t, "bad.csv", "job,profile,time (s)\na,1g.5gb,10\na,full,fast\n")
	_, errOut, code := migadvisor(t, "accuracy", "--gpu", "A100-40GB", bad)
	if code != 1 || errOut != "migadvisor: "+bad+":3: \"fast\" under \"time (s)\" is not a number\n" {
		t.Errorf("exit %d, %q", code, errOut)
	}
	single := writeTable(t, "single.csv", "job,profile,time (s)\na,1g.5gb,10\nb,full,3\n")
	_, errOut, code = migadvisor(t, "accuracy", "--gpu", "A100-40GB", single)
	if code != 1 || !strings.Contains(errOut, single+": left out: no job in it was measured on two profiles or more\n") ||
		!strings.Contains(errOut, "migadvisor: no table has a job measured on two profiles or more") {
		t.Errorf("exit %d, %q", code, errOut)
	}
	_, errOut, code = migadvisor(t, "accuracy", "--gpu", "Z9000", bad)
	if code != 2 || !strings.HasPrefix(errOut, "migadvisor: --gpu: no built-in GPU model \"Z9000\" (built-in: A100-SXM4-40GB,") {
		t.Errorf("exit %d, %q", code, errOut)
	}
	if _, errOut, code = migadvisor(t, "accuracy", "--gpu", "A100-40GB"); code != 2 || !strings.Contains(errOut, "give TABLE.csv") {
		t.Errorf("exit %d, %q", code, errOut)
	}
	if _, errOut, code = migadvisor(t, "accuracy", filepath.Join(t.TempDir(), "none.csv")); code != 1 || !strings.Contains(errOut, "none.csv") {
		t.Errorf("exit %d, %q", code, errOut)
	}
	if _, errOut, code = migadvisor(t, "--site", "../../examples/sites/h100.toml", "accuracy"); code != 1 || !strings.Contains(errOut, "no built-in reference benchmarks") {
		t.Errorf("exit %d, %q", code, errOut)
	}
}

// --json is the rows, every set's, with the scores side by side.
func TestAccuracyJSON(t *testing.T) {
	isolate(t)
	file := writeTable(t, "lab.csv", longTable)
	out, errOut, code := migadvisor(t, "accuracy", "--json", "--gpu", "A100-SXM4-40GB", file)
	if code != 0 || errOut != "" {
		t.Fatalf("exit %d: %s", code, errOut)
	}
	var rows []struct {
		Set      string `json:"set"`
		Protocol string `json:"protocol"`
		Model    struct {
			Trials  int      `json:"trials"`
			MAPE    float64  `json:"mape_pct"`
			InRange *int     `json:"in_range"`
			Width   *float64 `json:"range_width_pct"`
		} `json:"migadvisor"`
		Naive struct {
			Trials int `json:"trials"`
		} `json:"naive"`
		Baselines []struct {
			Name   string `json:"name"`
			Trials int    `json:"trials"`
		} `json:"baselines"`
		Best  string `json:"best_baseline"`
		Beats *bool  `json:"beats_best_baseline"`
	}
	if err := json.Unmarshal([]byte(out), &rows); err != nil {
		t.Fatalf("%v:\n%s", err, out)
	}
	if len(rows) != 4 || rows[3].Set != "lab" || rows[3].Protocol != "all three" || rows[3].Model.Trials == 0 || rows[3].Model.Trials != rows[3].Naive.Trials {
		t.Errorf("rows %+v", rows)
	}
	for _, r := range rows {
		var names []string
		for _, b := range r.Baselines {
			names = append(names, b.Name)
			if b.Trials != r.Model.Trials {
				t.Errorf("%s, %s: %s on %d trials, the model on %d", r.Set, r.Protocol, b.Name, b.Trials, r.Model.Trials)
			}
		}
		if strings.Join(names, ", ") != "naive 1/SM, 1/√SM, 1/bandwidth, peers' fixed part" || !slices.Contains(names, r.Best) ||
			r.Beats == nil || r.Model.InRange == nil || r.Model.Width == nil {
			t.Errorf("%s, %s: %+v", r.Set, r.Protocol, r)
		}
	}
	out, _, code = migadvisor(t, "accuracy", "--json")
	if code != 0 || !strings.HasPrefix(out, "[") || !strings.Contains(out, `"set": "wulver workloads"`) {
		t.Errorf("reference --json: exit %d\n%s", code, out)
	}
}
