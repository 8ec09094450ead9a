package bench

import (
	"context"
	"time"

	"github.com/migadvisor/migadvisor/advisor"
	"github.com/migadvisor/migadvisor/catalog"
	"github.com/migadvisor/migadvisor/slurm"
)

// SlurmStarts is advisor.StartEstimator on a Slurm client: StartEstimates,
// `sbatch --test-only` per profile.
type SlurmStarts struct {
	Client *slurm.Client
}

var _ advisor.StartEstimator = SlurmStarts{}

// StartEstimates asks the scheduler when the script would start on each profile.
func (e SlurmStarts) StartEstimates(ctx context.Context, site *catalog.Site, s *slurm.Script, dir string) (map[string]time.Time, error) {
	return StartEstimates(ctx, e.Client, site, s, dir)
}
