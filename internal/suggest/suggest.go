// Package suggest names what a mistyped word may have meant: a command, a
// flag, a session or script name the history knows. Closeness is counted
// in edits, as urfave/cli's own suggestions count them (xrash/smetrics'
// Wagner–Fischer: an insertion, a deletion or a substitution is one edit,
// a swap of two letters two). It stands on no layer and no CLI library, so
// that the lean sbatch wrapper may link what uses it.
package suggest

import (
	"cmp"
	"slices"
	"strings"

	"github.com/xrash/smetrics"
)

// Edits is the number of edits that make a into b.
func Edits(a, b string) int { return smetrics.WagnerFischer(a, b, 1, 1, 1) }

// Nearest is the candidate fewest edits from typed, when it is at most
// maxEdits away (ties: the first); "" when none is.
func Nearest(typed string, candidates []string, maxEdits int) string {
	best, bestEdits := "", maxEdits+1
	for _, c := range candidates {
		if d := Edits(typed, c); d < bestEdits {
			best, bestEdits = c, d
		}
	}
	return best
}

// Names are the names among candidates that a mistyped name may have
// meant, nearest first, at most n of them: a name within a third of
// typed's length in edits (at least two), ignoring case, whole or its last
// part after a "/" (jupyterlb: sys/dashboard/sys/jupyter), or one that
// holds typed (typed three letters or more). typed itself is never one.
func Names(typed string, candidates []string, n int) []string {
	low := strings.ToLower(typed)
	limit := max(2, len([]rune(low))/3)
	type near struct {
		name  string
		edits int
	}
	var found []near
	for _, c := range candidates {
		name := strings.ToLower(c)
		if c == typed || slices.ContainsFunc(found, func(f near) bool { return f.name == c }) {
			continue
		}
		d := Edits(low, name)
		if i := strings.LastIndexByte(name, '/'); i >= 0 {
			d = min(d, Edits(low, name[i+1:]))
		}
		if d <= limit || len(low) >= 3 && strings.Contains(name, low) {
			found = append(found, near{c, d})
		}
	}
	slices.SortStableFunc(found, func(a, b near) int { return cmp.Compare(a.edits, b.edits) })
	out := make([]string, 0, min(n, len(found)))
	for _, f := range found[:min(n, len(found))] {
		out = append(out, f.name)
	}
	return out
}
