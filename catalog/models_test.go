package catalog

import (
	"math"
	"strings"
	"testing"
)

// TestModelResources: every built-in profile fits its model, and the
// max-instances geometry of each profile fits in the GPU's slices.
func TestModelResources(t *testing.T) {
	for _, m := range builtinModels() {
		if m.MIGSMs < 1 || m.MIGSMs > m.SMs {
			t.Errorf("%s: mig_sms %d, sms %d", m.Name, m.MIGSMs, m.SMs)
		}
		for _, p := range m.Profiles {
			if p.SMs < 1 || p.SMs > m.MIGSMs {
				t.Errorf("%s %s: %d SMs, mig_sms %d", m.Name, p.Name, p.SMs, m.MIGSMs)
			}
			if p.L2Slices < 1 || p.L2Slices > p.MemorySlices {
				t.Errorf("%s %s: l2_slices %d, memory_slices %d", m.Name, p.Name, p.L2Slices, p.MemorySlices)
			}
			if n := p.MaxInstances; n*p.MemorySlices > m.MemorySlices || n*p.ComputeSlices > m.ComputeSlices || n*p.L2Slices > m.MemorySlices {
				t.Errorf("%s: %d × %s (%d memory, %d compute slices) exceed the GPU's %d and %d",
					m.Name, n, p.Name, p.MemorySlices, p.ComputeSlices, m.MemorySlices, m.ComputeSlices)
			}
		}
	}
}

func TestA100LosesSMsInMIGMode(t *testing.T) {
	m, ok := LookupModel("A100-SXM4-80GB")
	if !ok {
		t.Fatal("no A100-SXM4-80GB")
	}
	if m.SMs != 108 || m.MIGSMs != 98 {
		t.Errorf("A100-80GB: %d SMs, %d in MIG mode; want 108 and 98", m.SMs, m.MIGSMs)
	}
	// The runtime model counts a slice's SMs against the whole GPU: 7g is 98/108 of it.
	s := parseSite(t, strings.Replace(minimalSite, `name = "1g.10gb"`, `name = "7g.80gb"`, 1))
	p, _ := s.Profile("7g.80gb")
	if got := s.Shares(p).SM; math.Abs(got-98.0/108) > 1e-12 {
		t.Errorf("7g.80gb's SM share = %g, want 98/108", got)
	}
}

// TestL2Share: the 1g profiles with doubled memory have 2/8 of the bandwidth
// but 1/8 of the L2; the whole GPU has all of both.
func TestL2Share(t *testing.T) {
	s := parseSite(t, `version = 1
name = "h100"
gpu_model = "H100-80GB"

[[profiles]]
name = "1g.20gb"
request = "--gres=gpu:h100_1g.20gb:1"

[[profiles]]
name = "3g.40gb"
request = "--gres=gpu:h100_3g.40gb:1"

[[profiles]]
name = "full"
slice = "full"
request = "--gres=gpu:h100:1"
`)
	for name, want := range map[string][2]float64{"1g.20gb": {0.25, 0.125}, "3g.40gb": {0.5, 0.5}, "full": {1, 1}} {
		p, _ := s.Profile(name)
		if p.BandwidthShare != want[0] || p.L2Share != want[1] {
			t.Errorf("%s: bandwidth share %g, L2 share %g; want %g and %g", name, p.BandwidthShare, p.L2Share, want[0], want[1])
		}
	}

	s = parseSite(t, minimalSite+"l2_share = 0.5\n")
	if p, _ := s.Profile("1g.10gb"); p.L2Share != 0.5 {
		t.Errorf("a site's l2_share 0.5 read as %g", p.L2Share)
	}
}

func TestL2ShareOutOfRange(t *testing.T) {
	for _, v := range []string{"1.5", "-0.25"} {
		_, err := Parse("site.toml", []byte(minimalSite+"l2_share = "+v+"\n"))
		want := "site.toml:16: profile \"1g.10gb\": needs l2_share between 0 and 1"
		if err == nil || !strings.HasPrefix(err.Error(), want) {
			t.Errorf("l2_share = %s: error %v\nwant prefix %q", v, err, want)
		}
	}
}

