package collect

import (
	"reflect"
	"slices"
	"testing"

	"github.com/migadvisor/migadvisor/slurm"
)

// A dump is said to lack what the report needs of its jobs, a need any of
// whose fields gives it met by one; migadvisor's own fields lack nothing.
func TestLacking(t *testing.T) {
	has := func(fields ...string) func(string) bool {
		return func(f string) bool { return slices.Contains(fields, f) }
	}
	if got := Lacking(has(slurm.SacctFields...)); len(got) != 0 {
		t.Errorf("migadvisor's own fields lack %v", got)
	}
	documented := has("JobIDRaw", "JobID", "State", "ElapsedRaw", "AllocTRES", "MaxRSS", "JobName")
	var lacked [][]string
	for _, m := range Lacking(documented) {
		lacked = append(lacked, m.Fields)
	}
	if want := [][]string{{"End"}, {"User"}, {"Submit", "Start"}}; !reflect.DeepEqual(lacked, want) {
		t.Errorf("the fields collect --help once showed lack %v, want %v", lacked, want)
	}
	// jobstats' own fields: ReqTRES for the GPU, Start and End for the run time.
	jobstats := has("JobIDRaw", "Start", "End", "User", "State", "ReqTRES", "Submit")
	if got := Lacking(jobstats); len(got) != 0 {
		t.Errorf("a dump with ReqTRES, Start and End lacks %v", got)
	}
}
