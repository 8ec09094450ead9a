package collect

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/migadvisor/migadvisor/catalog/catalogtest"
	"github.com/migadvisor/migadvisor/slurm"
	"github.com/migadvisor/migadvisor/slurm/slurmtest"
)

func TestFindSubmittedWithoutHistoryCreatesNone(t *testing.T) {
	db := filepath.Join(t.TempDir(), "h.db")
	var said []string
	w := Where{Site: catalogtest.Wulver(t), DB: db, Slurm: &slurm.Client{Runner: slurmtest.New()}}
	if n := FindSubmitted(context.Background(), w, 0, func(s string) { said = append(said, s) }); n != 0 || len(said) != 0 {
		t.Errorf("FindSubmitted = %d, said %q; want 0 and nothing", n, said)
	}
	if _, err := os.Stat(db); err == nil {
		t.Error("FindSubmitted created a history where there was none")
	}
}

func TestSubmitterNamesTheClusterOnce(t *testing.T) {
	fake := slurmtest.New().Cluster("wulver")
	s := &Submitter{Client: &slurm.Client{Runner: fake}, Where: Where{DB: filepath.Join(t.TempDir(), "h.db")}}
	for range 3 {
		if name, err := s.ClusterName(context.Background()); err != nil || name != "wulver" {
			t.Fatalf("ClusterName = %q, %v", name, err)
		}
	}
	if n := len(fake.Calls("scontrol")); n != 1 {
		t.Errorf("scontrol asked %d times; want once", n)
	}
}

func TestOpenNamedSaysTheFallback(t *testing.T) {
	fake := slurmtest.New().Fails("scontrol", "scontrol: error: Unable to contact slurm controller (connect failure)", 1)
	var said []string
	w := Where{Site: catalogtest.Wulver(t), DB: filepath.Join(t.TempDir(), "h.db"), Slurm: &slurm.Client{Runner: fake}}
	col, err := OpenNamed(context.Background(), w, func(s string) { said = append(said, s) })
	if err != nil {
		t.Fatal(err)
	}
	defer col.Store.Close()
	if col.Cluster != FallbackCluster || len(said) != 1 || !strings.Contains(said[0], "Unable to contact") || !strings.Contains(said[0], "--cluster") {
		t.Errorf("cluster %q, said %q; want %q and why, with --cluster", col.Cluster, said, FallbackCluster)
	}
}

// A collector whose cluster was never named (a collect of an empty dump
// names none) asks Slurm for no job's stored script: it cannot tell which
// cluster's jobs the local Slurm holds. Seen in review: the guard passed
// for every cluster where the name was empty.
func TestStoredScriptsAskNothingOfAnUnnamedCluster(t *testing.T) {
	fake := slurmtest.New().Cluster("wulver")
	c := &Collector{Slurm: &slurm.Client{Runner: fake}}
	if scripts, err := c.storedScripts(context.Background(), "wulver", []string{"7"}); err != nil || scripts != nil {
		t.Errorf("scripts %v, %v", scripts, err)
	}
	if calls := fake.Calls("sacct"); len(calls) != 0 {
		t.Errorf("sacct asked %d times: %v", len(calls), calls)
	}
}