func TestLoadModelsChecks(t *testing.T) {
	const table = `version = 1
[[models]]
name = "X"
sms = 108
mig_sms = 98
memory = "80GiB"
memory_slices = 8
compute_slices = 7
profiles = [
  { name = "1g.20gb", memory_slices = 2, compute_slices = 1, sms = 14, max_instances = 4, placements = "{0,2,4,6}:2" },
  { name = "7g.80gb", memory_slices = 8, l2_slices = 8, compute_slices = 7, sms = 98, max_instances = 1, placements = "{0}:8" },
]
`
	models, err := loadModels("t.toml", []byte(table))
	if err != nil {
		t.Fatal(err)
	}
	if got := models[0].Profiles[0].L2Slices; got != 2 {
		t.Errorf("absent l2_slices = %d, want memory_slices 2", got)
	}
	for _, tc := range []struct{ from, to, want string }{
		{"l2_slices = 8", "l2_slices = 9", "t.toml: model X: profile 7g.80gb: l2_slices must be between 1 and memory_slices (8), not 9"},
		{"l2_slices = 8", "l2_slices = -1", "l2_slices must be between 1 and memory_slices (8), not -1"},
		{"mig_sms = 98", "mig_sms = 112", "mig_sms must be at most sms (108), not 112"},
		{"mig_sms = 98", "mig_sms = 96", "mig_sms must be the largest profile's SMs (98), not 96"},
		{"mig_sms = 98\n", "", "mig_sms must be the largest profile's SMs (98), not 0"},
		// The guide's A100 table says 1/8 for a 1g.20gb its placements give 2/8.
		{`"{0,2,4,6}:2"`, `"{0,1,2,3,4,5,6}:1"`, `profile 1g.20gb: placements "{0,1,2,3,4,5,6}:1": size 1 is not the profile's memory_slices (2)`},
		{`"{0,2,4,6}:2"`, `"{0,2,4}:2"`, "3 starts cannot hold max_instances (4)"},
		{`"{0}:8"`, `"{1}:8"`, "an instance at 1 would run past the GPU's 8 memory slices"},
		{`"{0}:8"`, `"{4,0}:8"`, `placements "{4,0}:8": the starts must ascend`},
		{`"{0}:8"`, `"0:8"`, `"0:8" is not placements as nvidia-smi mig -lgipp prints them`},
		{`, placements = "{0}:8"`, "", "profile 7g.80gb: needs its placements"},
	} {
		_, err := loadModels("t.toml", []byte(strings.Replace(table, tc.from, tc.to, 1)))
		if err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%s: error %v, want %q", tc.to, err, tc.want)
		}
	}
	if _, err := loadModels("t.toml", []byte(strings.Replace(table, "mig_sms", "mig_smz", 1))); err == nil || !strings.Contains(err.Error(), `unknown key "mig_smz"`) {
		t.Errorf("unknown key: %v", err)
	}
}

func parseSite(t *testing.T, text string) *Site {
	t.Helper()
	s, err := Parse("site.toml", []byte(text))
	if err != nil {
		t.Fatalf("%v\n%s", err, text)
	}
	return s
}

// TestRelative: an H100 against the A100 80GB in SM throughput (SMs × boost
// clock × FP32 cores) and bandwidth, the two A100s against each other, and
// a model without the figures.
func TestRelative(t *testing.T) {
	model := func(name string) *GPUModel {
		m, ok := LookupModel(name)
		if !ok {
			t.Fatalf("no model %s", name)
		}
		return m
	}
	h100, a100, a40 := model("NVIDIA H100 80GB HBM3"), model("A100-80GB"), model("A100-40GB")
	for _, c := range []struct {
		from, to *GPUModel
		sm, bw   float64
	}{
		{h100, a100, 132 * 1980 * 128 / (108 * 1410 * 64.0), 3350 / 2039.0},
		{a100, h100, 108 * 1410 * 64 / (132 * 1980 * 128.0), 2039 / 3350.0},
		{a40, a100, 1, 1555 / 2039.0},
		{h100, h100, 1, 1},
	} {
		got, ok := Relative(c.from, c.to)
		if !ok || math.Abs(got.SM/c.sm-1) > 1e-9 || math.Abs(got.Bandwidth/c.bw-1) > 1e-9 {
			t.Errorf("Relative(%s, %s) = %+v, %v; want SM %.3f, bandwidth %.3f", c.from.Name, c.to.Name, got, ok, c.sm, c.bw)
		}
	}
	bare := *a100
	bare.Name, bare.ClockMHz = "custom", 0
	if got, ok := Relative(h100, &bare); ok {
		t.Errorf("Relative to a model without a clock = %+v; want none", got)
	}
}
