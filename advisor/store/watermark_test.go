package store

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

// Incremental collects ask for the unended jobs on every run: through the
// partial index, not a scan of a million rows.
func TestActiveJobsUseTheirIndex(t *testing.T) {
	ctx := context.Background()
	s, err := Open(ctx, filepath.Join(t.TempDir(), "h.db"))
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	dump := "JobIDRaw|JobID|User|State\n1|1|ann|RUNNING\n2|2|ann|COMPLETED\n3|3|bob|PENDING\n4|4|ann|CANCELLED by 0\n"
	r, _ := slurm.NewSacctReader(strings.NewReader(dump))
	if _, err := s.ImportJobs(ctx, r.Next, ImportOptions{Cluster: "c"}); err != nil {
		t.Fatal(err)
	}
	refs, err := s.ActiveJobs(ctx, []string{"c"}, []string{"ann"})
	if err != nil || len(refs) != 1 || refs[0] != (JobRef{"c", "1"}) {
		t.Errorf("ann's active jobs %v %v", refs, err)
	}
	if refs, _ := s.ActiveJobs(ctx, []string{"c"}, nil); len(refs) != 2 {
		t.Errorf("all active jobs %v", refs)
	}
	var plan strings.Builder
	q, args := activeJobsQuery([]string{"c"}, []string{"ann"})
	rows, err := s.db.QueryContext(ctx, "EXPLAIN QUERY PLAN "+q, args...)
	if err != nil {
		t.Fatal(err)
	}
	defer rows.Close()
	for rows.Next() {
		var id, parent, unused int
		var detail string
		rows.Scan(&id, &parent, &unused, &detail)
		plan.WriteString(detail + "\n")
	}
	if !strings.Contains(plan.String(), "jobs_active") {
		t.Errorf("the query does not use jobs_active:\n%s", plan.String())
	}
}
