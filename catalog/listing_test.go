package catalog

import (
	"strings"
	"testing"
)

func TestListing(t *testing.T) {
	l, err := wulver(t).Listing()
	if err != nil {
		t.Fatal(err)
	}
	if l.Site != "wulver" || l.MaxWalltime != "3-00:00:00" || len(l.Profiles) != 4 {
		t.Fatalf("listing = %+v", l)
	}
	for i, tc := range []struct {
		name      string
		sms       int
		mig       bool
		suPerHour float64
		bandwidth float64
	}{
		{"1g.10gb", 14, true, 3, 0.125},
		{"2g.20gb", 28, true, 5, 0.25},
		{"3g.40gb", 42, true, 9, 0.5},
		{"full", 108, false, 17, 1},
	} {
		p := l.Profiles[i]
		if p.Name != tc.name || p.SMs != tc.sms || p.MIG != tc.mig || p.SUPerHour != tc.suPerHour || p.BandwidthShare != tc.bandwidth {
			t.Errorf("%s: %+v", tc.name, p)
		}
	}
}

func TestListingText(t *testing.T) {
	l := Listing{Site: "s", Source: "builtin:s", Profiles: []ListedProfile{
		{Name: "1g.10gb", Request: "--gres=gpu:a:1", SMs: 14, UsableMemoryMiB: 9728, BandwidthShare: 0.125, Partitions: []string{"gpu", "debug"}, SUPerHour: 2.5},
		{Name: "full", Request: "--gres=gpu:b:1", SMs: 108, UsableMemoryMiB: 81920, BandwidthShare: 1, Partitions: []string{}, SUPerHour: 1.0 / 3},
	}}
	var out strings.Builder
	if err := l.WriteText(&out); err != nil {
		t.Fatal(err)
	}
	want := "s: -, max walltime - [builtin:s]\n\n" +
		"PROFILE  REQUEST         SMS  USABLE MEMORY  BANDWIDTH  PARTITIONS  SU/H (1 CPU, 4G)\n" +
		"1g.10gb  --gres=gpu:a:1  14   9.5GiB         12.5%      gpu,debug   2.5\n" +
		"full     --gres=gpu:b:1  108  80GiB          100.0%     -           0.333\n"
	if out.String() != want {
		t.Errorf("text:\n%s\nwant:\n%s", out.String(), want)
	}
	l.Title, l.GPUModel, l.MaxWalltime = "Site S", "A100", "2-00:00:00"
	out.Reset()
	_ = l.WriteText(&out)
	if first, _, _ := strings.Cut(out.String(), "\n"); first != "s (Site S): A100, max walltime 2-00:00:00 [builtin:s]" {
		t.Errorf("title line %q", first)
	}
}
