package catalog

import (
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

const minimalSite = `version = 1
name = "mini"
gpu_model = "A100-SXM4-80GB"

[billing]
gpu_weight = 16.0
gpu_memory = "80G"

[[partitions]]
name = "gpu"

[[profiles]]
name = "1g.10gb"
request = "--gres=gpu:a100_10g:1"
partitions = ["gpu"]
`

func TestWulverSite(t *testing.T) {
	s := wulver(t)
	want := []struct {
		name, request, gresType string
		sms                     int
		usableGiB               float64
	}{
		{"1g.10gb", "--gres=gpu:a100_10g:1", "a100_10g", 14, 9.5},
		{"2g.20gb", "--gres=gpu:a100_20g:1", "a100_20g", 28, 19.5},
		{"3g.40gb", "--gres=gpu:a100_40g:1", "a100_40g", 42, 39.5},
		{"full", "--gres=gpu:a100:1", "a100", 108, 79.3},
	}
	if len(s.Profiles) != len(want) {
		t.Fatalf("%d profiles, want %d", len(s.Profiles), len(want))
	}
	for i, w := range want {
		p := s.Profiles[i]
		if p.Name != w.name || p.Request != w.request || p.GRESType != w.gresType || p.SMs != w.sms || p.UsableMemory.GiB() != w.usableGiB {
			t.Errorf("profile %d = %s %s %s %d SMs %.2f GiB; want %+v", i, p.Name, p.Request, p.GRESType, p.SMs, p.UsableMemory.GiB(), w)
		}
	}
	if max, ok := s.MaxWalltimeFor("gpu"); !ok || max.Hours() != 72 {
		t.Errorf("gpu max walltime %v", max)
	}
	if s.DefaultMemPerCPU.MiB() != 4000 {
		t.Errorf("default memory per CPU %v", s.DefaultMemPerCPU)
	}
	if p, ok := s.ProfileForType(""); !ok || p.Name != "full" {
		t.Errorf("untyped --gres=gpu:1 maps to %v", p)
	}
	if p, ok := s.ProfileForType("a100_20g"); !ok || p.Name != "2g.20gb" {
		t.Errorf("a100_20g maps to %v", p)
	}
	if _, ok := s.ProfileForType("v100"); ok {
		t.Error("v100 maps to a profile")
	}
}

func TestExampleSitesLoad(t *testing.T) {
	files, _ := filepath.Glob("../examples/sites/*.toml")
	if len(files) < 2 {
		t.Fatalf("only %d example sites", len(files))
	}
	for _, f := range files {
		s, err := LoadFile(f)
		if err != nil {
			t.Errorf("%s: %v", f, err)
			continue
		}
		for _, p := range s.Profiles {
			if p.SMs == 0 || p.UsableMemory == 0 || p.BilledMemory == 0 || p.BandwidthShare == 0 {
				t.Errorf("%s: profile %s not filled in: %+v", f, p.Name, p)
			}
		}
	}
	a100, err := LoadFile("../examples/sites/a100-40gb.toml")
	if err != nil {
		t.Fatal(err)
	}
	if got := strings.Join(a100.ProfileNames(), " "); got != "1g.5gb 1g.10gb 2g.10gb 3g.20gb 4g.20gb 7g.40gb full" {
		t.Errorf("A100-40GB example profiles: %s", got)
	}
}

// TestSiteFileErrors: every mistake names the file and the line.
func TestSiteFileErrors(t *testing.T) {
	tests := []struct {
		name, edit, want string
	}{
		{"unknown top-level key", "colour = \"red\"\n" + minimalSite, "site.toml:1: unknown key \"colour\" at the top level"},
		{"key after a table belongs to it", minimalSite + "colour = \"red\"\n", "site.toml:16: unknown key \"colour\" in [profiles]"},
		{"unknown profile key", strings.Replace(minimalSite, "partitions = [\"gpu\"]\n", "partitions = [\"gpu\"]\nsmz = 3\n", 1),
			"site.toml:16: unknown key \"smz\" in [profiles]"},
		{"unknown billing key", strings.Replace(minimalSite, "gpu_weight", "gpu_wieght", 1), "site.toml:6: unknown key \"gpu_wieght\" in [billing]"},
		{"future version", strings.Replace(minimalSite, "version = 1", "version = 2", 1), "site.toml:1: site format version 2 is not supported"},
		{"future version with a key of another type", strings.Replace(strings.Replace(minimalSite, "version = 1", "version = 2", 1), "16.0", "\"sixteen\"", 1),
			"site.toml:1: site format version 2 is not supported"},
		{"version of another type, and a key too", strings.Replace(strings.Replace(minimalSite, "version = 1", "version = \"one\"", 1), "16.0", "\"sixteen\"", 1),
			"site.toml:1:"},
		{"no version", strings.Replace(minimalSite, "version = 1\n", "", 1), "site.toml:1: the site file must start with version = 1"},
		{"bad size", strings.Replace(minimalSite, "\"80G\"", "\"80 furlongs\"", 1), "site.toml:7: \"80 furlongs\" is not a memory size"},
		{"wrong type", strings.Replace(minimalSite, "16.0", "\"sixteen\"", 1), "site.toml:6:"},
		{"syntax", minimalSite + "[[profiles]\n", "site.toml:1"},
		{"missing request", strings.Replace(minimalSite, "request = \"--gres=gpu:a100_10g:1\"\n", "", 1), "site.toml:13: profile \"1g.10gb\": needs request"},
		{"unknown partition", strings.Replace(minimalSite, "[\"gpu\"]", "[\"gpux\"]", 1), "site.toml:15: profile \"1g.10gb\" names partition \"gpux\""},
		{"unknown slice", strings.Replace(minimalSite, "name = \"1g.10gb\"", "name = \"1g.11gb\"", 1), "site.toml:13: profile \"1g.11gb\": A100-SXM4-80GB has no MIG profile \"1g.11gb\""},
		{"duplicate type", minimalSite + "\n[[profiles]]\nname = \"2g.20gb\"\nrequest = \"--gres=gpu:a100_10g:1\"\n", "site.toml:19: profiles \"1g.10gb\" and \"2g.20gb\" both use GPU type \"a100_10g\""},
		{"unknown model needs numbers", strings.Replace(minimalSite, "A100-SXM4-80GB", "Z9000", 1), "site.toml:13: profile \"1g.10gb\": needs sms"},
		{"bad work regex", minimalSite + "\n[[work_patterns]]\nname = \"lammps\"\nregex = \"Performance: ([\"\nunit = \"tau/day\"\n",
			"site.toml:19: work pattern \"lammps\": error parsing regexp"},
		{"work regex without a group", minimalSite + "\n[[work_patterns]]\nname = \"lammps\"\nregex = \"tau/day\"\nunit = \"tau/day\"\n",
			"site.toml:19: work pattern \"lammps\": the regex needs a group"},
		{"relative site history", minimalSite + "\n[history]\nsite_db = \"site.db\"\n",
			"site.toml:18: site_db must be an absolute path"},
		{"relative site index", minimalSite + "\n[history]\nsite_index = \"advice.idx\"\n",
			"site.toml:18: site_index must be an absolute path"},
		{"relative site store", minimalSite + "\n[history]\nsite_store = \"store.cnf\"\n",
			"site.toml:18: site_store must be an absolute path"},
		{"relative notify command", minimalSite + "\n[report]\nmin_runs = 3\nnotify_command = [\"mail\", \"{user}\"]\n",
			"site.toml:19: notify_command must start with the command's absolute path (it runs without a shell or PATH), not \"mail\""},
		{"negative saving", minimalSite + "\n[report]\nmin_su_saved = -1\n", "site.toml:18: min_su_saved must be more than 0 SU (leave it out for 10), not -1"},
		{"zero is not the default", minimalSite + "\n[report]\nmin_su_saved = 5\nnotify_every_days = 0\n", "site.toml:19: notify_every_days must be more than 0 days (leave it out for 30), not 0"},
		{"unknown report key", minimalSite + "\n[report]\nnotify_every = 30\n", "site.toml:18: unknown key \"notify_every\" in [report]"},
		{"request not a GPU", strings.Replace(minimalSite, "--gres=gpu:a100_10g:1", "--partition=gpu", 1), "site.toml:14: profile \"1g.10gb\": request"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			_, err := Parse("site.toml", []byte(tc.edit))
			if err == nil || !strings.HasPrefix(err.Error(), tc.want) {
				t.Errorf("error = %v\nwant prefix %q", err, tc.want)
			}
			var fe *FileError
			if err != nil && !errors.As(err, &fe) {
				t.Errorf("error %T is not a *FileError", err)
			}
		})
	}
}

