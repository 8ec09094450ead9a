package collect

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/migadvisor/migadvisor/advisor/base/history"
	"github.com/migadvisor/migadvisor/catalog"
)

// siteWith is Wulver whose site file names a published history and a
// site store (whose option file need not exist).
func siteWith(t *testing.T, siteDB, siteStore string) *catalog.Site {
	t.Helper()
	site, err := catalog.Resolve("wulver")
	if err != nil {
		t.Fatal(err)
	}
	s := *site
	s.History.SiteDB, s.History.SiteStore = siteDB, siteStore
	return &s
}

// newHistory is an empty history at a path of its own.
func newHistory(t *testing.T) string {
	t.Helper()
	db := filepath.Join(t.TempDir(), "history.db")
	st, err := history.Open(context.Background(), db)
	if err != nil {
		t.Fatal(err)
	}
	st.Close()
	return db
}

// Without a site store a report reads --db, and where there is none says
// where the site's history is; --site-store off leaves the site file's
// store aside, and one that cannot be read is an error.
func TestOpenSiteHistory(t *testing.T) {
	ctx := context.Background()
	db := newHistory(t)
	missing := filepath.Join(t.TempDir(), "none.db")
	noStore := filepath.Join(t.TempDir(), "no-such.cnf")
	cases := []struct {
		name, flag, db string
		site           *catalog.Site
		wantErr        string // "": opens db
	}{
		{"the db", "", db, siteWith(t, "", ""), ""},
		{"the site file's store, off", StoreOff, db, siteWith(t, "", noStore), ""},
		{"no db", "", missing, siteWith(t, "", ""), "no history at " + missing + ": report and plan read the site history that " +
			"'collect --all-users' fills; name it with --db or MIGADVISOR_DB"},
		{"no db, a published one", "", missing, siteWith(t, "/shared/history.db", ""), "(the site's published one: --db /shared/history.db)"},
		{"a store not there", noStore, db, siteWith(t, "", ""), "no-such.cnf"},
	}
	for _, c := range cases {
		h, err := OpenSiteHistory(ctx, c.flag, c.site, c.db)
		if c.wantErr != "" {
			if err == nil || !strings.Contains(err.Error(), c.wantErr) {
				t.Errorf("%s: error %v, want %q", c.name, err, c.wantErr)
			}
			continue
		}
		if err != nil {
			t.Errorf("%s: %v", c.name, err)
			continue
		}
		if h.Store == nil || h.From != c.db || h.Public != c.db {
			t.Errorf("%s: store %v, from %q, public %q; want %s", c.name, h.Store, h.From, h.Public, c.db)
		}
		h.Close()
	}
}

// Without a site store, publish publishes --db, and warns of an index that
// advises on nothing.
func TestPublishSiteHistory(t *testing.T) {
	db, dir := newHistory(t), t.TempDir()
	p, err := PublishSiteHistory(context.Background(), StoreOff, siteWith(t, "", "/no/such.cnf"), db, dir)
	if err != nil {
		t.Fatal(err)
	}
	if p.From != db || p.Warning == "" || filepath.Dir(p.Snapshot) != dir {
		t.Errorf("publication %+v: want from %s, a warning, the snapshot in %s", p, db, dir)
	}
	if _, err := os.Stat(p.Index); err != nil {
		t.Errorf("no index: %v", err)
	}
	if _, err := PublishSiteHistory(context.Background(), "", siteWith(t, "", ""), db, filepath.Join(dir, "none")); err == nil {
		t.Error("published in a directory that is not there")
	}
}
