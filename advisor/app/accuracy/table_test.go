package accuracy

import (
	"math"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/migadvisor/migadvisor/catalog"
	"github.com/migadvisor/migadvisor/catalog/catalogtest"
)

const wulverTables = "../../../catalog/data/reference/wulver/"

// readFile is ReadCases on a file.
func readFile(t *testing.T, file string, site *catalog.Site) ([]Case, error) {
	t.Helper()
	f, err := os.Open(file)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	return ReadCases(file, f, site)
}

// times are a case's seconds by profile.
func times(c Case) map[string]float64 {
	m := map[string]float64{}
	for _, p := range c.Points {
		m[p.Profile] = p.Seconds
	}
	return m
}

func near(a, b float64) bool { return math.Abs(a-b) <= 1e-9*math.Max(math.Abs(a), math.Abs(b)) }

// Every published Wulver table reads on the Wulver site but the profile
// comparison, which holds no measurement.
func TestReadCasesOfWulversTables(t *testing.T) {
	site := catalogtest.Wulver(t)
	files, _ := filepath.Glob(wulverTables + "*.csv")
	history, _ := filepath.Glob(wulverTables + "history/*/*.csv")
	if len(files) < 7 || len(history) < 1 {
		t.Fatalf("tables %v %v", files, history)
	}
	byFile := map[string][]Case{}
	for _, f := range append(files, history...) {
		cases, err := readFile(t, f, site)
		if filepath.Base(f) == "mig-profile-comparison.csv" {
			if err == nil || !strings.HasPrefix(err.Error(), f+":1: no column of times") {
				t.Errorf("%s: %v, want no column of times on line 1", f, err)
			}
			continue
		}
		if err != nil || len(cases) == 0 {
			t.Errorf("%s: %d cases, %v", f, len(cases), err)
		}
		byFile[strings.TrimPrefix(f, wulverTables)] = cases
	}

	gromacs := byFile["gromacs_performance.csv"]
	if len(gromacs) != 1 || gromacs[0].Name != "gromacs_performance Walltime (s)" || len(gromacs[0].Points) != 4 || times(gromacs[0])["full"] != 182.142 {
		t.Errorf("gromacs: %+v", gromacs)
	}

	// Rates: the TFLOPs columns (the table has no time), as 1/rate.
	matmul := byFile["matrix_multiplication.csv"]
	if len(matmul) != 2 || matmul[0].Name != "matrix_multiplication Peak FP16 TFLOPs" || matmul[1].Name != "matrix_multiplication Peak FP32 (TF32) TFLOPs" {
		t.Fatalf("matmul: %+v", matmul)
	}
	fp16, fp32 := times(matmul[0]), times(matmul[1])
	if !near(fp16["1g.10gb"]/fp16["full"], 286.185/38.694) || !near(fp32["2g.20gb"]/fp32["3g.40gb"], 55.576/37.887) {
		t.Errorf("matmul times %v %v: ratios are not the TFLOPs' inverted", fp16, fp32)
	}

	// Hours become seconds.
	llm := byFile["llm-finetuning.csv"]
	if len(llm) != 1 || !near(times(llm[0])["2g.20gb"], 0.556*3600) || !near(times(llm[0])["full"], 0.267*3600) {
		t.Errorf("llm: %+v", llm)
	}
	// The first LLM run's OOM on 1g.10gb is not a time: three profiles.
	first := byFile["history/a5945c9/llm-finetuning.csv"]
	if len(first) != 1 || len(first[0].Points) != 3 || times(first[0])["full"] != 180.81 {
		t.Errorf("first llm run: %+v", first)
	}

	// The same times as the built-in reference set reads.
	for _, ref := range ReferenceCases(site) {
		got := byFile[ref.Name+".csv"]
		if len(got) != 1 || len(got[0].Points) != len(ref.Points) {
			t.Errorf("%s: %+v, want %+v", ref.Name, got, ref.Points)
			continue
		}
		for i, p := range ref.Points {
			if q := got[0].Points[i]; q.Profile != p.Profile || !near(q.Seconds, p.Seconds) || q.Shares != p.Shares {
				t.Errorf("%s: %+v, want %+v", ref.Name, q, p)
			}
		}
	}
}

