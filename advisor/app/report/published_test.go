package report

import (
	"context"
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/migadvisor/migadvisor/advisor/base/history"
	"github.com/migadvisor/migadvisor/catalog"
)

// published wrote a pytorch workload on two profiles and one of the
// user's own (no layout: the generic table).
func published() Published {
	small, full := &catalog.Profile{Name: "1g.10gb"}, &catalog.Profile{Name: "full"}
	return Published{Written: []Written{
		{Report: &Report{Workload: Workload{Tag: "mnist", Title: "MNIST", Table: "pytorch"},
			Profiles: []*ProfileResult{{Profile: small, Runs: 2}, {Profile: full, Runs: 1}}},
			Files: []string{"out/mnist.csv", "out/mnist.md"}},
		{Report: &Report{Workload: Workload{Tag: "mine", Title: "mine"}, Profiles: []*ProfileResult{{Profile: small, Runs: 4}}},
			Files: []string{"out/mine.csv"}},
	}}
}

func TestPublishedWriteText(t *testing.T) {
	for _, c := range []struct {
		name string
		pub  Published
		want string
	}{
		{"two workloads", published(), "WORKLOAD  TABLE    RUNS  PROFILES      FILES\n" +
			"mnist     pytorch  3     1g.10gb,full  out/mnist.csv out/mnist.md\n" +
			"mine      generic  4     1g.10gb       out/mine.csv\n"},
		{"none", Published{}, "WORKLOAD  TABLE  RUNS  PROFILES  FILES\n"},
	} {
		var b strings.Builder
		if err := c.pub.WriteText(&b); err != nil || b.String() != c.want {
			t.Errorf("%s: %v\n%s\nwant\n%s", c.name, err, b.String(), c.want)
		}
	}
}

func TestPublishedSummaries(t *testing.T) {
	got, err := json.Marshal(published().Summaries())
	want := `[{"workload":"mnist","title":"MNIST","table":"pytorch","profiles":["1g.10gb","full"],"runs":3,` +
		`"files":["out/mnist.csv","out/mnist.md"]},` +
		`{"workload":"mine","title":"mine","table":"generic","profiles":["1g.10gb"],"runs":4,"files":["out/mine.csv"]}]`
	if err != nil || string(got) != want {
		t.Errorf("%s (%v)\nwant\n%s", got, err, want)
	}
	if got := (Published{}).Summaries(); got == nil || len(got) != 0 {
		t.Errorf("none written: %#v, want an empty list", got)
	}
}

// A history that is not there is said as such (and none is created); one
// there is published, here refused as it has no workload.
func TestPublishHistory(t *testing.T) {
	ctx := context.Background()
	empty := filepath.Join(t.TempDir(), "history.db")
	st, err := history.Open(ctx, empty)
	if err != nil {
		t.Fatal(err)
	}
	st.Close()
	for _, c := range []struct {
		name, db string
		want     error
	}{
		{"none", filepath.Join(t.TempDir(), "history.db"), ErrNoHistory},
		{"no workload", empty, ErrNoWorkloads},
	} {
		_, err := PublishHistory(ctx, c.db, PublishOptions{Dir: t.TempDir()})
		if !errors.Is(err, c.want) {
			t.Errorf("%s: %v, want %v", c.name, err, c.want)
		}
		if _, statErr := os.Stat(c.db); c.want == ErrNoHistory && statErr == nil {
			t.Errorf("%s: a history was created", c.name)
		}
	}
}
