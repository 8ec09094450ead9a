package catalog

import (
	"strings"
	"testing"
)

// A model's site has its MIG profiles but the +me ones, and the whole GPU,
// each with a GRES type Slurm reads, filled in from the model.
func TestModelSite(t *testing.T) {
	s, err := ModelSite("A100-40GB") // an alias
	if err != nil {
		t.Fatal(err)
	}
	if s.Name != "a100-sxm4-40gb" {
		t.Errorf("name %q", s.Name)
	}
	if got := strings.Join(s.ProfileNames(), " "); got != "1g.5gb 1g.10gb 2g.10gb 3g.20gb 4g.20gb 7g.40gb full" {
		t.Errorf("profiles %s", got)
	}
	for _, p := range s.Profiles {
		want := strings.ReplaceAll(p.Name, ".", "_")
		if p.GRESType != want || p.GPUCount != 1 || p.Request != "--gres=gpu:"+want+":1" {
			t.Errorf("%s: request %q, type %q × %d", p.Name, p.Request, p.GRESType, p.GPUCount)
		}
		if len(p.Partitions) != 1 || p.Partitions[0] != "gpu" {
			t.Errorf("%s: partitions %v", p.Name, p.Partitions)
		}
		if q, ok := s.ProfileForType(want); !ok || q.Name != p.Name {
			t.Errorf("GPU type %s is not %s", want, p.Name)
		}
	}
	for name, sms := range map[string]int{"full": 108, "7g.40gb": 98, "1g.5gb": 14} {
		if p, ok := s.Profile(name); !ok || p.SMs != sms {
			t.Errorf("%s: %v, want %d SMs", name, p, sms)
		}
	}
	if full, _ := s.Profile("full"); full.IsMIG() || full.BilledMemory.GiB() != 40 {
		t.Errorf("full: %+v", full)
	}
	if s.Billing.GPUWeight != 16 || s.Billing.GPUMemory.GiB() != 40 {
		t.Errorf("billing %+v", s.Billing)
	}
	if _, ok := s.Partition("gpu"); !ok || len(s.Partitions) != 1 {
		t.Errorf("partitions %+v", s.Partitions)
	}
	if m, ok := s.Model(); !ok || m.Name != "A100-SXM4-40GB" {
		t.Errorf("model %v", m)
	}
}

// Every built-in model makes a valid site.
func TestModelSiteOfEveryModel(t *testing.T) {
	for _, name := range BuiltinModelNames() {
		s, err := ModelSite(name)
		if err != nil {
			t.Errorf("%s: %v", name, err)
			continue
		}
		for _, p := range s.Profiles {
			if strings.Contains(p.Name, "+me") {
				t.Errorf("%s: has %s", name, p.Name)
			}
		}
		if _, ok := s.Profile(FullGPU); !ok {
			t.Errorf("%s: no full profile", name)
		}
	}
}

func TestModelSiteUnknownModel(t *testing.T) {
	_, err := ModelSite("Z9000")
	if err == nil || !strings.Contains(err.Error(), `"Z9000"`) || !strings.Contains(err.Error(), "A100-SXM4-80GB") {
		t.Errorf("error %v; want the model named and the built-in ones listed", err)
	}
}