func TestResolveOrder(t *testing.T) {
	dir := t.TempDir()
	t.Setenv("XDG_CONFIG_HOME", filepath.Join(dir, "config"))
	old := SystemSiteFile
	SystemSiteFile = filepath.Join(dir, "etc", "site.toml")
	defer func() { SystemSiteFile = old }()

	write := func(file, name string) {
		os.MkdirAll(filepath.Dir(file), 0o755)
		os.WriteFile(file, []byte(strings.Replace(minimalSite, "\"mini\"", "\""+name+"\"", 1)), 0o644)
	}
	check := func(choice, want string) {
		t.Helper()
		s, err := Resolve(choice)
		if err != nil || s.Name != want {
			t.Fatalf("Resolve(%q) = %v, %v; want site %s", choice, s, err, want)
		}
	}
	check("", "wulver") // nothing configured: the built-in default
	write(SystemSiteFile, "system")
	check("", "system")
	write(filepath.Join(dir, "config", "migadvisor", "site.toml"), "user")
	check("", "user")
	explicit := filepath.Join(dir, "explicit.toml")
	write(explicit, "explicit")
	check(explicit, "explicit")
	check("wulver", "wulver")
	if _, err := Resolve("nosuchsite"); err == nil || !strings.Contains(err.Error(), "built-in: wulver") {
		t.Errorf("unknown built-in: %v", err)
	}
	if _, err := Resolve(filepath.Join(dir, "missing.toml")); err == nil {
		t.Error("a missing file resolved")
	}
}

