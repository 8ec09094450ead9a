package report

import (
	"strings"
	"testing"
	"time"

	"github.com/migadvisor/migadvisor/advisor/base/history"
)

// A tag is text in the pages, never markup (seen: "## [a<b>&c] (x)|y](…)",
// whose "]" ended the link and whose <b> was live HTML); so are the metric
// names and the software a job printed.
func TestPagesWriteNamesAsText(t *testing.T) {
	site, _ := wulverSite(t)
	run := samplesRun("1", "1g.10gb", 1000, 2.4e6, 2150)
	run.Metrics = map[string]float64{"<i>loss</i>": 0.5}
	run.Versions = map[string]string{"torch": "2.1<script>", "device": "gpu]("}
	end := time.Date(2026, 11, 20, 12, 0, 0, 0, time.UTC)
	run.End = &end
	tag := "a<b>&c] (x)|y `z`"
	rep, err := Build(site, Workload{Tag: tag}, []history.JobRecord{run})
	if err != nil {
		t.Fatal(err)
	}
	page, err := rep.Page(PageOptions{Format: FormatMD})
	if err != nil {
		t.Fatal(err)
	}
	index := IndexPage([]*Report{rep}, site, PageOptions{})
	text := `a&lt;b&gt;&amp;c\] (x)|y \` + "`z\\`"
	for _, want := range []string{"# " + text + "\n", "![" + text + ": runtime and SU per profile](" + rep.FileName() + ".svg)",
		"Workload `` a<b>&c] (x)|y `z` `` at", "&lt;i&gt;loss&lt;/i&gt;", "torch 2.1&lt;script&gt;", "reported running on gpu\\]("} {
		if !strings.Contains(page, want) {
			t.Errorf("the page lacks %q:\n%s", want, page)
		}
	}
	if want := "## [" + text + "](" + rep.FileName() + ".md)\n"; !strings.Contains(index, want) {
		t.Errorf("the index lacks %q:\n%s", want, index)
	}
	for _, s := range []string{page, index} {
		s = strings.ReplaceAll(s, "`` a<b>&c] (x)|y `z` ``", "") // a code span shows its text as it is
		if strings.Contains(s, "<b>") || strings.Contains(s, "<i>") || strings.Contains(s, "<script>") {
			t.Errorf("live HTML in\n%s", s)
		}
	}
}

// A code span holds any text: its backticks one more than the longest run
// inside, padded where the text starts or ends with one.
func TestCodeSpanHoldsBackticks(t *testing.T) {
	for in, want := range map[string]string{"md": "`md`", "a`b": "``a`b``", "`x``": "``` `x`` ```", "a\nb": "`a b`"} {
		if got := codeSpan(in); got != want {
			t.Errorf("codeSpan(%q) = %q, want %q", in, got, want)
		}
	}
}
