package collect

import (
	"testing"
	"time"

	"github.com/migadvisor/migadvisor/slurm"
)

func TestSelectionDefaults(t *testing.T) {
	no, yes := false, true
	week := time.Now().Add(-7 * 24 * time.Hour)
	cases := []struct {
		name             string
		dump             string
		q                slurm.SacctQuery
		scripts          *bool
		tracked, linking bool
		users            []string
	}{
		{"nothing named: the tracked jobs", "", slurm.SacctQuery{}, nil, true, false, nil},
		{"--since alone: the user's own jobs, named", "", slurm.SacctQuery{Since: week}, nil, false, false, []string{"ada"}},
		{"--all-users links scripts", "", slurm.SacctQuery{AllUsers: true}, nil, false, true, nil},
		{"--all-users --scripts=false", "", slurm.SacctQuery{AllUsers: true}, &no, false, false, nil},
		{"--scripts on a user's selection", "", slurm.SacctQuery{Users: []string{"bo"}}, &yes, false, true, []string{"bo"}},
		{"a dump is not the tracked jobs", "d.psv", slurm.SacctQuery{}, nil, false, false, nil},
	}
	for _, c := range cases {
		s := NewSelection(c.dump, c.q, c.scripts, "ada")
		if s.TrackedOnly() != c.tracked || s.Scripts != c.linking || len(s.Query.Users) != len(c.users) ||
			(len(c.users) == 1 && s.Query.Users[0] != c.users[0]) {
			t.Errorf("%s: %+v (tracked only %v)", c.name, s, s.TrackedOnly())
		}
	}
}
