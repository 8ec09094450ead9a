package catalog

import "testing"

func TestChargeDescribe(t *testing.T) {
	for _, c := range []struct {
		charge  Charge
		profile string
		gpus    int
		atMost  bool
		want    string
	}{
		{Charge{CPUs: 8, MemGiB: 64, Hours: 2, Partition: "general", SU: 32, SUPerHour: 16}, "", 0, false,
			"CPU only, 8 CPUs, 64 GiB RAM, 2 h in general on wulver: 32 SU (16 SU/h)"},
		{Charge{CPUs: 1, MemGiB: 4, Hours: 0.5, Partition: "gpu", SU: 1.5, SUPerHour: 3}, "1g.10gb", 1, true,
			"1g.10gb, 1 CPU, 4 GiB RAM, 0.5 h in gpu on wulver: at most 1.5 SU (3 SU/h), if it runs all of its --time"},
		{Charge{CPUs: 2, MemGiB: 500, MemWholeNode: true, Nodes: 2, Hours: 1, Partition: "gpu", SU: 250, SUPerHour: 250}, "full", 2, false,
			"2 × full, 2 CPUs, 500 GiB RAM (--mem=0: all of 2 gpu nodes), 1 h in gpu on wulver: 250 SU (250 SU/h)"},
		{Charge{CPUs: 1, MemGiB: 1, Hours: 1, Free: true, Reason: "the debug QoS is free"}, "", 0, false,
			"CPU only, 1 CPU, 1 GiB RAM, 1 h on wulver: 0 SU (the debug QoS is free)"},
	} {
		if got := c.charge.Describe("wulver", c.profile, c.gpus, c.atMost); got != c.want {
			t.Errorf("Describe =\n  %q\nwant\n  %q", got, c.want)
		}
	}
}
