package collect

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/migadvisor/migadvisor/advisor"
	"github.com/migadvisor/migadvisor/advisor/base/history"
	"github.com/migadvisor/migadvisor/slurm"
)

// A site-wide collect links other users' jobs to the scripts slurmdbd
// stored; a probe's variant (its script carries the sweep's monitor block)
// is linked as a sweep's measurement, so its runs are not its user's rate
// of running the script (seen: "at your rate of 6 runs in 30 days" after a
// probe of four profiles and two submissions).
func TestLinkScriptsKnowsAProbesVariants(t *testing.T) {
	ctx := context.Background()
	col := testCollector(t)
	linkedFixture(t, col)
	stored := filepath.Join(col.Slurm.Bin, "scripts.txt")
	data, err := os.ReadFile(stored)
	if err != nil {
		t.Fatal(err)
	}
	// Job 17's script as a probe submits it: under the monitor.
	head, rest, _ := strings.Cut(string(data), "\n\nBatch Script for 18_0\n")
	sep := "--------------------------------------------------------------------------------\n"
	title, script, _ := strings.Cut(head, sep)
	variant, err := slurm.MonitorWrap{Binary: "/opt/migadvisor/bin/migadvisor"}.Wrap("17.sh", []byte(script+"\n"))
	if err != nil {
		t.Fatal(err)
	}
	write(t, stored, title+sep+strings.TrimSuffix(string(variant), "\n")+"\n\nBatch Script for 18_0\n"+rest)
	if linked, err := col.LinkScripts(ctx, 100); err != nil || linked.Linked != 3 {
		t.Fatalf("link: %+v %v", linked, err)
	}
	recs, err := col.Store.History(ctx, history.HistoryFilter{Tracked: true})
	if err != nil || len(recs) != 3 {
		t.Fatalf("history: %d records, %v", len(recs), err)
	}
	for _, r := range recs {
		run, ok := advisor.RunFromRecord(&r)
		if !ok {
			t.Fatalf("job %s is no run", r.JobID)
		}
		if want := r.JobID == "17"; run.Swept != want {
			t.Errorf("job %s: swept %v, want %v", r.JobID, run.Swept, want)
		}
	}
}
