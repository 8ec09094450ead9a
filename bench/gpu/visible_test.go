package gpu

import (
	"strings"
	"testing"

	"github.com/migadvisor/migadvisor/internal/fakenvml"
)

// node is two GPUs: GPU 0 with MIG (a 3g.40gb and two 1g.10gb), GPU 1 whole.
func node() *fakenvml.Server {
	return &fakenvml.Server{GPUs: []*fakenvml.Device{
		{Name: "NVIDIA A100-SXM4-80GB", UUID: "GPU-aaaa1111-0000-0000-0000-000000000000", TotalMiB: 81920, MIG: []*fakenvml.Device{
			{Name: "NVIDIA A100-SXM4-80GB MIG 3g.40gb", UUID: "MIG-3333cccc-0000-0000-0000-000000000000", TotalMiB: 40192, GI: 2},
			{Name: "NVIDIA A100-SXM4-80GB MIG 1g.10gb", UUID: "MIG-1111aaaa-0000-0000-0000-000000000000", TotalMiB: 9728, GI: 9},
			{Name: "NVIDIA A100-SXM4-80GB MIG 1g.10gb", UUID: "MIG-1111bbbb-0000-0000-0000-000000000000", TotalMiB: 9728, GI: 10},
		}},
		{Name: "NVIDIA A100-SXM4-80GB", UUID: "GPU-bbbb2222-0000-0000-0000-000000000000", TotalMiB: 81920},
	}}
}

func uuids(devs []Device) string {
	var out []string
	for _, d := range devs {
		out = append(out, d.Visible+"="+d.UUID[:12])
	}
	return strings.Join(out, " ")
}

func TestEnumerateInCUDAOrder(t *testing.T) {
	all, err := Enumerate(node().Lib())
	if err != nil {
		t.Fatal(err)
	}
	if len(all) != 4 {
		t.Fatalf("%d devices, want 3 MIG devices and 1 GPU", len(all))
	}
	m := all[1]
	if !m.MIG || m.Profile != "1g.10gb" || m.TotalMiB != 9728 || m.ParentUUID != "GPU-aaaa1111-0000-0000-0000-000000000000" || m.GPUInst != 9 || m.Index != 0 {
		t.Errorf("MIG device = %+v", m)
	}
	if all[3].MIG || all[3].Index != 1 || all[3].TotalMiB != 81920 {
		t.Errorf("whole GPU = %+v", all[3])
	}
}

func TestResolveVisibleDevices(t *testing.T) {
	all, err := Enumerate(node().Lib())
	if err != nil {
		t.Fatal(err)
	}
	cases := []struct {
		visible string
		set     bool
		want    string
		note    string
	}{
		{"", false, "0=MIG-3333cccc 1=MIG-1111aaaa 2=MIG-1111bbbb 3=GPU-bbbb2222", ""},
		{"", true, "", ""},
		{"1", true, "1=MIG-1111aaaa", ""},
		{"3,0", true, "3=GPU-bbbb2222 0=MIG-3333cccc", ""},
		{"MIG-1111bbbb-0000-0000-0000-000000000000", true, "MIG-1111bbbb-0000-0000-0000-000000000000=MIG-1111bbbb", ""},
		{"mig-3333", true, "mig-3333=MIG-3333cccc", ""},         // a unique prefix, any case
		{"GPU-bbbb2222", true, "GPU-bbbb2222=GPU-bbbb2222", ""}, // a whole GPU
		{"GPU-aaaa1111-0000-0000-0000-000000000000", true, "GPU-aaaa1111-0000-0000-0000-000000000000=MIG-3333cccc GPU-aaaa1111-0000-0000-0000-000000000000=MIG-1111aaaa GPU-aaaa1111-0000-0000-0000-000000000000=MIG-1111bbbb", ""},
		{"MIG-GPU-aaaa1111-0000-0000-0000-000000000000/10/0", true, "MIG-GPU-aaaa1111-0000-0000-0000-000000000000/10/0=MIG-1111bbbb", ""},
		{"MIG-1111", true, "", "prefix of several"},
		{"0,7,3", true, "0=MIG-3333cccc", "out of range"}, // CUDA stops at the bad entry
		{"2, 2", true, "2=MIG-1111bbbb", ""},              // a repeat counts once
		{"MIG-ffff", true, "", "names no device"},
		{"nvidia0", true, "", "neither an index"},
	}
	for _, c := range cases {
		got, notes := Resolve(all, c.visible, c.set)
		if uuids(got) != c.want {
			t.Errorf("Resolve(%q) = %s, want %s", c.visible, uuids(got), c.want)
		}
		if joined := strings.Join(notes, "; "); (c.note == "") != (joined == "") || !strings.Contains(joined, c.note) {
			t.Errorf("Resolve(%q) notes %q, want one with %q", c.visible, joined, c.note)
		}
	}
}
