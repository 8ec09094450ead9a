package catalog

import (
	"errors"
	"maps"
	"reflect"
	"regexp"
	"slices"
	"strings"
	"testing"
)

func model(t *testing.T, name string) *GPUModel {
	t.Helper()
	m, ok := LookupModel(name)
	if !ok {
		t.Fatalf("no built-in model %s", name)
	}
	return m
}

var lgippLine = regexp.MustCompile(`Profile ID\s+(\d+) Placements?\s*: (\{[\d,]+\}:\d+)`)

// TestPlacementsAsNVIDIAListsThem: each profile's placements are those
// `nvidia-smi mig -lgipp` prints, its lines matched to profiles by the IDs
// `nvidia-smi mig -lgip` gives them.
func TestPlacementsAsNVIDIAListsThem(t *testing.T) {
	// NVIDIA's `-lgipp` example on the MIG User Guide's getting-started page,
	// as shared/notes/wulver-and-mig-facts.md §3.1 transcribes it.
	const a100 = `GPU  0 Profile ID 19 Placements: {0,1,2,3,4,5,6}:1
GPU  0 Profile ID 20 Placements: {0,1,2,3,4,5,6}:1
GPU  0 Profile ID 15 Placements: {0,2,4,6}:2
GPU  0 Profile ID 14 Placements: {0,2,4}:2
GPU  0 Profile ID  9 Placements: {0,4}:4
GPU  0 Profile ID  5 Placement : {0}:4
GPU  0 Profile ID  0 Placement : {0}:8`
	// An A30's `-lgipp` and `-lgip` (driver 535.183.01) in a public
	// transcript whose repository is unknown: corroboration only.
	const a30 = `GPU  0 Profile ID 14 Placements: {0,1,2,3}:1
GPU  0 Profile ID 21 Placements: {0,1,2,3}:1
GPU  0 Profile ID  5 Placements: {0,2}:2
GPU  0 Profile ID  6 Placements: {0,2}:2
GPU  0 Profile ID  0 Placement : {0}:4`
	for _, tc := range []struct {
		model, lgipp string
		ids          map[string]string // -lgip's profile ID of each profile
	}{
		// IDs: the guide's A100-40GB `-lgip` example (§3.1).
		{"A100-SXM4-40GB", a100, map[string]string{"19": "1g.5gb", "20": "1g.5gb+me", "15": "1g.10gb", "14": "2g.10gb", "9": "3g.20gb", "5": "4g.20gb", "0": "7g.40gb"}},
		// IDs: the A100-SXM4-80GB `-lgip` transcripts of §3.1; the same
		// placements by name in shared/notes/site-rules-and-mig-layouts.md
		// ("What a MIG layout is made of"), from the guide.
		{"A100-SXM4-80GB", a100, map[string]string{"19": "1g.10gb", "20": "1g.10gb+me", "15": "1g.20gb", "14": "2g.20gb", "9": "3g.40gb", "5": "4g.40gb", "0": "7g.80gb"}},
		// IDs: the H100 `-lgip` of jbarrow.ai/field_notes/nvidia-mig (§3.2)
		// and testdata/nvml/h100-discover.json (NVML, driver 580). Placements:
		// see gpus.toml's H100 entry for their sources.
		{"H100-80GB", a100, map[string]string{"19": "1g.10gb", "20": "1g.10gb+me", "15": "1g.20gb", "14": "2g.20gb", "9": "3g.40gb", "5": "4g.40gb", "0": "7g.80gb"}},
		// IDs: the same transcript's `-lgip`.
		{"A30-24GB", a30, map[string]string{"14": "1g.6gb", "21": "1g.6gb+me", "5": "2g.12gb", "6": "2g.12gb+me", "0": "4g.24gb"}},
	} {
		m := model(t, tc.model)
		lines := lgippLine.FindAllStringSubmatch(tc.lgipp, -1)
		if len(lines) != len(m.Profiles) || len(tc.ids) != len(m.Profiles) {
			t.Errorf("%s: %d -lgipp lines and %d IDs for %d profiles", m.Name, len(lines), len(tc.ids), len(m.Profiles))
		}
		for _, l := range lines {
			name := tc.ids[l[1]]
			p, ok := m.MIGProfile(name)
			if !ok {
				t.Errorf("%s: profile ID %s (%q) is not a profile of the model", m.Name, l[1], name)
				continue
			}
			if got := p.Placements.String(); got != l[2] {
				t.Errorf("%s %s: placements %s, NVIDIA's %s", m.Name, name, got, l[2])
			}
		}
	}
}

