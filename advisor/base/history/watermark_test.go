package history

import (
	"context"
	"path/filepath"
	"strings"
	"testing"

	"github.com/migadvisor/migadvisor/slurm"
)

// The index of unended jobs is only as good as its list of states.
func TestActiveStateListIsSlurmsActiveStates(t *testing.T) {
	want := "('" + strings.Join(slurm.ActiveStates, "', '") + "')"
	if got := strings.Join(strings.Fields(activeStateList), " "); got != want {
		t.Errorf("activeStateList %s, slurm.ActiveStates %s", got, want)
	}
}

// Incremental collects ask about the jobs whose record may still change on
// every run: through the partial index, not a scan of a million rows.
func TestUnsettledJobsUseTheirIndex(t *testing.T) {
	ctx := context.Background()
	s, err := Open(ctx, filepath.Join(t.TempDir(), "h.db"))
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	dump := "JobIDRaw|JobID|User|State|ReqTRES|JobName\n1|1|ann|RUNNING|cpu=1|a\n2|2|ann|COMPLETED|cpu=1|b\n3|3|bob|PENDING|cpu=1|c\n" +
		"4|4|ann|CANCELLED by 0|cpu=1|d\n5|5|ann|COMPLETED||allocation\n" // 5: slurmdbd's placeholder
	r, _ := slurm.NewSacctReader(strings.NewReader(dump))
	if _, err := s.ImportJobs(ctx, r.Next, ImportOptions{Cluster: "c"}); err != nil {
		t.Fatal(err)
	}
	refs, err := s.UnsettledJobs(ctx, []string{"c"}, []string{"ann"})
	if err != nil || len(refs) != 2 || refs[0] != (JobRef{"c", "1"}) || refs[1] != (JobRef{"c", "5"}) {
		t.Errorf("ann's unsettled jobs %v %v", refs, err)
	}
	if refs, _ := s.UnsettledJobs(ctx, []string{"c"}, nil); len(refs) != 3 {
		t.Errorf("all unsettled jobs %v", refs)
	}
	q, args := unsettledJobsQuery([]string{"c"}, []string{"ann"})
	plan := queryPlan(t, s, q, args...)
	if !strings.Contains(plan, "jobs_unsettled") {
		t.Errorf("the query does not use jobs_unsettled: %s", plan)
	}
}
