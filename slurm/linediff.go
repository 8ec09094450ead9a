package slurm

import "strings"

// LineChange is one line of a script as a change shows it to a person: Old
// at line Line of the original (0 when the line is new), New in the changed
// script ("" when the line goes).
type LineChange struct {
	Line int    `json:"line,omitempty"`
	Old  string `json:"old,omitempty"`
	New  string `json:"new,omitempty"`
}

// Changes is the change v makes to the script, line by line: each changed
// line with its number, new lines, and lines that go. A rewrite touches a
// few header lines, so a longest-common-subsequence diff of the lines is
// exact and cheap.
func (s *Script) Changes(v Variant) ([]LineChange, error) {
	data, err := s.Rewrite(v)
	if err != nil {
		return nil, err
	}
	return diffLines(splitLines(string(s.Data)), splitLines(string(data))), nil
}

func splitLines(text string) []string {
	text = strings.TrimSuffix(strings.ReplaceAll(text, "\r\n", "\n"), "\n")
	if text == "" {
		return nil
	}
	return strings.Split(text, "\n")
}

// diffLines lists the lines of a that go and the lines of b that come.
func diffLines(a, b []string) []LineChange {
	// lcs[i][j]: the longest common subsequence of a[i:] and b[j:].
	lcs := make([][]int, len(a)+1)
	for i := range lcs {
		lcs[i] = make([]int, len(b)+1)
	}
	for i := len(a) - 1; i >= 0; i-- {
		for j := len(b) - 1; j >= 0; j-- {
			if a[i] == b[j] {
				lcs[i][j] = lcs[i+1][j+1] + 1
			} else {
				lcs[i][j] = max(lcs[i+1][j], lcs[i][j+1])
			}
		}
	}
	var out []LineChange
	var gone []int     // indexes into a, waiting for a partner
	var added []string // lines of b, likewise
	flush := func() {
		out = append(out, pairChanges(a, gone, added)...)
		gone, added = nil, nil
	}
	i, j := 0, 0
	for i < len(a) || j < len(b) {
		switch {
		case i < len(a) && j < len(b) && a[i] == b[j]:
			flush()
			i, j = i+1, j+1
		case j < len(b) && (i == len(a) || lcs[i][j+1] >= lcs[i+1][j]):
			added = append(added, b[j])
			j++
		default:
			gone = append(gone, i)
			i++
		}
	}
	flush()
	return out
}

// pairChanges turns one stretch of removed and added lines into changes: a
// removed and an added directive with the same option become one change
// ("line 3: old → new"); the others stay removals and additions.
func pairChanges(a []string, gone []int, added []string) []LineChange {
	var out []LineChange
	used := make([]bool, len(added))
	for _, i := range gone {
		c := LineChange{Line: i + 1, Old: a[i]}
		for k, text := range added {
			if !used[k] && directiveFlag(text) != "" && directiveFlag(text) == directiveFlag(a[i]) {
				c.New, used[k] = text, true
				break
			}
		}
		out = append(out, c)
	}
	// What is left at the same place: a directive that took another's
	// place (--gpus-per-node replaced by --gres).
	k := 0
	for i := range out {
		for k < len(added) && used[k] {
			k++
		}
		if out[i].New == "" && k < len(added) && directiveFlag(out[i].Old) != "" && directiveFlag(added[k]) != "" {
			out[i].New, used[k] = added[k], true
		}
	}
	for k, text := range added {
		if !used[k] {
			out = append(out, LineChange{New: text})
		}
	}
	return out
}

// directiveFlag is the option a "#SBATCH" line starts with: "--gres", "-t".
func directiveFlag(line string) string {
	rest, ok := strings.CutPrefix(line, directivePrefix)
	if !ok {
		return ""
	}
	flag, _, _ := strings.Cut(strings.TrimSpace(rest), " ")
	flag, _, _ = strings.Cut(flag, "=")
	return flag
}