// TestInstancesAsNVIDIACountsThem: the most instances of a profile that
// NVIDIA's placements hold side by side is the "Instances" column of the
// guide's table for the model (shared/notes/wulver-and-mig-facts.md §3.1
// A100, §3.2 H100, §3.3 H200, §3.5 A30), and Place places that many. A
// +me profile holds the GPU's one set of media engines: its column says
// 1 though its placements have room for more.
func TestInstancesAsNVIDIACountsThem(t *testing.T) {
	for name, table := range map[string]map[string]int{
		"A100-SXM4-40GB": {"1g.5gb": 7, "1g.5gb+me": 1, "1g.10gb": 4, "2g.10gb": 3, "3g.20gb": 2, "4g.20gb": 1, "7g.40gb": 1},
		"A100-SXM4-80GB": {"1g.10gb": 7, "1g.10gb+me": 1, "1g.20gb": 4, "2g.20gb": 3, "3g.40gb": 2, "4g.40gb": 1, "7g.80gb": 1},
		"H100-80GB":      {"1g.10gb": 7, "1g.10gb+me": 1, "1g.20gb": 4, "2g.20gb": 3, "3g.40gb": 2, "4g.40gb": 1, "7g.80gb": 1},
		"H200-141GB":     {"1g.18gb": 7, "1g.18gb+me": 1, "1g.35gb": 4, "2g.35gb": 3, "3g.71gb": 2, "4g.71gb": 1, "7g.141gb": 1},
		"A30-24GB":       {"1g.6gb": 4, "1g.6gb+me": 1, "2g.12gb": 2, "2g.12gb+me": 1, "4g.24gb": 1},
	} {
		m := model(t, name)
		if len(table) != len(m.Profiles) {
			t.Errorf("%s: %d profiles, NVIDIA's table has %d", name, len(m.Profiles), len(table))
		}
		for prof, want := range table {
			p, ok := m.MIGProfile(prof)
			if !ok {
				t.Errorf("%s: no profile %s", name, prof)
				continue
			}
			side := 0 // the most disjoint placements: the earliest first, for intervals of one size
			for next, s := 0, 0; s < len(p.Placements.Starts); s++ {
				if start := p.Placements.Starts[s]; start >= next {
					side, next = side+1, start+p.Placements.Size
				}
			}
			if media := strings.HasSuffix(prof, "+me"); (!media && side != want) || (media && side < want) {
				t.Errorf("%s %s: its placements %s hold %d side by side, NVIDIA's table %d", name, prof, p.Placements, side, want)
			}
			if _, err := m.Place(slices.Repeat([]string{prof}, want)); err != nil {
				t.Errorf("%s: %d × %s: %v", name, want, prof, err)
			}
			if _, err := m.Place(slices.Repeat([]string{prof}, want+1)); err == nil {
				t.Errorf("%s: %d × %s placed, NVIDIA's table allows %d", name, want+1, prof, want)
			}
		}
	}
}

