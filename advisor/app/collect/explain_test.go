package collect

import (
	"context"
	"os"
	"strings"
	"testing"

	"github.com/migadvisor/migadvisor/advisor/base/history"
	"github.com/migadvisor/migadvisor/advisor/base/outcome"
	"github.com/migadvisor/migadvisor/catalog/catalogtest"
)

// devRecords imports a dump of the dev cluster and scans the job outputs
// captured with it, as collect does, and returns the records by job id.
func devRecords(t *testing.T, dump, outputs string) map[string]*history.JobRecord {
	t.Helper()
	ctx := context.Background()
	col := testCollector(t)
	f, err := os.Open(dump)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	if _, err := col.ImportDump(ctx, f); err != nil {
		t.Fatal(err)
	}
	if _, err := col.ScanOutputs(ctx, []string{outputs}, nil); err != nil {
		t.Fatal(err)
	}
	recs, err := col.Store.History(ctx, history.HistoryFilter{})
	if err != nil {
		t.Fatal(err)
	}
	byID := map[string]*history.JobRecord{}
	for i := range recs {
		byID[recs[i].JobID] = &recs[i]
	}
	return byID
}

// Each way a real job on the dev cluster ended gets its kind and a sentence
// with the figures a user needs (testdata/joboutput/README.md lists the jobs).
func TestExplainDevClusterOutcomes(t *testing.T) {
	site := catalogtest.Wulver(t)
	cases := []struct {
		dump, outputs, job string
		kind, text         string
		anyProfile         bool
	}{
		{"devcluster-22.05.psv", "devcluster", "2", outcome.Completed, "completed after 00:00:07", false},
		{"devcluster-22.05.psv", "devcluster", "5", outcome.GPUOOM,
			"ran out of GPU memory on 1g.10gb, which has 9.5 GiB usable; it needed at least 10.3 GiB: try 2g.20gb, with 19.5 GiB", false},
		{"devcluster-22.05.psv", "devcluster", "4", outcome.HostOOM,
			"ran out of host memory: the job had 50 MiB and sacct saw its RSS reach 41 MiB before the kill; ask for more with --mem, as a larger GPU profile would not help", true},
		{"devcluster-22.05.psv", "devcluster", "3", outcome.Failed, "failed with exit code 3 after 00:00:07; slurm-3.out may say why", false},
		{"devcluster-22.05.psv", "devcluster", "6", outcome.TimeLimit,
			"reached its time limit of 00:01:00 after 00:01:19, so it needs at least that long: ask for more with --time", false}, // on a whole A100: nothing is larger
		{"devcluster-22.05.psv", "devcluster", "7", outcome.Cancelled,
			"was cancelled by uid 0 after 00:00:10, before it ended: the run says nothing about the profile", true},
		{"devcluster-22.05.psv", "devcluster", "12", outcome.Cancelled, "was cancelled by uid 0 before it started", true},
		{"devcluster-failures.psv", "devcluster-failures", "1", outcome.CommandNotFound,
			"failed because a command was not found (exit 127): slurm-1.out names it; load its module or fix PATH in the script", true},
		{"devcluster-failures.psv", "devcluster-failures", "2", outcome.NoOutputFile,
			"failed at once because Slurm could not open its output or error file (exit 0:53): does the directory of --output or --error exist? 'migadvisor lint' checks a script's before you submit, the sbatch wrapper the command line's too", true},
		{"devcluster-failures.psv", "devcluster-failures", "3", outcome.HostOOM,
			"ran out of host memory: the job had 200 MiB and sacct saw its RSS reach 169 MiB before the kill; ask for more with --mem, as a larger GPU profile would not help", true},
		{"devcluster-failures.psv", "devcluster-failures", "4", outcome.TimeLimit,
			"reached its time limit of 00:01:00 after 00:01:03, so it needs at least that long: ask for more with --time, or try a larger profile, which may be faster", false},
	}
	loaded := map[string]map[string]*history.JobRecord{}
	for _, c := range cases {
		recs, ok := loaded[c.dump]
		if !ok {
			recs = devRecords(t, "../../../testdata/sacct/"+c.dump, "../../../testdata/joboutput/"+c.outputs)
			loaded[c.dump] = recs
		}
		r := recs[c.job]
		if r == nil {
			t.Fatalf("%s: no job %s", c.dump, c.job)
		}
		got := outcome.Of(r, site)
		if got.Kind != c.kind || got.Text != c.text || got.AnyProfile != c.anyProfile {
			t.Errorf("%s job %s (%s %v):\n got %q %q %v\nwant %q %q %v", c.dump, c.job, r.State, derefInt(r.ExitCode),
				got.Kind, got.Text, got.AnyProfile, c.kind, c.text, c.anyProfile)
		}
	}
}

// A sentence is read by people: one line, no doubled punctuation.
func TestExplainSentencesAreOneLine(t *testing.T) {
	recs := devRecords(t, "../../../testdata/sacct/devcluster-22.05.psv", "../../../testdata/joboutput/devcluster")
	for id, r := range recs {
		got := outcome.Of(r, catalogtest.Wulver(t))
		if strings.ContainsAny(got.Text, "\n\r") || strings.Contains(got.Text, "..") || strings.Contains(got.Text, ";;") ||
			strings.HasSuffix(got.Text, ".") || (got.Kind == "") != (got.Text == "") {
			t.Errorf("job %s: %q %q", id, got.Kind, got.Text)
		}
	}
}

func derefInt(p *int64) int64 {
	if p == nil {
		return -1
	}
	return *p
}