// Locate says where the site in force came from: the file --site named,
// the user's over the system's (which it names as unread), or the
// built-in default with no file.
func TestLocateSaysWhereTheSiteCameFrom(t *testing.T) {
	dir := t.TempDir()
	t.Setenv("XDG_CONFIG_HOME", filepath.Join(dir, "config"))
	old := SystemSiteFile
	SystemSiteFile = filepath.Join(dir, "etc", "site.toml")
	defer func() { SystemSiteFile = old }()
	user := filepath.Join(dir, "config", "migadvisor", "site.toml")
	locate := func(choice string) string {
		t.Helper()
		s, o, err := Locate(choice)
		if err != nil {
			return "error " + o.File
		}
		return fmt.Sprintf("%s named=%v file=%s default=%v unread=%v", s.Name, o.Named, strings.TrimPrefix(o.File, dir), o.Default,
			strings.ReplaceAll(strings.Join(o.Unread, ","), dir, ""))
	}
	for _, step := range []struct{ file, choice, want string }{
		{"", "", "wulver named=false file= default=true unread="},
		{SystemSiteFile, "", "mini named=false file=/etc/site.toml default=false unread="},
		{user, "", "mini named=false file=/config/migadvisor/site.toml default=false unread=/etc/site.toml"},
		{"", "wulver", "wulver named=true file= default=false unread="},
		{"", user, "mini named=true file=/config/migadvisor/site.toml default=false unread="},
		{"", filepath.Join(dir, "missing.toml"), "error " + filepath.Join(dir, "missing.toml")},
	} {
		if step.file != "" {
			os.MkdirAll(filepath.Dir(step.file), 0o755)
			os.WriteFile(step.file, []byte(minimalSite), 0o644)
		}
		if got := locate(step.choice); got != step.want {
			t.Errorf("Locate(%q) after %s: %s, want %s", step.choice, step.file, got, step.want)
		}
	}
}

