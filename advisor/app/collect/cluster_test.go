package collect

import (
	"context"
	"errors"
	"path/filepath"
	"strings"
	"testing"

	"github.com/migadvisor/migadvisor/advisor/base/history"
)

type namer struct {
	name string
	err  error
}

func (n namer) ClusterName(context.Context) (string, error) { return n.name, n.err }

// The name comes from the user, else Slurm, else the history's last name,
// else "local"; a name Slurm gave is remembered for the commands that
// cannot ask, and only a fallback says so.
func TestChooseClusterOrder(t *testing.T) {
	ctx := context.Background()
	st, err := history.Open(ctx, filepath.Join(t.TempDir(), "history.db"))
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	down := namer{err: errors.New("scontrol: cannot reach slurmctld")}

	ch, err := ChooseCluster(ctx, "", down, st)
	if err != nil || ch.Name != FallbackCluster || !strings.Contains(ch.Fallback, "cannot reach slurmctld") || ch.Fallbacks() == nil {
		t.Fatalf("no name anywhere: %+v %v", ch, err)
	}
	if ch, _ := ChooseCluster(ctx, "", namer{name: "wulver"}, st); ch.Name != "wulver" || ch.Fallback != "" {
		t.Fatalf("Slurm's name: %+v", ch)
	}
	ch, _ = ChooseCluster(ctx, "", down, st)
	if ch.Name != "wulver" || !strings.Contains(ch.Fallback, "the name this history last used") {
		t.Fatalf("the remembered name: %+v", ch)
	}
	if ch, _ := ChooseCluster(ctx, "given", down, st); ch.Name != "given" || ch.Fallback != "" {
		t.Fatalf("the user's name: %+v", ch)
	}
	if ch, _ := ChooseCluster(ctx, FallbackCluster, down, nil); ch.Fallbacks() != nil {
		t.Fatalf("local named on purpose has no fallback to merge: %+v", ch)
	}
}
