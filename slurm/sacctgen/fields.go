package sacctgen

import (
	"slices"
	"strings"
)

// WithoutFields is a saved dump (sacct --parsable2, "|", its header first,
// JobName last) with the fields named left out, as a narrower sacct -o
// writes it.
func WithoutFields(dump string, fields ...string) string {
	return selectFields(dump, func(field string) bool { return !slices.Contains(fields, field) })
}

// OnlyFields is a saved dump with only the fields named, in its own order.
func OnlyFields(dump string, fields ...string) string {
	return selectFields(dump, func(field string) bool { return slices.Contains(fields, field) })
}

// selectFields is dump with the fields keep keeps. A record is split into
// no more fields than the header names: the last one, JobName, may hold
// the delimiter.
func selectFields(dump string, keep func(field string) bool) string {
	lines := strings.Split(strings.TrimSuffix(dump, "\n"), "\n")
	header := strings.Split(lines[0], "|")
	var kept []int
	for i, field := range header {
		if keep(field) {
			kept = append(kept, i)
		}
	}
	var out strings.Builder
	for _, line := range lines {
		values := strings.SplitN(line, "|", len(header))
		for k, i := range kept {
			if k > 0 {
				out.WriteByte('|')
			}
			if i < len(values) {
				out.WriteString(values[i])
			}
		}
		out.WriteByte('\n')
	}
	return out.String()
}
