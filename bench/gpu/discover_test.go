package gpu

import (
	"errors"
	"strings"
	"testing"

	"github.com/NVIDIA/go-nvml/pkg/nvml"
	"github.com/NVIDIA/go-nvml/pkg/nvml/mock"
	"github.com/NVIDIA/go-nvml/pkg/nvml/mock/dgxa100"

	"github.com/migadvisor/migadvisor/catalog"
)

func names(g catalog.DiscoveredGPU) string {
	var n []string
	for _, p := range g.Profiles {
		n = append(n, p.Name)
	}
	return strings.Join(n, " ")
}

// TestDiscoverUnknownModel: the mock calls itself "Mock NVIDIA A100-SXM4-40GB",
// which is no built-in model, so profile names are derived from slices and
// memory shares; they must still come out as NVIDIA names them.
func TestDiscoverUnknownModel(t *testing.T) {
	gpus, err := (&Discoverer{Lib: dgxa100.New()}).Discover()
	if err != nil {
		t.Fatal(err)
	}
	if len(gpus) != 8 {
		t.Fatalf("%d GPUs, want 8", len(gpus))
	}
	g := gpus[3]
	if g.Index != 3 || g.Model != "" || g.MemoryMiB != 40960 || g.MIGEnabled {
		t.Errorf("GPU 3 = %+v", g)
	}
	if got := names(g); got != "1g.5gb 2g.10gb 3g.20gb 4g.20gb 7g.40gb 1g.5gb 1g.10gb" {
		t.Errorf("profiles %s", got)
	}
	for _, p := range g.Profiles {
		if p.Name == "3g.20gb" && (p.SMs != 42 || p.MemoryMiB != 19968 || p.MemorySlices != 4 || p.MaxInstances != 2) {
			t.Errorf("3g.20gb = %+v", p)
		}
	}
}

// TestDiscoverKnownModel names profiles from the built-in A100-40GB table.
func TestDiscoverKnownModel(t *testing.T) {
	server := dgxa100.New()
	server.Devices[0].(*dgxa100.Device).Name = "NVIDIA A100-SXM4-40GB"
	gpus, err := (&Discoverer{Lib: server}).Discover()
	if err != nil {
		t.Fatal(err)
	}
	if gpus[0].Model != "A100-SXM4-40GB" {
		t.Errorf("model %q", gpus[0].Model)
	}
	if got := names(gpus[0]); got != "1g.5gb 2g.10gb 3g.20gb 4g.20gb 7g.40gb 1g.5gb 1g.10gb" {
		t.Errorf("profiles %s", got)
	}
	site, err := catalog.Parse("discovered.toml", []byte(catalog.SiteTOML(gpus[:1], "node1")))
	if err != nil {
		t.Fatalf("the discovered site does not load: %v", err)
	}
	if got := strings.Join(site.ProfileNames(), " "); got != "1g.5gb 1g.10gb 2g.10gb 3g.20gb 4g.20gb 7g.40gb full" {
		t.Errorf("site profiles %s", got)
	}
}

func TestDiscoverWithoutNVML(t *testing.T) {
	lib := &mock.Interface{InitFunc: func() nvml.Return { return nvml.ERROR_LIBRARY_NOT_FOUND }}
	_, err := (&Discoverer{Lib: lib}).Discover()
	if !errors.Is(err, ErrNoNVML) {
		t.Fatalf("err = %v, want ErrNoNVML", err)
	}
}

func TestDiscoverNoGPU(t *testing.T) {
	lib := &mock.Interface{
		InitFunc:           func() nvml.Return { return nvml.SUCCESS },
		ShutdownFunc:       func() nvml.Return { return nvml.SUCCESS },
		DeviceGetCountFunc: func() (int, nvml.Return) { return 0, nvml.SUCCESS },
	}
	if _, err := (&Discoverer{Lib: lib}).Discover(); !errors.Is(err, ErrNoNVML) {
		t.Fatalf("err = %v, want ErrNoNVML", err)
	}
}
