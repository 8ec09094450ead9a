package joblist

import (
	"cmp"
	"context"
	"fmt"
	"io"
	"slices"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/migadvisor/migadvisor/advisor/base/history"
	"github.com/migadvisor/migadvisor/slurm"
)

// ScriptEntry is a script the histories link a user's jobs to, as
// 'history --scripts' lists it: what 'recommend JOB.sh' and 'history
// JOB.sh' find runs of.
type ScriptEntry struct {
	// Path is where the script was last seen; for a script known from the
	// copy slurmdbd stored (a site's collect), sacct:CLUSTER/JOBID.
	Path        string     `json:"path"`
	Fingerprint string     `json:"fingerprint"`
	JobName     string     `json:"job_name"` // its newest job's
	Jobs        int        `json:"jobs"`     // each job once, a probe's variants too
	Profiles    []string   `json:"profiles"` // the profiles its jobs ran on, most used first
	LastSubmit  *time.Time `json:"last_submit"`
	History     string     `json:"history"` // own or site: the first history read that links it
}

// slurmdbdCopy begins the path of a script known from slurmdbd's copy.
const slurmdbdCopy = "sacct:"

// Scripts lists the scripts the histories (own may be nil) link the user's
// jobs to, the one submitted last first.
func Scripts(ctx context.Context, user string, own *history.Store, siteWide ...*history.Store) ([]ScriptEntry, error) {
	byFP := map[string]*ScriptEntry{}
	uses := map[string]map[string]int{}
	seen := map[[2]string]bool{}
	var order []string
	for i, st := range append([]*history.Store{own}, siteWide...) {
		if st == nil {
			continue
		}
		recs, err := st.History(ctx, history.HistoryFilter{User: user, Tracked: true})
		if err != nil {
			return nil, fmt.Errorf("%s: scripts of %s: %w", st.Path(), user, err)
		}
		for _, r := range recs {
			if r.Fingerprint == "" || seen[[2]string{r.Cluster, r.Key}] {
				continue
			}
			seen[[2]string{r.Cluster, r.Key}] = true
			e := byFP[r.Fingerprint]
			if e == nil {
				path, err := st.ScriptPath(ctx, r.Fingerprint)
				if err != nil {
					return nil, err
				}
				e = &ScriptEntry{Path: path, Fingerprint: r.Fingerprint, History: map[bool]string{true: "own", false: "site"}[i == 0]}
				byFP[r.Fingerprint], uses[r.Fingerprint] = e, map[string]int{}
				order = append(order, r.Fingerprint)
			}
			e.Jobs++
			if r.Submit != nil && (e.LastSubmit == nil || r.Submit.After(*e.LastSubmit)) {
				e.LastSubmit, e.JobName = r.Submit, r.Name
			} else if e.JobName == "" {
				e.JobName = r.Name
			}
			profile := r.Profile
			if profile == "" {
				profile = r.GPUType
			}
			if profile != "" {
				uses[r.Fingerprint][profile]++
			}
		}
	}
	out := make([]ScriptEntry, 0, len(order))
	for _, fp := range order {
		e := byFP[fp]
		e.Profiles = []string{}
		for p := range uses[fp] {
			e.Profiles = append(e.Profiles, p)
		}
		slices.SortFunc(e.Profiles, func(a, b string) int { return cmp.Or(cmp.Compare(uses[fp][b], uses[fp][a]), strings.Compare(a, b)) })
		out = append(out, *e)
	}
	slices.SortStableFunc(out, func(a, b ScriptEntry) int { return cmp.Compare(unix(b.LastSubmit), unix(a.LastSubmit)) })
	return out, nil
}

func unix(t *time.Time) int64 {
	if t == nil {
		return 0
	}
	return t.Unix()
}

// WriteScripts writes the scripts as 'history --scripts' lists them, and
// what to run with one.
func WriteScripts(w io.Writer, scripts []ScriptEntry) {
	t := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	fmt.Fprintln(t, "SCRIPT\tJOB NAME\tJOBS\tPROFILES\tLAST SUBMITTED\tHISTORY")
	copies := false
	for _, s := range scripts {
		last, profiles := "-", strings.Join(s.Profiles, ",")
		if s.LastSubmit != nil {
			last = s.LastSubmit.Local().Format("2006-01-02 15:04")
		}
		if profiles == "" {
			profiles = "-"
		}
		copies = copies || strings.HasPrefix(s.Path, slurmdbdCopy)
		fmt.Fprintf(t, "%s\t%s\t%d\t%s\t%s\t%s\n", s.Path, s.JobName, s.Jobs, profiles, last, s.History)
	}
	t.Flush()
	if copies {
		fmt.Fprintln(w, "sacct:CLUSTER/JOB: known from the copy of that job's script slurmdbd stored, not from a file: recommend the file you submitted")
	}
	for _, s := range scripts {
		if s.Path != "" && !strings.HasPrefix(s.Path, slurmdbdCopy) {
			fmt.Fprintf(w, "next: migadvisor recommend %s\n", slurm.ShellWord(s.Path))
			break
		}
	}
}
