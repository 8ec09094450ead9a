package bench

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"time"

	"github.com/migadvisor/migadvisor/catalog"
	"github.com/migadvisor/migadvisor/slurm"
)

// Submitter is what SubmitSweep needs of Slurm.
type Submitter interface {
	Submit(ctx context.Context, dir, script string, args ...string) (slurm.JobRef, error)
	ShowJob(ctx context.Context, id string) (map[string]string, error)
	ClusterName(ctx context.Context) (string, error)
}

// SubmitSweep submits the variants of the sweep in dir, in profile order, from
// the current directory (so relative --output paths mean what they mean when
// the user runs sbatch). Each job id is written to sweep.json as soon as sbatch
// gives it, so a failure part-way loses no record of what was submitted.
func SubmitSweep(ctx context.Context, sub Submitter, dir string, sw *Sweep, now func() time.Time) error {
	cluster := ""
	for _, name := range sw.Profiles {
		v := sw.Variants[name]
		if v.JobID != "" {
			continue // submitted by an earlier, interrupted run
		}
		ref, err := sub.Submit(ctx, "", filepath.Join(dir, v.File))
		if err != nil {
			return fmt.Errorf("submit %s: %w", name, err)
		}
		if ref.Cluster == "" {
			if cluster == "" {
				if cluster, err = sub.ClusterName(ctx); err != nil {
					return fmt.Errorf("submitted %s as job %s, but: %w", name, ref.ID, err)
				}
			}
			ref.Cluster = cluster
		}
		v.JobID, v.Cluster, v.Submitted = ref.ID, ref.Cluster, now().UTC().Truncate(time.Second)
		// Where the output goes, while slurmctld still knows the job.
		if kv, err := sub.ShowJob(ctx, ref.ID); err == nil {
			v.Stdout = kv["StdOut"]
		}
		if err := SaveSweep(dir, sw); err != nil {
			return fmt.Errorf("submitted %s as job %s, but: %w", name, ref.ID, err)
		}
	}
	return nil
}

// StartEstimates asks the scheduler when the script would start on each
// profile, by `sbatch --test-only` on a variant written to a temporary
// file (removed after). It stops at the first failure (no sbatch, no
// controller: the others would fail the same way) and returns what it found.
func StartEstimates(ctx context.Context, client *slurm.Client, site *catalog.Site, s *slurm.Script, dir string) (map[string]time.Time, error) {
	tmp, err := os.MkdirTemp("", "migadvisor-test-only-")
	if err != nil {
		return nil, err
	}
	defer os.RemoveAll(tmp)
	starts := map[string]time.Time{}
	for i := range site.Profiles {
		p := &site.Profiles[i]
		data, err := s.Rewrite(PlanVariant(s, site, p))
		file := filepath.Join(tmp, p.Name+".sh")
		if err == nil {
			err = os.WriteFile(file, data, 0o600)
		}
		var at time.Time
		if err == nil {
			at, err = client.StartEstimate(ctx, dir, file)
		}
		if err != nil {
			return starts, fmt.Errorf("start estimate for %s: %w", p.Name, err)
		}
		starts[p.Name] = at
	}
	return starts, nil
}
