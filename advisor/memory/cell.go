package memory

import (
	"fmt"
	"strings"
)

// NeedCell is a GPU memory need as its evidence proves it, in a table's
// short sizes (ShortMiB): a figure, at least an out-of-memory's bound (≥,
// oomBound), at most a ceiling (≤), or between.
func NeedCell(need, ceiling *float64, oomBound bool) string {
	lower := need != nil && oomBound
	switch {
	case need != nil && ceiling != nil && lower:
		return strings.TrimSuffix(ShortMiB(need), "G") + "-" + ShortMiB(ceiling)
	case need == nil && ceiling != nil:
		return "≤" + ShortMiB(ceiling)
	case lower:
		return "≥" + ShortMiB(need)
	}
	return ShortMiB(need)
}

// ShortMiB is a size in MiB as the tables print it, "512M" or "5.7G"; "-"
// for none.
func ShortMiB(mib *float64) string {
	switch {
	case mib == nil:
		return "-"
	case *mib >= 1024:
		return fmt.Sprintf("%.1fG", *mib/1024)
	case *mib < 10:
		return fmt.Sprintf("%.1fM", *mib)
	}
	return fmt.Sprintf("%.0fM", *mib)
}
