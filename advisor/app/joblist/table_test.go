package joblist

import (
	"strings"
	"testing"
)

// The footer counts the site-wide history's jobs among those listed, so
// that a reader does not take them for all of them.
func TestHistoryFooterSaysWhichJobsAreTheSites(t *testing.T) {
	jobs := []JobEntry{{JobID: "1", History: "own"}, {JobID: "2", History: "site"}, {JobID: "3", History: "site"}}
	var out strings.Builder
	WriteTable(&out, jobs)
	if !strings.HasSuffix(out.String(), "2 of these 3 jobs are from the site-wide history, the others from yours\n") {
		t.Errorf("footer:\n%s", out.String())
	}
	out.Reset()
	WriteTable(&out, jobs[:2])
	if !strings.HasSuffix(out.String(), "1 of these 2 jobs is from the site-wide history, the others from yours\n") {
		t.Errorf("footer:\n%s", out.String())
	}
	out.Reset()
	WriteTable(&out, jobs[1:])
	if !strings.HasSuffix(out.String(), "\nall from the site-wide history\n") {
		t.Errorf("footer:\n%s", out.String())
	}
}
