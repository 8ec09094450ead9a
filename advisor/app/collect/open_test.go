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
