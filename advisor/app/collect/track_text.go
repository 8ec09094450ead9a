package collect

import (
	"fmt"
	"maps"
	"path/filepath"
	"slices"
	"strings"

	"github.com/migadvisor/migadvisor/internal/jsonlist"
	"github.com/migadvisor/migadvisor/internal/textutil"
)

// Confirmation says what was tracked and what comes next.
func (r TrackResult) Confirmation() string {
	return fmt.Sprintf("tracking %s as %s (fingerprint %s); 'migadvisor collect' gathers their evidence",
		textutil.Plural(len(r.JobIDs), "job"), filepath.Base(r.Script), r.Fingerprint)
}

// Warnings are the sentences that say what may keep the tracked jobs from
// counting as meant: output not read, jobs not in the history yet (a
// recommendation made now would not see them), ids the history holds as
// different jobs of several clusters (it may count the wrong one) and ids
// Slurm has no job of.
func (r TrackResult) Warnings() []string {
	var say []string
	for _, a := range r.SetAside {
		say = append(say, SetAsideSentence(a))
	}
	if r.OutputUnread != nil {
		say = append(say, fmt.Sprintf("the jobs are tracked, but their output was not read: %v; 'migadvisor collect' reads it", r.OutputUnread))
	}
	switch missing := r.NotInHistory; len(missing) {
	case 0:
	case 1:
		say = append(say, fmt.Sprintf("job %s is not in the history yet: run 'migadvisor collect' after it ends", missing[0]))
	default:
		say = append(say, fmt.Sprintf("jobs %s are not in the history yet: run 'migadvisor collect' after they end", strings.Join(missing, ", ")))
	}
	for _, id := range slices.Sorted(maps.Keys(r.Ambiguous)) {
		say = append(say, r.Ambiguous[id].warning(id))
	}
	if len(r.UnknownToSlurm) > 0 {
		say = append(say, NoSuchJob(r.UnknownToSlurm))
	}
	return say
}

// warning says that job id is in the history as different jobs, and what
// to do about it.
func (a AmbiguousJob) warning(id string) string {
	what := "track it again with --cluster and the one it ran on"
	if a.LinkedTo != "" {
		other := "the other"
		if len(a.Clusters) > 2 {
			other = "another"
		}
		what = fmt.Sprintf("it counts as %s's; if it ran on %s, track it again with --cluster and its name", a.LinkedTo, other)
	}
	return fmt.Sprintf("job %s is in the history under clusters %s, as different jobs: %s", id, textutil.JoinAnd(a.Clusters), what)
}

// TrackReport is what track says in JSON.
type TrackReport struct {
	Script         string              `json:"script"`
	Fingerprint    string              `json:"fingerprint"`
	Cluster        string              `json:"cluster"`
	JobIDs         []string            `json:"job_ids"`
	NotInHistory   []string            `json:"not_in_history"`   // no accounting record yet
	UnknownToSlurm []string            `json:"unknown_to_slurm"` // neither sacct nor squeue knows them
	Ambiguous      map[string][]string `json:"ambiguous"`        // job id -> the clusters that hold it as different jobs; {} for none
}

// Report is r as track says it in JSON.
func (r TrackResult) Report() TrackReport {
	// Every key is there, empty where there is nothing to say, as the
	// documentation lists them: a script need not test for a missing one.
	rep := TrackReport{Script: r.Script, Fingerprint: r.Fingerprint, Cluster: r.Cluster, JobIDs: r.JobIDs,
		NotInHistory: jsonlist.NonNil(r.NotInHistory), UnknownToSlurm: jsonlist.NonNil(r.UnknownToSlurm),
		Ambiguous: make(map[string][]string, len(r.Ambiguous))}
	for id, a := range r.Ambiguous {
		rep.Ambiguous[id] = a.Clusters
	}
	return rep
}

// NotInAccountingYet says that n submissions through the sbatch wrapper
// are not linked to their jobs (FindSubmitted's waiting) because slurmdbd
// has no job of theirs yet.
func NotInAccountingYet(n int) string {
	return fmt.Sprintf("%s through the sbatch wrapper not in Slurm's accounting yet", textutil.Plural(n, "submission"))
}
