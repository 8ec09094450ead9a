package catalog

import (
	"fmt"
	"math"
	"strings"
	"testing"
)

// slurmMIGType is the type Slurm's AutoDetect=nvml gives a MIG device
// (src/plugins/gpu/nvml/gpu_nvml.c): NVML's product name lower-cased with
// spaces as underscores, cut at its first dash, then _<slices>g.<GiB>gb,
// NVML's memory in MiB divided by 1024 and rounded.
func slurmMIGType(product string, slices int, memMiB float64) string {
	name := strings.ReplaceAll(strings.ToLower(product), " ", "_")
	name, _, _ = strings.Cut(name, "-")
	return fmt.Sprintf("%s_%dg.%dgb", name, slices, int(math.Round(memMiB/1024)))
}

// slurmGPUType is the type AutoDetect=nvml gives a whole GPU.
func slurmGPUType(product string) string {
	return strings.ReplaceAll(strings.ToLower(product), " ", "_")
}

// migDevice is a MIG slice as NVML shows it on a product: its slice count
// and the memory sizes drivers have given it (MiB).
type migDevice struct {
	slice  string
	slices int
	memMiB []float64
}

// Every way Slurm and sites write a slice or a whole GPU in accounting
// places the job on the site's profile of that slice: AutoDetect=nvml's
// names for each memory size drivers report (3g.39gb on 535/545, 3g.40gb
// before), with and without NVIDIA's prefix, in any case, and the
// hand-written forms (a100_1g.10gb, 1g.10gb); a whole GPU by its product
// name or family. The names are made here by Slurm's rule, not listed.
func TestAccountingSpellingsPlaceJobs(t *testing.T) {
	for _, c := range []struct {
		site     string
		products []string
		devices  []migDevice
	}{
		{"wulver", []string{"NVIDIA A100-SXM4-80GB", "NVIDIA A100 80GB PCIe"}, []migDevice{
			// go-nvml's A100-80GB sizes, and the nominal ones.
			{"1g.10gb", 1, []float64{9856, 10240}}, {"2g.20gb", 2, []float64{19968, 20480}}, {"3g.40gb", 3, []float64{40192, 40960}},
		}},
		{"../examples/sites/h100.toml", []string{"NVIDIA H100 80GB HBM3", "NVIDIA H100 PCIe"}, []migDevice{
			{"1g.10gb", 1, []float64{9984}}, {"3g.40gb", 3, []float64{40448}},
		}},
		{"../examples/sites/a100-40gb.toml", []string{"NVIDIA A100-SXM4-40GB", "NVIDIA A100-PCIE-40GB"}, []migDevice{
			{"1g.5gb", 1, []float64{4864}}, {"2g.10gb", 2, []float64{9856}}, {"3g.20gb", 3, []float64{20096, 20224}},
		}},
		{"../examples/sites/h200.toml", []string{"NVIDIA H200", "NVIDIA H200 NVL"}, []migDevice{
			{"1g.18gb", 1, []float64{16384}}, {"2g.35gb", 2, []float64{33280}},
		}},
	} {
		site, err := Resolve(c.site)
		if err != nil {
			t.Fatal(err)
		}
		placed := func(gpuType, want string) {
			t.Helper()
			if got := site.ProfileNameOf(gpuType, 1); got != want {
				t.Errorf("%s: %q is placed on %q, want %q", site.Name, gpuType, got, want)
			}
		}
		family := strings.ToLower(strings.Fields(strings.TrimPrefix(c.products[0], "NVIDIA "))[0])
		family, _, _ = strings.Cut(family, "-")
		for _, d := range c.devices {
			p := profileOfSlice(t, site, d.slice)
			placed(family+"_"+d.slice, p) // a hand-written gres.conf
			placed(d.slice, p)
			for _, product := range c.products {
				for _, mem := range d.memMiB {
					auto := slurmMIGType(product, d.slices, mem)
					placed(auto, p)
					placed(strings.TrimPrefix(auto, "nvidia_"), p)
					placed(strings.ToUpper(auto), p)
				}
				// The product name whole, as a hand-written gres.conf may keep it.
				placed(slurmGPUType(product)+"_"+d.slice, p)
			}
		}
		full := profileOfSlice(t, site, FullGPU)
		for _, product := range c.products {
			placed(slurmGPUType(product), full)
			placed(strings.TrimPrefix(slurmGPUType(product), "nvidia_"), full)
			placed(product, full)
		}
		placed(family, full)
		// Another GPU's slices, and slices the site has no profile of, are not placed.
		placed(slurmMIGType("NVIDIA B200", 1, 23040), "")
		placed(slurmMIGType(c.products[0], 4, 1e6), "")
	}
}

