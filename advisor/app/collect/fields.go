package collect

import "slices"

// MissingFields are sacct fields a dump lacks that the report and
// recommend read of a job, and what their lack costs its jobs.
type MissingFields struct {
	Fields []string `json:"fields"`
	Cost   string   `json:"cost"`
}

// fieldNeed is a fact of a job the report and recommend read: which
// of its fields a dump lacks (none: the dump gives it), and what a job
// without it costs.
type fieldNeed struct {
	lacks func(has func(field string) bool) []string
	cost  string
}

// fieldNeeds are what a job must carry to be judged, in the order they
// are said.
var fieldNeeds = []fieldNeed{
	{absent("End"), "without End a job is in no period's report"},
	{absent("State"), "without State a job never counts as ended"},
	{absentAll("AllocTRES", "ReqTRES"), "without AllocTRES a job's GPU is unknown"},
	{runTimeAbsent, "without ElapsedRaw a job's SU is unknown"},
	{absent("User"), "without User a job is judged with other users' jobs of its name and no one is told"},
	{absent("Submit", "Start"), "without Submit or Start a job's queue wait is unknown"},
}

// Lacking is what a dump with the fields has lacks of what the report and
// recommend need, in the order it is said; none where it lacks nothing.
func Lacking(has func(field string) bool) []MissingFields {
	var out []MissingFields
	for _, n := range fieldNeeds {
		if fields := n.lacks(has); len(fields) > 0 {
			out = append(out, MissingFields{fields, n.cost})
		}
	}
	return out
}

// absent is a need of every one of fields: those the dump lacks.
func absent(fields ...string) func(has func(string) bool) []string {
	return func(has func(string) bool) []string {
		return slices.DeleteFunc(slices.Clone(fields), has)
	}
}

// absentAll is a need any one of fields meets (slurm.SacctReader reads
// the others where the first is missing): the first, where none is there.
func absentAll(fields ...string) func(has func(string) bool) []string {
	return func(has func(string) bool) []string {
		if slices.ContainsFunc(fields, has) {
			return nil
		}
		return fields[:1]
	}
}

// runTimeAbsent is the need of a job's run time: ElapsedRaw, Elapsed, or
// Start and End, from which slurm.SacctReader takes it.
func runTimeAbsent(has func(string) bool) []string {
	if has("ElapsedRaw") || has("Elapsed") || has("Start") && has("End") {
		return nil
	}
	return []string{"ElapsedRaw"}
}
