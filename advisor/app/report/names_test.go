package report

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/migadvisor/migadvisor/advisor/base/history"
)

// taggedSource is a history of workloads, in the order given, each with
// the same runs.
type taggedSource struct {
	tags []string
	recs []history.JobRecord
}

func (s taggedSource) Workloads(context.Context) ([]history.WorkloadCount, error) {
	var out []history.WorkloadCount
	for _, tag := range s.tags {
		out = append(out, history.WorkloadCount{Workload: tag, Submissions: len(s.recs)})
	}
	return out, nil
}

func (s taggedSource) History(context.Context, history.HistoryFilter) ([]history.JobRecord, error) {
	return s.recs, nil
}

func (taggedSource) Path() string { return "/h/history.db" }

// Workloads whose names make the same safe name each get their own files
// (seen: "md___prod" silently replaced "md | prod"), a workload named index
// is not overwritten by the index, and the index links each to its page.
func TestPublishGivesEachWorkloadItsOwnFiles(t *testing.T) {
	site, _ := wulverSite(t)
	tags := []string{"md | prod", "md___prod", "index", "../evil name*"}
	src := taggedSource{tags: tags, recs: []history.JobRecord{samplesRun("1", "1g.10gb", 1000, 2.4e6, 2150)}}
	dir := t.TempDir()
	pub, err := Publish(context.Background(), src, PublishOptions{Site: site, Dir: dir,
		Page: PageOptions{Format: FormatMD, CSVDir: dir}})
	if err != nil {
		t.Fatal(err)
	}
	entries, _ := os.ReadDir(dir)
	if want := 3*len(tags) + 1; len(entries) != want {
		t.Errorf("%d files, want %d (3 of each workload and the index): %v", len(entries), want, entries)
	}
	index, _ := os.ReadFile(filepath.Join(dir, "index.md"))
	if !strings.HasPrefix(string(index), "# GPU profile benchmarks") {
		t.Errorf("index.md is not the index:\n%s", index)
	}
	for _, w := range pub.Written {
		name := w.Report.FileName()
		if strings.HasPrefix(name, ".") {
			t.Errorf("%q is written as a dotfile, %s", w.Report.Workload.Tag, name)
		}
		page, err := os.ReadFile(filepath.Join(dir, name+".md"))
		if err != nil || !strings.Contains(string(page), "]("+name+".svg)") {
			t.Errorf("%s.md is not %q's page (%v):\n%s", name, w.Report.Workload.Tag, err, page)
		}
		if !strings.Contains(string(index), "]("+name+".md)") {
			t.Errorf("the index does not link %s.md:\n%s", name, index)
		}
	}
}