func profileOfSlice(t *testing.T, s *Site, slice string) string {
	t.Helper()
	for _, p := range s.Profiles {
		if p.Slice == slice {
			return p.Name
		}
	}
	t.Fatalf("site %s has no profile of slice %s", s.Name, slice)
	return ""
}

// A slice one driver calls by a memory size of another slice of the same
// compute is not confused with it: on Wulver, 1g.20gb and 4g.39gb are no
// profile's, and 7g.79gb, the whole GPU's compute in MIG mode, is the
// whole GPU (Wulver names no 7g profile).
func TestAccountingSpellingsDoNotCrossSlices(t *testing.T) {
	s := wulver(t)
	for typ, want := range map[string]string{
		"nvidia_a100_1g.20gb": "", "nvidia_a100_4g.39gb": "", "nvidia_a100_2g.10gb": "",
		"nvidia_a100_7g.79gb": "full", "nvidia_a100_7g.80gb": "full",
		"nvidia_h100_80gb_hbm3_1g.10gb": "", "v100": "", "nvidia_v100-sxm2-32gb": "",
	} {
		if got := s.ProfileNameOf(typ, 1); got != want {
			t.Errorf("%s placed on %q, want %q", typ, got, want)
		}
	}
}

const twoSlicesSite = `version = 1
name = "two"
gpu_model = "A100-SXM4-80GB"

[billing]
gpu_weight = 16.0
gpu_memory = "80G"

[[profiles]]
name = "%s"
slice = "%s"
request = "--gres=gpu:%s:1"
%s
[[profiles]]
name = "%s"
slice = "%s"
request = "--gres=gpu:%s:1"
%s`

func twoSlices(t *testing.T, name1, slice1, type1, extra1, name2, slice2, type2, extra2 string) (*Site, error) {
	t.Helper()
	return Parse("site.toml", []byte(fmt.Sprintf(twoSlicesSite, name1, slice1, type1, extra1, name2, slice2, type2, extra2)))
}

