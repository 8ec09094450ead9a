package lint

import (
	"strings"
	"testing"
)

func TestReportText(t *testing.T) {
	findings := []Finding{
		{Line: 3, Severity: SeverityError, Code: "bad-value", Message: "--time x is not a time"},
		{Line: 0, Severity: "warning", Code: "over-limit", Message: "more memory than a node has"},
	}
	for _, tc := range []struct {
		name     string
		findings []Finding
		tty      bool
		want     string
	}{
		{"findings", findings, false, "job.sh:3: error: bad-value: --time x is not a time\njob.sh:0: warning: over-limit: more memory than a node has\n"},
		{"findings on a terminal", findings[:1], true, "job.sh:3: error: bad-value: --time x is not a time\n"},
		{"clean, piped", []Finding{}, false, ""},
		{"clean, on a terminal", []Finding{}, true, "job.sh: no findings (site wulver)\n"},
	} {
		var out strings.Builder
		if err := (Report{File: "job.sh", Site: "wulver", Findings: tc.findings}).WriteText(&out, tc.tty); err != nil || out.String() != tc.want {
			t.Errorf("%s: %q, %v; want %q", tc.name, out.String(), err, tc.want)
		}
	}
}

func TestFindingWhere(t *testing.T) {
	for _, tc := range []struct {
		file string
		f    Finding
		want string
	}{
		{"job.sh", Finding{Line: 4, Message: "m"}, "job.sh:4: m"},
		{"job.sh", Finding{Message: "m"}, "job.sh: m"},
		{"", Finding{Line: 4, Message: "m"}, "warning: m"},
	} {
		if got := tc.f.Where(tc.file); got != tc.want {
			t.Errorf("Where(%q) of %+v = %q, want %q", tc.file, tc.f, got, tc.want)
		}
	}
}
