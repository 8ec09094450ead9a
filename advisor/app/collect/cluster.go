package collect

import (
	"context"
	"errors"
	"fmt"

	"github.com/migadvisor/migadvisor/advisor/base/history"
)

// FallbackCluster names the jobs of a history that never learnt its
// cluster's name, where Slurm cannot be asked. It is the only fallback
// name: the name a history last used came from Slurm or --cluster. Once a
// real name holds the same jobs, collect files them there (FileTogether).
const FallbackCluster = "local"

// ClusterNamer asks Slurm for the cluster's name (slurm.Client does).
type ClusterNamer interface {
	ClusterName(ctx context.Context) (string, error)
}

// ClusterChoice is the cluster name a command files jobs under, and, when
// neither the user nor Slurm gave it, the sentence that says which name was
// used and why.
type ClusterChoice struct {
	Name     string
	Fallback string
}

// ChooseCluster resolves the cluster name the same way for every command
// that files or links jobs (collect, from sacct or a dump; track; wait;
// submissions of sweeps, probes and benchmark runs; the wrapper's records
// when they are adopted): given (--cluster or MIGADVISOR_CLUSTER), else
// slurmctld's ClusterName; where Slurm cannot be asked (a laptop with a
// dump, no controller), the name the history st last used, else "local". A
// name that the user or Slurm gave is kept in the history (when st is
// writable) for the commands that cannot ask.
func ChooseCluster(ctx context.Context, given string, sl ClusterNamer, st *history.Store) (ClusterChoice, error) {
	name := given
	var slurmErr error
	if name == "" {
		name, slurmErr = sl.ClusterName(ctx)
	}
	if slurmErr == nil {
		if st != nil {
			_ = st.RememberCluster(ctx, name) // best effort: a read-only history keeps none
		}
		return ClusterChoice{Name: name}, nil
	}
	last, err := LastCluster(ctx, st)
	if err != nil {
		return ClusterChoice{}, err
	}
	if last == FallbackCluster {
		return ClusterChoice{Name: last, Fallback: fmt.Sprintf("%v; filing the jobs under cluster %q (name it with --cluster)", slurmErr, last)}, nil
	}
	return ClusterChoice{Name: last, Fallback: fmt.Sprintf("%v; filing the jobs under cluster %q, the name this history last used (name another with --cluster)", slurmErr, last)}, nil
}

// LastCluster is the name the history st last used, else "local".
func LastCluster(ctx context.Context, st *history.Store) (string, error) {
	if st == nil {
		return FallbackCluster, nil
	}
	name, err := st.ClusterName(ctx)
	if name == "" {
		name = FallbackCluster
	}
	return name, err
}

// Fallbacks are the names whose jobs were filed where the cluster was not
// known: "local", unless it is the real name (Slurm's or the user's).
func (ch ClusterChoice) Fallbacks() []string {
	if ch.Name == FallbackCluster && ch.Fallback == "" {
		return nil
	}
	return []string{FallbackCluster}
}

// NameCluster chooses (ChooseCluster, given the user's name) the cluster
// name c files jobs under whose records carry none, and the fallback names
// FileTogether merges into it, and gives the name to the wrapper's records:
// the sbatch wrapper does not ask slurmctld for it (that would cost a
// submission tens of milliseconds). A name fallen back to is said through
// onFallback (nil: not said), even when the records could not take it.
func (c *Collector) NameCluster(ctx context.Context, given string, onFallback func(sentence string)) error {
	ch, err := ChooseCluster(ctx, given, c.clusterNamer(), c.Store)
	if ch.Fallback != "" && onFallback != nil {
		onFallback(ch.Fallback)
	}
	if err != nil {
		return err
	}
	c.Cluster, c.Fallbacks = ch.Name, ch.Fallbacks()
	return c.Store.AdoptSubmissions(ctx, c.Cluster)
}

// clusterNamer is c's Slurm, or where it has none, a namer that cannot be
// asked: the name falls back as it does where slurmctld is down.
func (c *Collector) clusterNamer() ClusterNamer {
	if c.Slurm == nil {
		return noSlurm{}
	}
	return c.Slurm
}

type noSlurm struct{}

func (noSlurm) ClusterName(context.Context) (string, error) { return "", errors.New("no Slurm client") }
