package catalog

import (
	"bytes"
	"errors"
	"math"
	"testing"

	"github.com/migadvisor/migadvisor/slurm"
)

// A profile is named by its name or by the Slurm GPU type that asks for it;
// an unknown one is an error that lists the site's profiles.
func TestLookupProfileTakesNamesAndGRESTypes(t *testing.T) {
	s := wulver(t)
	for _, name := range []string{"1g.10gb", "a100_10g"} {
		if p, err := s.LookupProfile(name); err != nil || p.Name != "1g.10gb" {
			t.Errorf("%s: %v %v", name, p, err)
		}
	}
	_, err := s.LookupProfile("h100")
	var unknown *UnknownProfileError
	if !errors.As(err, &unknown) || err.Error() != `site wulver has no profile "h100" (profiles: 1g.10gb, 2g.20gb, 3g.40gb, full)` {
		t.Errorf("h100: %v", err)
	}
}

// Usage prices a job named outside a script (accounting, the catalog's
// table): by GRES type too, CPU only without a profile.
func TestJobOf(t *testing.T) {
	s := wulver(t)
	job, err := s.JobOf(Usage{Profile: "a100_10g", CPUs: 1, MemMiB: 4096, Hours: 1})
	if err != nil || job.Profile.Name != "1g.10gb" || job.GPUs != 1 {
		t.Fatalf("%+v %v", job, err)
	}
	if ch, _ := s.Charge(job); ch.SUPerHour != 3 {
		t.Errorf("1g.10gb, 1 CPU, 4G: %g SU/h, want 3", ch.SUPerHour)
	}
	if job, err := s.JobOf(Usage{CPUs: 8, Hours: 2}); err != nil || job.Profile != nil {
		t.Errorf("CPU only: %+v %v", job, err)
	}
	if _, err := s.JobOf(Usage{Profile: "v100", GPUs: 1}); err == nil {
		t.Error("an unknown GPU was priced")
	}
}

// Flags replace what the script asks for; memory per CPU follows --cpus,
// a --mem of the script's own does not.
func TestJobWithOverrides(t *testing.T) {
	s := wulver(t)
	script := func(body string) *slurm.Resources {
		r := slurm.Parse("job.sh", []byte("#!/bin/bash\n"+body+"run\n")).Resources
		return &r
	}
	p := func(v string) *string { return &v }
	n := func(v int) *int { return &v }
	for _, tc := range []struct {
		name    string
		script  *slurm.Resources
		o       Overrides
		profile string
		gpus    int
		cpus    int
		memMiB  float64
		hours   float64
	}{
		{"no script", nil, Overrides{Profile: p("2g.20gb")}, "2g.20gb", 1, 1, 0, 1},
		{"by GRES type", nil, Overrides{Profile: p("a100_20g"), GPUs: n(2)}, "2g.20gb", 2, 1, 0, 1},
		{"the script's", script("#SBATCH --gres=gpu:a100_10g:1 -c 4 --mem=32G -t 2:00:00\n"), Overrides{}, "1g.10gb", 1, 4, 32768, 2},
		{"--cpus keeps --mem", script("#SBATCH --gres=gpu:a100_10g:1 -c 4 --mem=32G\n"), Overrides{CPUs: n(8)}, "1g.10gb", 1, 8, 32768, 1},
		{"--cpus scales --mem-per-cpu", script("#SBATCH --gres=gpu:a100_10g:1 -c 4 --mem-per-cpu=2G\n"), Overrides{CPUs: n(8)}, "1g.10gb", 1, 8, 16384, 1},
		{"--cpus and the default", script("#SBATCH --gres=gpu:a100_10g:1 -c 4\n"), Overrides{CPUs: n(8)}, "1g.10gb", 1, 8, 0, 1},
		{"a profile for a CPU job", script("#SBATCH -c 2\n"), Overrides{Profile: p("full")}, "full", 1, 2, 8000, 1},
		{"none", script("#SBATCH --gres=gpu:a100:1\n"), Overrides{Profile: p("none")}, "", 1, 1, 4000, 1},
	} {
		job, err := s.JobWith(tc.script, tc.o)
		if err != nil {
			t.Errorf("%s: %v", tc.name, err)
			continue
		}
		name := ""
		if job.Profile != nil {
			name = job.Profile.Name
		}
		if name != tc.profile || job.GPUs != tc.gpus || job.CPUs != tc.cpus || job.Hours != tc.hours ||
			job.MemMiB != tc.memMiB {
			t.Errorf("%s: %s × %d, %d CPUs, %g MiB, %g h; want %s × %d, %d, %g, %g", tc.name, name, job.GPUs, job.CPUs, job.MemMiB, job.Hours,
				tc.profile, tc.gpus, tc.cpus, tc.memMiB, tc.hours)
		}
	}
	if _, err := s.JobWith(nil, Overrides{Profile: p("v100")}); err == nil {
		t.Error("an unknown profile was priced")
	}
	// Seen: su --mem 0 priced the default 3.91 GiB, where a script's
	// --mem=0 is all of the node, as Slurm reads it.
	zero, four := 0.0, 4096.0
	for mem, whole := range map[*float64]bool{&zero: true, &four: false} {
		job, err := s.JobWith(script("#SBATCH -p gpu --gres=gpu:a100:1 --mem=0\n"), Overrides{MemMiB: mem})
		if err != nil || job.MemWholeNode != whole {
			t.Errorf("--mem %g: all of the node %v, want %v (%v)", *mem, job.MemWholeNode, whole, err)
		}
	}
}

// The listed rate is Wulver's published one: max(1 CPU, 4 GB / 4) + 16 ×
// the profile's billed GPU memory / 80 GB.
func TestListedRateIsTheSmallestSensibleJob(t *testing.T) {
	site, err := Builtin("wulver")
	if err != nil {
		t.Fatal(err)
	}
	want := map[string]float64{"1g.10gb": 3, "2g.20gb": 5, "3g.40gb": 9, "full": 17}
	for name, rate := range want {
		p, _ := site.Profile(name)
		if got, err := site.ListedRate(p); err != nil || math.Abs(got-rate) > 1e-9 {
			t.Errorf("%s: %v SU/h (%v), want %v", name, got, err, rate)
		}
	}
	data, err := site.TOML()
	if err != nil || !bytes.Contains(data, []byte(`name = "wulver"`)) {
		t.Errorf("the built-in site's TOML: %v\n%s", err, data)
	}
}
