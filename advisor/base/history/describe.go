package history

import (
	"fmt"

	"github.com/migadvisor/migadvisor/internal/textutil"
)

// Describe names the histories a command read, for a sentence: "the
// history at PATH", the site-wide one, or yours and the site-wide one.
func Describe(own *Store, siteWide []*Store) string {
	if len(siteWide) == 0 && own != nil {
		return "the history at " + own.Path()
	}
	paths := make([]string, len(siteWide))
	for i, st := range siteWide {
		paths[i] = st.Path()
	}
	if own == nil {
		return "the site-wide history at " + textutil.JoinAnd(paths)
	}
	return fmt.Sprintf("your history at %s and the site-wide history at %s", own.Path(), textutil.JoinAnd(paths))
}
