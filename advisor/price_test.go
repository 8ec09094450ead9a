package advisor

import (
	"errors"
	"strings"
	"testing"

	"github.com/migadvisor/migadvisor/catalog"
	"github.com/migadvisor/migadvisor/internal/testutil"
	"github.com/migadvisor/migadvisor/slurm"
)

func TestPrice(t *testing.T) {
	site := testutil.Wulver(t)
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