func TestModels(t *testing.T) {
	for _, m := range builtinModels() {
		if len(m.Profiles) == 0 || m.SMs == 0 || m.Memory == 0 || m.UsableMemory > m.Memory {
			t.Errorf("%s: incomplete or inconsistent: %+v", m.Name, m)
		}
		for _, p := range m.Profiles {
			if p.MemorySlices < 1 || p.MemorySlices > m.MemorySlices || p.ComputeSlices < 1 || p.ComputeSlices > m.ComputeSlices ||
				p.SMs > m.SMs || p.Memory > m.UsableMemory || p.MaxInstances < 1 {
				t.Errorf("%s %s: inconsistent: %+v", m.Name, p.Name, p)
			}
			if gb, ok := NominalGB(p.Name); !ok || gb <= 0 {
				t.Errorf("%s %s: no nominal memory in the name", m.Name, p.Name)
			}
		}
	}
	for alias, want := range map[string]string{"NVIDIA A100-SXM4-80GB": "A100-SXM4-80GB", "a100-40gb": "A100-SXM4-40GB",
		"NVIDIA H100 80GB HBM3": "H100-80GB", "NVIDIA H200": "H200-141GB", "A30": "A30-24GB"} {
		if m, ok := LookupModel(alias); !ok || m.Name != want {
			t.Errorf("LookupModel(%q) = %v", alias, m)
		}
	}
}

func TestParseSize(t *testing.T) {
	for in, want := range map[string]float64{"9.5GiB": 9728, "4G": 4096, "514000M": 514000, "2T": 2 << 20, "512": 512, "1024K": 1, "80GB": 81920} {
		if got, err := ParseSize(in); err != nil || got.MiB() != want {
			t.Errorf("ParseSize(%q) = %v, %v; want %g MiB", in, got, err, want)
		}
	}
	for _, in := range []string{"", "GiB", "-4G", "4X", "four"} {
		if _, err := ParseSize(in); err == nil {
			t.Errorf("ParseSize(%q) succeeded", in)
		}
	}
}

func TestDiscoveredSiteLoads(t *testing.T) {
	gpus := []DiscoveredGPU{{Index: 0, Name: "NVIDIA H100 80GB HBM3", MemoryMiB: 81559, Model: "H100-80GB", Profiles: []DiscoveredProfile{
		{Name: "1g.10gb", Slices: 1, SMs: 16, MemoryMiB: 9984, MemorySlices: 1, MemorySlicesN: 8},
		{Name: "1g.10gb+me", Slices: 1, SMs: 16, MemoryMiB: 9984, MemorySlices: 1, MemorySlicesN: 8},
		{Name: "3g.40gb", Slices: 3, SMs: 60, MemoryMiB: 40448, MemorySlices: 4, MemorySlicesN: 8},
	}}}
	for _, model := range []string{"H100-80GB", ""} { // a known model, and one the tables lack
		gpus[0].Model = model
		text := SiteTOML(gpus, "gpu01.example.edu")
		s, err := Parse("discovered.toml", []byte(text))
		if err != nil {
			t.Fatalf("model %q: %v\n%s", model, err, text)
		}
		if got := strings.Join(s.ProfileNames(), " "); got != "1g.10gb 3g.40gb full" {
			t.Errorf("model %q: profiles %s", model, got)
		}
		if p, _ := s.Profile("3g.40gb"); p.SMs != 60 || p.UsableMemory.MiB() != 40448 || p.Request != "--gres=gpu:h100_3g.40gb:1" || p.BandwidthShare != 0.5 {
			t.Errorf("model %q: 3g.40gb = %+v", model, p)
		}
	}
}

