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

// NeedWords is a GPU memory need as a sentence or a form gives it, with
// FormatMiB's sizes: "2.9 GiB" (a figure), "≥ 9.3 GiB" (an out-of-memory's
// bound), "≤ 60.0 GiB" (a ceiling), "9.3 GiB to 60.0 GiB" (between); ""
// when nothing is known. A ceiling under the bound bounds nothing: the
// runs that gave them did not do the same.
func NeedWords(need, ceiling *float64, oomBound bool) string {
	if need != nil && ceiling != nil && *ceiling < *need {
		ceiling = nil
	}
	switch {
	case need != nil && ceiling != nil && oomBound:
		return FormatMiB(*need) + " to " + FormatMiB(*ceiling)
	case need == nil && ceiling != nil:
		return "≤ " + FormatMiB(*ceiling)
	case need != nil && oomBound:
		return "≥ " + FormatMiB(*need)
	case need != nil:
		return FormatMiB(*need)
	}
	return ""
}