// TestLayoutsNVIDIAAndSitesRun: layouts NVIDIA's documents, mig-parted and
// Wulver run are valid, and the ones the placements rule out are not.
func TestLayoutsNVIDIAAndSitesRun(t *testing.T) {
	a100 := model(t, "A100-SXM4-80GB")
	for _, tc := range []struct {
		model  *GPUModel
		layout string
		valid  bool
	}{
		// Wulver: 3g.40gb + 2g.20gb + 1g.10gb + 1g.10gb on every MIG GPU
		// (shared/notes/wulver-and-mig-facts.md §2.1).
		{a100, "3g.40gb,2g.20gb,1g.10gb,1g.10gb", true},
		{a100, "1g.10gb,1g.10gb,1g.10gb,1g.10gb,1g.10gb,1g.10gb,1g.10gb", true},
		// 4 memory and 4 compute slices beside 4 and 3: supported since R510
		// (the guide's concepts page, §3.1).
		{a100, "4g.40gb,3g.40gb", true},
		// Two 3g.40gb take slices 0-3 and 4-7 ({0,4}:4): nothing fits beside.
		{a100, "3g.40gb,3g.40gb,1g.10gb", false},
		{a100, "3g.40gb,3g.40gb", true},
		{a100, "2g.20gb,2g.20gb,2g.20gb,1g.10gb", true},
		// 1g.20gb may start at 6 ({0,2,4,6}:2) where 2g.20gb may not ({0,2,4}:2).
		{a100, "4g.40gb,2g.20gb,1g.20gb", true},
		{a100, "4g.40gb,2g.20gb,2g.20gb", false},
		{a100, "1g.20gb,1g.20gb,1g.20gb,1g.20gb", true},
		{a100, "1g.20gb,1g.20gb,1g.20gb,1g.20gb,1g.10gb", false},
		{a100, "7g.80gb,1g.10gb", false},
		{a100, "1g.10gb+me,1g.10gb+me", false},
		// NVIDIA/mig-parted examples/config.yaml (A100-40GB): all-1g.5gb,
		// all-2g.10gb, all-3g.20gb, all-balanced.
		{model(t, "A100-40GB"), "1g.5gb,1g.5gb,1g.5gb,1g.5gb,1g.5gb,1g.5gb,1g.5gb", true},
		{model(t, "A100-40GB"), "2g.10gb,2g.10gb,2g.10gb", true},
		{model(t, "A100-40GB"), "3g.20gb,3g.20gb", true},
		{model(t, "A100-40GB"), "1g.5gb,1g.5gb,2g.10gb,3g.20gb", true},
		// all-balanced per GPU in NVIDIA/mig-parted
		// pkg/mig/builder/builder_test.go (ab1c145, expectedBalanced).
		{model(t, "H100-80GB"), "1g.10gb,1g.10gb,2g.20gb,3g.40gb", true},
		{model(t, "H200-141GB"), "1g.18gb,1g.18gb,2g.35gb,3g.71gb", true},
		{model(t, "A30-24GB"), "1g.6gb,1g.6gb,2g.12gb", true},
		{model(t, "A30-24GB"), "2g.12gb,2g.12gb+me", true},
		{model(t, "A30-24GB"), "2g.12gb,2g.12gb,1g.6gb", false},
	} {
		l, err := tc.model.ParseLayout(tc.layout)
		if (err == nil) != tc.valid {
			t.Errorf("%s on %s: error %v, want valid %v", tc.layout, tc.model.Name, err, tc.valid)
			continue
		}
		if err == nil {
			if err := tc.model.Check(l); err != nil {
				t.Errorf("%s placed as %s: %v", tc.layout, l.Placed(), err)
			}
			continue
		}
		var le *LayoutError
		if !errors.As(err, &le) || le.Model != tc.model.Name {
			t.Errorf("%s: %v is no LayoutError of %s", tc.layout, err, tc.model.Name)
		}
	}
}

// TestWulverLayoutFillsTheGPU: Wulver's 3-2-1-1 takes 8 of 8 memory slices
// and 7 of 7 compute slices (shared/notes/wulver-and-mig-facts.md §2.1), so
// no profile fits beside it; Place creates the 3g first, as NVIDIA's
// "Example 2: Creation of a 3-2-1-1 geometry" requires, whatever order it
// is written in.
func TestWulverLayoutFillsTheGPU(t *testing.T) {
	m := model(t, "A100-SXM4-80GB")
	l, err := m.ParseLayout("1g.10gb, 1G.10GB,2g.20gb ,3g.40gb")
	if err != nil {
		t.Fatal(err)
	}
	if got := l.String(); got != "3g.40gb,2g.20gb,1g.10gb,1g.10gb" {
		t.Errorf("creation order %s, want the 3g first", got)
	}
	memory, compute := 0, 0
	for _, in := range l {
		p, _ := m.MIGProfile(in.Profile)
		memory += p.MemorySlices
		compute += p.ComputeSlices
	}
	if memory != 8 || compute != 7 {
		t.Errorf("%s takes %d memory and %d compute slices, want 8 and 7", l.Placed(), memory, compute)
	}
	for _, p := range m.Profiles {
		if _, err := m.Place(append(l.Profiles(), p.Name)); err == nil {
			t.Errorf("%s fits beside Wulver's layout", p.Name)
		}
	}
}