// Two profiles may not claim one accounting name: the site file's own
// names (request, gres_types), compared as accounting compares them, are
// an error naming the line; a derived name two profiles of one slice
// share goes to the first in the file, one that profiles of different
// slices share to neither (reported, not guessed), and one the site names
// itself to that profile before any derived claim.
func TestAccountingNameClaims(t *testing.T) {
	text := fmt.Sprintf(twoSlicesSite, "small", "1g.10gb", "mig_small", "", "big", "3g.40gb", "mig_big", `gres_types = ["MIG-Small"]`)
	_, err := Parse("site.toml", []byte(text))
	line := strings.Count(text[:strings.Index(text, "gres_types")], "\n") + 1
	var fe *FileError
	if !asFileError(err, &fe) || fe.Line != line || !strings.Contains(err.Error(), `profiles "small" and "big" both use GPU type "MIG-Small"`) {
		t.Errorf("a gres_types name another profile has: %v", err)
	}

	// One slice twice (a course partition's, say): the first profile in the file.
	for _, order := range [][2]string{{"gpu10", "course10"}, {"course10", "gpu10"}} {
		s, err := twoSlices(t, order[0], "1g.10gb", order[0]+"_t", "", order[1], "1g.10gb", order[1]+"_t", "")
		if err != nil {
			t.Fatal(err)
		}
		if got := s.ProfileNameOf("nvidia_a100_1g.10gb", 1); got != order[0] {
			t.Errorf("order %v: nvidia_a100_1g.10gb placed on %q", order, got)
		}
		if got := s.ProfileNameOf(order[1]+"_t", 1); got != order[1] {
			t.Errorf("order %v: its own type placed on %q", order, got)
		}
	}

	// 1g.20gb and 2g.20gb have the same memory: a100_20g is neither's,
	// until the site names it; their NVIDIA names stay each its own.
	s, err := twoSlices(t, "one", "1g.20gb", "x1", "", "two", "2g.20gb", "x2", "")
	if err != nil {
		t.Fatal(err)
	}
	for typ, want := range map[string]string{"a100_20g": "", "nvidia_a100_1g.20gb": "one", "nvidia_a100_2g.20gb": "two", "a100_2g.20gb": "two"} {
		if got := s.ProfileNameOf(typ, 1); got != want {
			t.Errorf("%s placed on %q, want %q", typ, got, want)
		}
	}
	s, err = twoSlices(t, "one", "1g.20gb", "x1", "", "two", "2g.20gb", "x2", `gres_types = ["A100_20G", "nvidia_a100_1g.20gb"]`)
	if err != nil {
		t.Fatal(err)
	}
	for typ, want := range map[string]string{"a100_20g": "two", "nvidia_a100_1g.20gb": "two", "NVIDIA_A100_1G.20GB": "two", "a100-1g.20gb": "two", "1g.20gb": "one"} {
		if got := s.ProfileNameOf(typ, 1); got != want {
			t.Errorf("with gres_types: %s placed on %q, want %q", typ, got, want)
		}
	}

	// A +me slice listed first does not take the plain slice's name (NVML
	// sizes them alike, and Slurm's type has no +me).
	s, err = twoSlices(t, "media", "1g.10gb+me", "m", "", "plain", "1g.10gb", "p", "")
	if err != nil {
		t.Fatal(err)
	}
	for typ, want := range map[string]string{"nvidia_a100_1g.10gb": "plain", "a100_1g.10gb+me": "media", "1g.10gb+me": "media"} {
		if got := s.ProfileNameOf(typ, 1); got != want {
			t.Errorf("+me: %s placed on %q, want %q", typ, got, want)
		}
	}
}

func asFileError(err error, fe **FileError) bool {
	e, ok := err.(*FileError)
	*fe = e
	return ok
}

// Names are looked up the same on a site made without Parse (no index kept).
func TestAccountingWithoutIndex(t *testing.T) {
	s := wulver(t)
	bare := *s
	bare.acct = nil
	if got := bare.ProfileNameOf("nvidia_a100_3g.39gb", 1); got != "3g.40gb" {
		t.Errorf("placed on %q", got)
	}
}

// Any type accounting may hold is looked up without a panic, and its case
// never changes where it is placed.
func FuzzProfileForAccounting(f *testing.F) {
	s, err := Builtin("wulver")
	if err != nil {
		f.Fatal(err)
	}
	for _, seed := range []string{"nvidia_a100_3g.39gb", "a100_10g", "NVIDIA A100-SXM4-80GB", "1g.10gb+me", "", "nvidia_", "+", "7g.", "a100_.gb"} {
		f.Add(seed)
	}
	f.Fuzz(func(t *testing.T, typ string) {
		p, ok := s.ProfileForAccounting(typ)
		if ok != (p != nil) {
			t.Fatalf("%q: %v, %v", typ, p, ok)
		}
		if q, _ := s.ProfileForAccounting(strings.ToUpper(typ)); strings.ToLower(strings.ToUpper(typ)) == strings.ToLower(typ) && q != p {
			t.Errorf("%q is placed on %v, in upper case on %v", typ, p, q)
		}
	})
}
