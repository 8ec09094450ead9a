package slurm

import (
	"fmt"
	"strconv"
	"strings"
)

// PatternJob is what ExpandFilePattern substitutes.
type PatternJob struct {
	JobID    string // %j: the job's own id (JobIDRaw)
	ArrayJob string // %A: the array's master id
	TaskID   string // %a: the array task id
	Name     string // %x
	User     string // %u
	Node     string // %N: the first node
}

// ExpandFilePattern expands sbatch's --output/--error replacement symbols
// (%j %J %A %a %x %u %N %s %t %%, with an optional zero-padding width such as
// %4a) the way slurmstepd names a batch job's files. Symbols it cannot know
// (%n, %t of other steps) become what the batch step uses: 0.
func ExpandFilePattern(pattern string, j PatternJob) string {
	if !strings.Contains(pattern, "%") {
		return pattern
	}
	if strings.Contains(pattern, `\`) {
		// sbatch: a backslash anywhere turns off every replacement symbol.
		return strings.ReplaceAll(pattern, `\`, "")
	}
	var b strings.Builder
	for i := 0; i < len(pattern); i++ {
		c := pattern[i]
		if c != '%' || i+1 >= len(pattern) {
			b.WriteByte(c)
			continue
		}
		k := i + 1
		for k < len(pattern) && pattern[k] >= '0' && pattern[k] <= '9' {
			k++
		}
		if k >= len(pattern) {
			b.WriteString(pattern[i:])
			break
		}
		width, _ := strconv.Atoi(pattern[i+1 : k])
		pad := func(v string) string {
			if n, err := strconv.Atoi(v); err == nil && width > 0 {
				return fmt.Sprintf("%0*d", min(width, 10), n)
			}
			return v
		}
		switch pattern[k] {
		case '%':
			b.WriteByte('%')
		case 'j':
			b.WriteString(pad(j.JobID))
		case 'J':
			b.WriteString(pad(j.JobID) + ".batch")
		case 'A':
			if j.TaskID == "" {
				b.WriteString(pad(j.JobID))
			} else {
				b.WriteString(pad(j.ArrayJob))
			}
		case 'a':
			if j.TaskID == "" {
				b.WriteString(pad("4294967294")) // NO_VAL, what Slurm prints for a non-array job
			} else {
				b.WriteString(pad(j.TaskID))
			}
		case 'x':
			b.WriteString(j.Name)
		case 'u':
			b.WriteString(j.User)
		case 'N':
			b.WriteString(j.Node)
		case 'n', 't', 's':
			b.WriteString(pad("0"))
		default:
			b.WriteString(pattern[i : k+1])
		}
		i = k
	}
	return b.String()
}
