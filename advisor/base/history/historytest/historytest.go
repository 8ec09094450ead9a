// Package historytest builds histories for the tests and benchmarks of the
// packages above the history: a fresh one in a test's temporary directory,
// filled from a sacct dump as collect would file it for a site.
package historytest

import (
	"context"
	"io"
	"path/filepath"
	"strings"
	"testing"

	"github.com/migadvisor/migadvisor/advisor/base/history"
	"github.com/migadvisor/migadvisor/catalog"
	"github.com/migadvisor/migadvisor/slurm"
)

// Open is a new, empty history, closed when the test ends.
func Open(tb testing.TB) *history.Store {
	tb.Helper()
	st, err := history.Open(context.Background(), filepath.Join(tb.TempDir(), "history.db"))
	if err != nil {
		tb.Fatal(err)
	}
	tb.Cleanup(func() { st.Close() })
	return st
}

// FromDump is a new history holding the jobs of a sacct --parsable2 dump,
// each GPU filed under the site's profile.
func FromDump(tb testing.TB, site *catalog.Site, dump string) *history.Store {
	tb.Helper()
	return FromReader(tb, site, strings.NewReader(dump), "")
}

// FromReader is FromDump for a dump read from r (a generated one, for a
// benchmark); cluster names the jobs whose records carry no Cluster.
func FromReader(tb testing.TB, site *catalog.Site, r io.Reader, cluster string) *history.Store {
	tb.Helper()
	st := Open(tb)
	Import(tb, st, site, r, cluster)
	return st
}

// Import adds the jobs of the dump r to st.
func Import(tb testing.TB, st *history.Store, site *catalog.Site, r io.Reader, cluster string) {
	tb.Helper()
	sr, err := slurm.NewSacctReader(r)
	if err != nil {
		tb.Fatal(err)
	}
	if _, err := st.ImportJobs(context.Background(), sr.Next, history.ImportOptions{Cluster: cluster, Profile: site.ProfileNameOf}); err != nil {
		tb.Fatal(err)
	}
}