// TestA100NineteenConfigurations: NVIDIA's table of A100 MIG configurations
// has 19 rows (an image of it on p.8 of Wulver's MIG slides of December
// 2025, shared/notes/wulver-and-mig-facts.md §3.1). Read as we read NVIDIA's
// figure, a row is one arrangement of the 1g.5gb, 2g.10gb, 3g.20gb, 4g.20gb
// and 7g.40gb profiles on the GPU that no instance of them can join. The
// arrangements are found here by Check alone.
func TestA100NineteenConfigurations(t *testing.T) {
	m := model(t, "A100-SXM4-40GB")
	var cands []Instance
	for _, name := range []string{"1g.5gb", "2g.10gb", "3g.20gb", "4g.20gb", "7g.40gb"} {
		p, _ := m.MIGProfile(name)
		for _, s := range p.Placements.Starts {
			cands = append(cands, Instance{name, s})
		}
	}
	maximal := 0
	eachValidSubset(m, cands, func(l Layout) {
		for _, c := range cands {
			if m.Check(append(slices.Clone(l), c)) == nil {
				return
			}
		}
		maximal++
	})
	if maximal != 19 {
		t.Errorf("%d maximal arrangements, NVIDIA's table has 19 rows", maximal)
	}
}

// eachValidSubset calls visit with every set of candidate instances that
// Check accepts (Check refuses every superset of a set it refuses).
func eachValidSubset(m *GPUModel, cands []Instance, visit func(Layout)) {
	var walk func(i int, cur Layout)
	walk = func(i int, cur Layout) {
		if i == len(cands) {
			visit(cur)
			return
		}
		walk(i+1, cur)
		if next := append(slices.Clone(cur), cands[i]); m.Check(next) == nil {
			walk(i+1, next)
		}
	}
	walk(0, nil)
}

// TestLayoutsAreEveryPlaceableSet: Layouts lists, once each, every set of
// profiles some arrangement holds as Check judges arrangements (found
// here by brute force over every profile at every start), each placed as
// Place places it; every profile alone is among them.
func TestLayoutsAreEveryPlaceableSet(t *testing.T) {
	for _, m := range builtinModels() {
		var cands []Instance
		for _, p := range m.Profiles {
			for _, s := range p.Placements.Starts {
				cands = append(cands, Instance{p.Name, s})
			}
		}
		want := map[string]bool{}
		eachValidSubset(&m, cands, func(l Layout) {
			if len(l) > 0 {
				want[profileSet(l)] = true
			}
		})
		got := map[string]bool{}
		for _, l := range m.Layouts() {
			key := profileSet(l)
			if got[key] {
				t.Errorf("%s: %s listed twice", m.Name, key)
			}
			got[key] = true
			if err := m.Check(l); err != nil {
				t.Errorf("%s: listed %v", m.Name, err)
			}
			if placed, err := m.Place(l.Profiles()); err != nil || !reflect.DeepEqual(placed, l) {
				t.Errorf("%s: listed %s, Place gives %s (%v)", m.Name, l.Placed(), placed.Placed(), err)
			}
		}
		if !maps.Equal(got, want) {
			t.Errorf("%s: %d layouts listed, %d placeable", m.Name, len(got), len(want))
		}
		for _, p := range m.Profiles {
			if !got[p.Name] {
				t.Errorf("%s: %s alone is not listed", m.Name, p.Name)
			}
		}
	}
}

func profileSet(l Layout) string {
	names := l.Profiles()
	slices.Sort(names)
	return strings.Join(names, ",")
}