// TestDiscoveredOnRealH100 uses what `catalog discover --json` read through NVML
// on a real H100 80GB HBM3 (driver 580, MIG disabled).
func TestDiscoveredOnRealH100(t *testing.T) {
	data, err := os.ReadFile("../testdata/nvml/h100-discover.json")
	if err != nil {
		t.Fatal(err)
	}
	var rec struct{ GPUs []DiscoveredGPU }
	if err := json.Unmarshal(data, &rec); err != nil {
		t.Fatal(err)
	}
	s, err := Parse("discovered.toml", []byte(SiteTOML(rec.GPUs, "gpu-node")))
	if err != nil {
		t.Fatal(err)
	}
	want := "1g.10gb:16:9984 1g.20gb:26:20096 2g.20gb:32:20096 3g.40gb:60:40448 4g.40gb:64:40448 7g.80gb:132:81152 full:132:81559"
	var got []string
	for _, p := range s.Profiles {
		got = append(got, fmt.Sprintf("%s:%d:%g", p.Name, p.SMs, p.UsableMemory.MiB()))
	}
	if strings.Join(got, " ") != want {
		t.Errorf("profiles %s\nwant     %s", strings.Join(got, " "), want)
	}
	if s.DefaultMemPerCPU == 0 || s.Billing.GPUMemory.GiB() != 80 {
		t.Errorf("default memory %v, billed GPU memory %v", s.DefaultMemPerCPU, s.Billing.GPUMemory)
	}
}

func TestSizeText(t *testing.T) {
	for mib, want := range map[float64]string{20096: "19.62GiB", 9728: "9.5GiB", 4096: "4GiB", 512: "512MiB", 2 << 20: "2TiB"} {
		if got := Size(mib).String(); got != want {
			t.Errorf("Size(%g).String() = %q, want %q", mib, got, want)
		}
	}
	for _, mib := range []float64{20096, 9728, 4096, 514000, 0.5} {
		text, _ := Size(mib).MarshalText()
		if back, err := ParseSize(string(text)); err != nil || back.MiB() != mib {
			t.Errorf("Size(%g) marshals to %q, which reads back as %v, %v", mib, text, back, err)
		}
	}
}

// The wrapper's site index: site_index, else advice.idx beside site_db
// (where publish writes it), else none.
func TestSiteIndexPath(t *testing.T) {
	for _, tc := range []struct {
		h    History
		want string
	}{
		{History{SiteDB: "/shared/m/history.db"}, "/shared/m/advice.idx"},
		{History{SiteDB: "/shared/m/history.db", SiteIndex: "/elsewhere/a.idx"}, "/elsewhere/a.idx"},
		{History{}, ""},
	} {
		if got := tc.h.SiteIndexPath(); got != tc.want {
			t.Errorf("%+v: %q, want %q", tc.h, got, tc.want)
		}
	}
}

// Export leaves a built-in site's name, title and description out, for the
// new site's: the rest is its file, byte for byte, and loads once named. A
// site file's export is the file.
func TestExportLeavesTheBuiltinSitesNameOut(t *testing.T) {
	site, err := Builtin("wulver")
	if err != nil {
		t.Fatal(err)
	}
	data, err := site.Export()
	if err != nil {
		t.Fatal(err)
	}
	text := string(data)
	if strings.Contains(strings.ToLower(text), "wulver") || strings.Contains(text, "NJIT") || !strings.HasPrefix(text, exportHeader) {
		t.Errorf("the export names the built-in site:\n%s", text)
	}
	if strings.Contains(text, "\n[[gpu_nodes]]\n") || !strings.Contains(text, "# [[gpu_nodes]]\n") {
		t.Errorf("the export keeps the built-in site's nodes, or gives no example of them:\n%s", text)
	}
	if _, err := Parse("site.toml", data); err == nil || err.Error() != "site.toml:6: the site needs a name" {
		t.Errorf("unnamed: %v", err)
	}
	named, err := Parse("site.toml", []byte(strings.Replace(text, `name = ""`, `name = "hpc2"`, 1)))
	if err != nil || named.Name != "hpc2" || named.Title != "" || named.Called() != "hpc2" || len(named.Profiles) != len(site.Profiles) ||
		named.Profiles[0].Name != "1g.10gb" || named.Billing.GPUWeight != site.Billing.GPUWeight {
		t.Fatalf("named: %v %+v", err, named)
	}
	own, _ := BuiltinTOML("wulver")
	file := filepath.Join(t.TempDir(), "site.toml")
	os.WriteFile(file, own, 0o644)
	fromFile, err := LoadFile(file)
	if err != nil {
		t.Fatal(err)
	}
	if data, err := fromFile.Export(); err != nil || string(data) != string(own) {
		t.Errorf("a site file's export is not the file: %v", err)
	}
}