// The long layout on a model's site: one case per job, minutes in
// seconds, a job on one profile dropped, OOM and blank rows skipped.
func TestReadCasesLongLayout(t *testing.T) {
	site, err := catalog.ModelSite("A100-40GB")
	if err != nil {
		t.Fatal(err)
	}
	cases, err := readFile(t, "testdata/a100-40gb-long.csv", site)
	if err != nil {
		t.Fatal(err)
	}
	if len(cases) != 2 || cases[0].Name != "resnet" || cases[1].Name != "bert" {
		t.Fatalf("cases %+v", cases)
	}
	resnet, bert := times(cases[0]), times(cases[1])
	want := map[string]float64{"1g.5gb": 1800, "3g.20gb": 720, "7g.40gb": 480, "full": 450}
	for p, s := range want {
		if resnet[p] != s {
			t.Errorf("resnet on %s: %g s, want %g", p, resnet[p], s)
		}
	}
	if len(resnet) != 4 || len(bert) != 3 || bert["2g.10gb"] != 3000 || bert["full"] != 900 {
		t.Errorf("resnet %v, bert %v", resnet, bert)
	}
	for _, p := range cases[0].Points {
		prof, _ := site.Profile(p.Profile)
		if p.Shares != site.Shares(prof) {
			t.Errorf("%s: shares %+v", p.Profile, p.Shares)
		}
	}

	rates, err := readFile(t, "testdata/a100-40gb-rates.csv", site)
	if err != nil || len(rates) != 1 || rates[0].Name != "resnet" || !near(times(rates[0])["1g.5gb"]/times(rates[0])["full"], 5) {
		t.Errorf("rates: %+v, %v", rates, err)
	}
	// Scored like any cases.
	rows := Compare("a100-40gb-long", site, cases)
	if last := rows[len(rows)-1]; last.Protocol != Overall || last.Model.Trials == 0 || last.Model.Trials != last.Naive.Trials {
		t.Errorf("rows %+v", rows)
	}
}

// Each mistake is one sentence naming the file and its line.
func TestReadCasesErrors(t *testing.T) {
	site, err := catalog.ModelSite("A100-40GB")
	if err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct{ name, csv, want string }{
		{"unknown profile", "job,profile,time (s)\na,1g.5gb,10\na,v100,5\n",
			`t.csv:3: "v100" names no one profile of site a100-sxm4-40gb (its profiles: 1g.5gb, 1g.10gb, 2g.10gb, 3g.20gb, 4g.20gb, 7g.40gb, full; measured on another GPU? give --gpu MODEL)`},
		{"not a number", "job,profile,time (s)\na,1g.5gb,10\n\na,full,fast\n", `t.csv:4: "fast" under "time (s)" is not a number`},
		{"not positive", "GPU Profile,Walltime (s)\n1g.5gb,10\nfull,-2\n", `t.csv:3: -2 under "Walltime (s)" is not a positive number`},
		{"zero rate", "GPU Profile,TFLOPs\n1g.5gb,0\n", `t.csv:2: 0 under "TFLOPs" is not a positive number`},
		{"beyond range", "GPU Profile,Walltime (s)\n1g.5gb,1e300\n", `t.csv:2: 1e300 under "Walltime (s)" is beyond any time or rate this reads`},
		{"ambiguous memory", "GPU Profile,Walltime (s)\nA100_10gb,10\n", `t.csv:2: "A100_10gb" names no one profile`},
		{"no usable column", "GPU Profile,SMs,Memory (GB)\n1g.5gb,14,5\n", "t.csv:1: no column of times"},
		{"measured twice", "job,profile,time (s)\na,1g.5gb,10\nb,1g.5gb,3\na,MIG 1g.5gb,11\n", "t.csv:4: a is measured twice on 1g.5gb (line 2 too)"},
		{"wide row twice", "GPU Profile,Walltime (s)\nfull,10\nno MIG,11\n", "t.csv:3: t Walltime (s) is measured twice on full (line 2 too)"},
		{"no job", "job,profile,time (s)\na,1g.5gb,10\n,full,3\n", "t.csv:3: the row names no job"},
		{"bad quote", "job,profile,time (s)\na,1g.5gb,10\n\"a\"b\",full,3\n", "t.csv:3:"},
		{"empty", "\n\n", "t.csv: the table is empty"},
		{"no rows", "job,profile,time (s)\n,,\n", "t.csv:1: the table has a header but no rows under it"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := ReadCases("t.csv", strings.NewReader(tc.csv), site)
			if err == nil || !strings.HasPrefix(err.Error(), tc.want) || strings.Contains(err.Error(), "\n") {
				t.Errorf("error %v, want %q", err, tc.want)
			}
		})
	}
}

// Headers: a rate before a time, the time's unit from the header.
func TestValueColumn(t *testing.T) {
	for header, want := range map[string]struct {
		ok, rate bool
		scale    float64
	}{
		"Walltime (s)": {true, false, 1}, "Walltime (h)": {true, false, 3600}, "Training Time (s)": {true, false, 1},
		"Runtime [min]": {true, false, 60}, "duration (minutes)": {true, false, 60}, "Elapsed time hours": {true, false, 3600},
		"Step time (ms/step)": {true, false, 1e-3}, "seconds per epoch": {true, false, 1}, "p50 latency": {true, false, 1},
		"Peak FP16 TFLOPs": {true, true, 1}, "Tokens/s": {true, true, 1}, "Throughput (images/sec)": {true, true, 1},
		"samples per second": {true, true, 1}, "Performance (ns/day)": {true, true, 1},
		"SMs": {}, "Memory (GB)": {}, "SU Rate (/hr)": {}, "Cost/Performance": {}, "Number of GPU(s)": {}, "Test Accuracy (%)": {},
	} {
		c, ok := valueColumn(0, header)
		if ok != want.ok || c.rate != want.rate || ok && !c.rate && c.scale != want.scale {
			t.Errorf("%q: %v %+v, want %+v", header, ok, c, want)
		}
	}
}