// TestCheckNamesTheRuleBroken: Check's error names the instance and the
// rule; a layout Place cannot place says which limit it exceeds.
func TestCheckNamesTheRuleBroken(t *testing.T) {
	m := model(t, "A100-SXM4-80GB")
	for _, tc := range []struct {
		layout Layout
		want   string
	}{
		{Layout{{"3g.40gb", 2}}, "MIG layout 3g.40gb@2 on A100-SXM4-80GB: 3g.40gb cannot start at memory slice 2: NVIDIA's placements for it are {0,4}:4"},
		{Layout{{"1g.10gb", 7}}, "1g.10gb cannot start at memory slice 7"},
		{Layout{{"1g.10gb", -1}}, "1g.10gb cannot start at memory slice -1"},
		{Layout{{"3g.40gb", 4}, {"2g.20gb", 4}}, "3g.40gb@4 and 2g.20gb@4 share memory slice 4"},
		{Layout{{"4g.40gb", 0}, {"1g.20gb", 2}}, "4g.40gb@0 and 1g.20gb@2 share memory slice 2"},
		{Layout{{"2g.20gb", 0}, {"2g.20gb", 2}, {"2g.20gb", 4}, {"2g.20gb", 4}}, "4 instances of 2g.20gb, the GPU holds at most 3"},
		{Layout{{"3g.20gb", 0}}, `"3g.20gb" is not a MIG profile of the A100-SXM4-80GB (its profiles: 1g.10gb, 1g.10gb+me, 1g.20gb, 2g.20gb, 3g.40gb, 4g.40gb, 7g.80gb)`},
	} {
		err := m.Check(tc.layout)
		if err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%s: error %v, want %q", tc.layout.Placed(), err, tc.want)
		}
	}
	if err := m.Check(nil); err != nil {
		t.Errorf("the whole GPU: %v", err)
	}

	// No built-in model's placements let instances overrun its compute
	// slices; one whose do is refused.
	odd := GPUModel{Name: "odd", MemorySlices: 8, ComputeSlices: 7, Profiles: []MIGProfile{
		{Name: "4g.a", MemorySlices: 4, ComputeSlices: 4, MaxInstances: 1, Placements: Placements{[]int{0}, 4}},
		{Name: "4g.b", MemorySlices: 4, ComputeSlices: 4, MaxInstances: 1, Placements: Placements{[]int{4}, 4}},
	}}
	want := "the instances take 8 compute slices, the GPU has 7"
	if err := odd.Check(Layout{{"4g.a", 0}, {"4g.b", 4}}); err == nil || !strings.Contains(err.Error(), want) {
		t.Errorf("compute overrun: %v", err)
	}
	if _, err := odd.Place([]string{"4g.b", "4g.a"}); err == nil || !strings.Contains(err.Error(), "the profiles take 8 compute slices, the GPU has 7") {
		t.Errorf("compute overrun placed: %v", err)
	}

	for _, tc := range []struct{ profiles, want string }{
		{"3g.40gb,3g.40gb,1g.10gb", "the profiles take 9 memory slices, the GPU has 8"},
		{"4g.40gb,2g.20gb,2g.20gb", "the profiles take 8 compute slices, the GPU has 7"},
		{"4g.40gb,4g.40gb", "2 instances of 4g.40gb, the GPU holds at most 1"},
	} {
		_, err := m.Place(strings.Split(tc.profiles, ","))
		if err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("Place %s: error %v, want %q", tc.profiles, err, tc.want)
		}
	}
	// On the built-in models every set of profiles within those limits has
	// an arrangement; two profiles that may only start at 0 have none.
	odd.Profiles = []MIGProfile{
		{Name: "2g.a", MemorySlices: 2, ComputeSlices: 2, MaxInstances: 1, Placements: Placements{[]int{0}, 2}},
		{Name: "2g.b", MemorySlices: 2, ComputeSlices: 2, MaxInstances: 1, Placements: Placements{[]int{0}, 2}},
	}
	want = "MIG layout 2g.b,2g.a on odd: no arrangement fits NVIDIA's placements (2g.a {0}:2, 2g.b {0}:2)"
	if _, err := odd.Place([]string{"2g.b", "2g.a"}); err == nil || err.Error() != want {
		t.Errorf("no arrangement: %v\nwant %s", err, want)
	}
}

