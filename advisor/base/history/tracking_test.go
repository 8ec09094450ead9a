package history

import (
	"strings"
	"testing"
)

func TestWhyNoneTracked(t *testing.T) {
	for _, tc := range []struct {
		name  string
		ids   []string
		sweep string
		want  string
	}{
		{"nothing asked", nil, "", "no tracked jobs in the history at h.db: " + HowTracked},
		{"one id", []string{"42"}, "", "job 42 is not tracked in the history at h.db: 'migadvisor track JOB.sh 42' links it to the script; " + HowTracked},
		{"ids of a sweep", []string{"42", "43"}, "my sweep", "jobs 42, 43 are not tracked as jobs of the sweep in my sweep in the history at h.db: " +
			"'migadvisor track JOB.sh 42 43' links them to the script; " + HowTracked},
		{"a sweep", nil, "my sweep", "the history at h.db tracks no jobs of the sweep in my sweep: " +
			"'migadvisor sweep JOB.sh --out 'my sweep' --submit' submits its variants and tracks them"},
		{"a hostile id", []string{"4;rm"}, "", "job 4;rm is not tracked in the history at h.db: 'migadvisor track JOB.sh '4;rm'' links it"},
	} {
		if got := WhyNoneTracked("h.db", tc.ids, tc.sweep); !strings.HasPrefix(got, tc.want) {
			t.Errorf("%s:\n got %q\nwant %q", tc.name, got, tc.want)
		}
	}
}
