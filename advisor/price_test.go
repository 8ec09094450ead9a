package advisor

import (
	"errors"
	"strings"
	"testing"

	"github.com/migadvisor/migadvisor/catalog"
	"github.com/migadvisor/migadvisor/catalog/catalogtest"
	"github.com/migadvisor/migadvisor/slurm"
)

func TestPrice(t *testing.T) {
	site := catalogtest.Wulver(t)
	// 2 hours on 1g.10gb with 4 CPUs and 8G: (max(4, 2) + 2) × 2 = 12 SU.
	script := slurm.Parse("job.sh", []byte("#!/bin/bash\n#SBATCH -p gpu --gres=gpu:a100_10g:1\n#SBATCH -c 4 --mem=8G -t 2:00:00\nrun\n"))
	q, err := Price(site, script, catalog.Overrides{})
	if err != nil || q.Job.Profile == nil || q.Job.Profile.Name != "1g.10gb" || q.Charge.SU != 12 || q.Charge.SUPerHour != 6 {
		t.Fatalf("quote %+v %v", q, err)
	}
	one := 1
	if q, err := Price(site, script, catalog.Overrides{CPUs: &one}); err != nil || q.Charge.SUPerHour != 4 {
		t.Errorf("--cpus 1 over the script's 4 (8G keeps 2 units of memory): %+v %v", q, err)
	}
	zero := 0
	if _, err := Price(site, script, catalog.Overrides{CPUs: &zero}); !errors.Is(err, ErrNoUnits) {
		t.Errorf("0 CPUs: %v", err)
	}
	bad := slurm.Parse("bad.sh", []byte("#!/bin/bash\n#SBATCH --gres=gpu:a100_10g:1\n#SBATCH --time=soon\nrun\n"))
	if _, err := Price(site, bad, catalog.Overrides{}); err == nil || !strings.HasPrefix(err.Error(), "bad.sh:3: ") {
		t.Errorf("a value sbatch rejects: %v", err)
	}
}

// The script's --time is a limit: its charge is the most the job can be
// charged; an hours figure given over it is a run time.
func TestPriceAtMostForAScriptsTime(t *testing.T) {
	site, err := catalog.Builtin("wulver")
	if err != nil {
		t.Fatal(err)
	}
	s := slurm.Parse("job.sh", []byte("#!/bin/bash\n#SBATCH -t 2:00:00\n#SBATCH --gres=gpu:a100:1\nrun\n"))
	if q, err := Price(site, s, catalog.Overrides{}); err != nil || !q.AtMost {
		t.Errorf("--time 2h: %v %+v", err, q)
	}
	h := 0.5
	if q, err := Price(site, s, catalog.Overrides{Hours: &h}); err != nil || q.AtMost {
		t.Errorf("--hours over --time: %v %+v", err, q)
	}
	if q, err := Price(site, slurm.Parse("job.sh", []byte("#!/bin/bash\n#SBATCH --gres=gpu:a100:1\nrun\n")), catalog.Overrides{}); err != nil || q.AtMost {
		t.Errorf("no --time (an hour's price): %v %+v", err, q)
	}
}