// TestParseLayout: a layout as an admin writes it. "full" is the whole GPU
// out of MIG mode; 7g.80gb is one instance in MIG mode, which an A100
// gives 98 of its 108 SMs.
func TestParseLayout(t *testing.T) {
	m := model(t, "A100-SXM4-80GB")
	for _, text := range []string{"full", " FULL "} {
		l, err := m.ParseLayout(text)
		if err != nil || len(l) != 0 || l.String() != "full" || l.Placed() != "full" {
			t.Errorf("%q: %v, %v", text, l, err)
		}
	}
	l, err := m.ParseLayout("7g.80gb")
	if err != nil || l.Placed() != "7g.80gb@0" {
		t.Errorf("7g.80gb: %s, %v", l.Placed(), err)
	}
	l, err = m.ParseLayout("1g.10gb,1g.10gb+me,3g.40gb")
	if err != nil || l.Placed() != "3g.40gb@0,1g.10gb@4,1g.10gb+me@5" {
		t.Errorf("placed as %s, %v", l.Placed(), err)
	}
	if again, err := m.ParseLayout(l.String()); err != nil || !reflect.DeepEqual(again, l) {
		t.Errorf("%s read back as %s, %v", l, again.Placed(), err)
	}
	if got, want := l.Counts(), map[string]int{"3g.40gb": 1, "1g.10gb": 1, "1g.10gb+me": 1}; !maps.Equal(got, want) {
		t.Errorf("counts %v, want %v", got, want)
	}
	for text, want := range map[string]string{
		"":                        `MIG layout "" on A100-SXM4-80GB: no profiles`,
		"1g.10gb,,2g.20gb":        "an empty profile between commas",
		"full,1g.10gb":            `"full" is the whole GPU, out of MIG mode`,
		"3g.40gb,5g.50gb":         `"5g.50gb" is not a MIG profile of the A100-SXM4-80GB`,
		"3g.20gb":                 `"3g.20gb" is not a MIG profile`, // an A100-40GB's name
		"3g.40gb,3g.40gb,1g.10gb": "MIG layout 3g.40gb,3g.40gb,1g.10gb on A100-SXM4-80GB: the profiles take 9 memory slices",
	} {
		_, err := m.ParseLayout(text)
		var le *LayoutError
		if err == nil || !strings.Contains(err.Error(), want) || !errors.As(err, &le) {
			t.Errorf("%q: error %v, want a LayoutError with %q", text, err, want)
		}
	}
}

func TestParsePlacements(t *testing.T) {
	p, err := ParsePlacements(" {0, 2,4,6}:2 ")
	if err != nil || !reflect.DeepEqual(p, Placements{[]int{0, 2, 4, 6}, 2}) || p.String() != "{0,2,4,6}:2" {
		t.Errorf("%+v, %v", p, err)
	}
	if !p.Allows(6) || p.Allows(5) || p.Allows(-2) {
		t.Error("Allows")
	}
	for _, bad := range []string{"", "{0,2}", "0,2:2", "{0,2}:0", "{0,,2}:2", "{2,0}:2", "{0,2}:x", "{-1}:1"} {
		if _, err := ParsePlacements(bad); err == nil {
			t.Errorf("%q read", bad)
		}
	}
}

// FuzzParseLayout reads any text as a layout of each built-in model: it
// never panics; it refuses with a one-line *LayoutError, or gives a
// layout that Check accepts and that reads back as itself. Placements
// read back as themselves too.
func FuzzParseLayout(f *testing.F) {
	for _, s := range []string{"3g.40gb,2g.20gb,1g.10gb,1g.10gb", "full", "7g.80gb", " 1G.5GB ,1g.5gb+me", "3g.40gb,3g.40gb,1g.10gb", ",", "{0,2,4,6}:2", "4g.24gb"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, text string) {
		for _, m := range builtinModels() {
			l, err := m.ParseLayout(text)
			if err != nil {
				var le *LayoutError
				if !errors.As(err, &le) || strings.Contains(le.Reason, "\n") {
					t.Fatalf("%s: %q: error %T %v", m.Name, text, err, err)
				}
				continue
			}
			if err := m.Check(l); err != nil {
				t.Fatalf("%s: %q placed as %s: %v", m.Name, text, l.Placed(), err)
			}
			if again, err := m.ParseLayout(l.String()); err != nil || !reflect.DeepEqual(again, l) {
				t.Fatalf("%s: %q read back as %s, %v", m.Name, l, again.Placed(), err)
			}
		}
		if p, err := ParsePlacements(text); err == nil {
			if again, err := ParsePlacements(p.String()); err != nil || !reflect.DeepEqual(again, p) {
				t.Fatalf("placements %q read back as %v, %v", text, again, err)
			}
		}
	})
}
