// Package textutil holds the small wording helpers that several layers
// print with (the CLI, the advisor's reasons, the report's takeaways), so
// that a count or a list reads the same wherever it is shown.
package textutil

import (
	"fmt"
	"math"
	"strconv"
	"strings"
)

// Plural writes a count with its unit: "1 CPU", "8 CPUs". Units are
// English nouns whose plural takes an s ("run", "GPU", "MIG slice").
func Plural(n int, unit string) string {
	if n == 1 {
		return "1 " + unit
	}
	return strconv.Itoa(n) + " " + unit + "s"
}

// JoinAnd lists words as a sentence does: "a", "a and b", "a, b and c".
func JoinAnd(words []string) string {
	if n := len(words); n > 1 {
		return strings.Join(words[:n-1], ", ") + " and " + words[n-1]
	}
	return strings.Join(words, "")
}

// JobsNamed names job ids as a sentence does: "job 4242", "jobs 4242,
// 4243"; with more than upTo ids (upTo > 0), the first upTo and how many
// more: "jobs 1, 2 and 5 more".
func JobsNamed(ids []string, upTo int) string {
	if len(ids) == 1 {
		return "job " + ids[0]
	}
	if upTo > 0 && len(ids) > upTo {
		return "jobs " + strings.Join(ids[:upTo], ", ") + " and " + strconv.Itoa(len(ids)-upTo) + " more"
	}
	return "jobs " + strings.Join(ids, ", ")
}

// Number prints a figure without needless decimals (3, 2.5, 0.333).
func Number(x float64) string {
	if x == math.Trunc(x) {
		return fmt.Sprintf("%d", int64(x))
	}
	return fmt.Sprintf("%.3g", x)
}
