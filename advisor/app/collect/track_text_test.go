package collect

import (
	"encoding/json"
	"errors"
	"slices"
	"testing"
)

func TestTrackResultConfirmation(t *testing.T) {
	for _, c := range []struct {
		res  TrackResult
		want string
	}{
		{TrackResult{Script: "/w/train.sh", Fingerprint: "abc", JobIDs: []string{"7"}},
			"tracking 1 job as train.sh (fingerprint abc); 'migadvisor collect' gathers their evidence"},
		{TrackResult{Script: "/w/my dir/train.sh", Fingerprint: "def", JobIDs: []string{"7", "8"}},
			"tracking 2 jobs as train.sh (fingerprint def); 'migadvisor collect' gathers their evidence"},
	} {
		if got := c.res.Confirmation(); got != c.want {
			t.Errorf("%+v: %q, want %q", c.res, got, c.want)
		}
	}
}

func TestTrackResultWarnings(t *testing.T) {
	for _, c := range []struct {
		name string
		res  TrackResult
		want []string
	}{
		{"all counted", TrackResult{NotInHistory: []string{}}, nil},
		{"one not collected", TrackResult{NotInHistory: []string{"300"}},
			[]string{"job 300 is not in the history yet: run 'migadvisor collect' after it ends"}},
		{"two not collected, one unknown", TrackResult{NotInHistory: []string{"300", "302"}, UnknownToSlurm: []string{"301"}},
			[]string{"jobs 300, 302 are not in the history yet: run 'migadvisor collect' after they end",
				"Slurm has no job 301: was the id mistyped?"}},
		{"output unread", TrackResult{OutputUnread: errors.New("permission denied")},
			[]string{"the jobs are tracked, but their output was not read: permission denied; 'migadvisor collect' reads it"}},
		{"ambiguous, by id", TrackResult{Ambiguous: map[string]AmbiguousJob{
			"9": {Clusters: []string{"a", "b", "c"}, LinkedTo: "a"},
			"3": {Clusters: []string{"local", "other"}},
			"5": {Clusters: []string{"a", "b"}, LinkedTo: "b"},
		}}, []string{
			"job 3 is in the history under clusters local and other, as different jobs: track it again with --cluster and the one it ran on",
			"job 5 is in the history under clusters a and b, as different jobs: it counts as b's; if it ran on the other, " +
				"track it again with --cluster and its name",
			"job 9 is in the history under clusters a, b and c, as different jobs: it counts as a's; if it ran on another, " +
				"track it again with --cluster and its name",
		}},
	} {
		if got := c.res.Warnings(); !slices.Equal(got, c.want) {
			t.Errorf("%s:\n%q\nwant\n%q", c.name, got, c.want)
		}
	}
}

// The lists are [] in JSON, never null, and the ambiguous ids {} where
// there are none: every key docs/user/history.md lists is always there.
func TestTrackResultReport(t *testing.T) {
	for _, c := range []struct {
		res  TrackResult
		want string
	}{
		{TrackResult{Script: "/w/t.sh", Fingerprint: "f", Cluster: "c1", JobIDs: []string{"1"}},
			`{"script":"/w/t.sh","fingerprint":"f","cluster":"c1","job_ids":["1"],"not_in_history":[],"unknown_to_slurm":[],"ambiguous":{}}`},
		{TrackResult{Script: "/w/t.sh", Fingerprint: "f", Cluster: "c1", JobIDs: []string{"3", "4"}, NotInHistory: []string{"4"},
			Ambiguous: map[string]AmbiguousJob{"3": {Clusters: []string{"a", "b"}, LinkedTo: "a"}}},
			`{"script":"/w/t.sh","fingerprint":"f","cluster":"c1","job_ids":["3","4"],"not_in_history":["4"],"unknown_to_slurm":[],` +
				`"ambiguous":{"3":["a","b"]}}`},
	} {
		got, err := json.Marshal(c.res.Report())
		if err != nil || string(got) != c.want {
			t.Errorf("%+v: %s (%v), want %s", c.res, got, err, c.want)
		}
	}
}

func TestNotInAccountingYet(t *testing.T) {
	for n, want := range map[int]string{
		1: "1 submission through the sbatch wrapper not in Slurm's accounting yet",
		3: "3 submissions through the sbatch wrapper not in Slurm's accounting yet",
	} {
		if got := NotInAccountingYet(n); got != want {
			t.Errorf("%d: %q, want %q", n, got, want)
		}
	}
}
