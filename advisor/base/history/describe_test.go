package history

import (
	"context"
	"path/filepath"
	"testing"
)

func TestDescribe(t *testing.T) {
	dir := t.TempDir()
	open := func(name string) *Store {
		st, err := Open(context.Background(), filepath.Join(dir, name))
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { st.Close() })
		return st
	}
	own, site := open("own.db"), open("site.db")
	for _, c := range []struct {
		own  *Store
		site []*Store
		want string
	}{
		{own, nil, "the history at " + own.Path()},
		{nil, []*Store{site}, "the site-wide history at " + site.Path()},
		{own, []*Store{site}, "your history at " + own.Path() + " and the site-wide history at " + site.Path()},
	} {
		if got := Describe(c.own, c.site); got != c.want {
			t.Errorf("Describe = %q, want %q", got, c.want)
		}
	}
}
