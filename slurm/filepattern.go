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
// (%j %J %A %a %x %u %N %n %s %t %%, with an optional zero-padding width
// such as %4a, at most 10) the way slurmstepd of Slurm 22.05 names a batch
// job's files (seen on the dev cluster): the batch step's %J is the job id
// alone, %s is "batch", %n and %t are 0, %a of a job that is not an array
// task is 4294967294, and a symbol it does not know (%b, %q) stays as it is.
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
			b.WriteString(pad(j.JobID)) // jobid.stepid, but the batch step is left out
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
		case 'n', 't':
			b.WriteString(pad("0"))
		case 's':
			b.WriteString("batch")
		default:
			b.WriteString(pattern[i : k+1])
		}
		i = k
	}
	return b.String()
}

// FirstHost is the first node of a Slurm host list ("gpu[03-04,07],n1" →
// "gpu03"): the node a batch step runs on, %N. "" when the list names none
// ("None assigned").
func FirstHost(list string) string {
	var b strings.Builder
	for i := 0; i < len(list); i++ {
		switch c := list[i]; c {
		case ',':
			return b.String()
		case ' ':
			return ""
		case '[':
			end := strings.IndexByte(list[i:], ']')
			if end < 0 {
				return ""
			}
			inner := list[i+1 : i+end]
			first, _, _ := strings.Cut(inner, ",")
			first, _, _ = strings.Cut(first, "-")
			b.WriteString(first)
			i += end
		default:
			b.WriteByte(c)
		}
	}
	return b.String()
}

// OutputFiles are where a batch script sends its standard output and error,
// as sbatch reads its directives: patterns for ExpandFilePattern, relative
// to the job's working directory unless absolute.
type OutputFiles struct {
	Stdout string // --output, or Slurm's default: slurm-%j.out, slurm-%A_%a.out for an array
	Stderr string // --error; "" when it goes to Stdout's file
	// The lines of the --output and --error directives, 0 for the default.
	StdoutLine, StderrLine int
}

// OutputFiles reads the script's --output and --error (the last of each,
// -o and -e included).
func (s *Script) OutputFiles() OutputFiles {
	var f OutputFiles
	if o := s.LastOption("output"); o != nil && o.Value != "" {
		f.Stdout, f.StdoutLine = o.Value, o.Line
	} else if s.LastOption("array") != nil {
		f.Stdout = "slurm-%A_%a.out"
	} else {
		f.Stdout = "slurm-%j.out"
	}
	if e := s.LastOption("error"); e != nil && e.Value != "" {
		f.Stderr, f.StderrLine = e.Value, e.Line
	}
	return f
}
