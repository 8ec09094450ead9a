package session

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
	"github.com/migadvisor/migadvisor/internal/suggest"
	"github.com/migadvisor/migadvisor/slurm"
)

// Name is one job name a user's sessions took, as 'history --sessions'
// lists it: what 'recommend --session NAME' reads.
type Name struct {
	Name       string     `json:"session"`
	Sessions   int        `json:"sessions"`    // ended sessions of a GPU
	WithMemory int        `json:"with_memory"` // of them, those with a GPU memory figure or an OOM
	Profiles   []string   `json:"profiles"`    // the profiles they ran on, most used first
	LastEnded  *time.Time `json:"last_ended"`
	// Kind says what tells the jobs for sessions: KindOnDemand and
	// KindUnnamed by their name; KindNoScript only that no script is
	// linked to them (a session named with -J, or batch jobs submitted
	// without migadvisor: recommend --session judges them as sessions).
	Kind string `json:"kind"`
}

// The kinds of Name.
const (
	KindOnDemand = "ondemand"  // an Open OnDemand app's
	KindUnnamed  = "salloc"    // salloc's or srun --pty's name when -J is not given
	KindNoScript = "no-script" // linked to no script
)

// Names lists the names of the user's ended GPU sessions in the histories
// (own may be nil), each session once, the name ended last first.
func Names(ctx context.Context, user string, own *history.Store, siteWide ...*history.Store) ([]Name, error) {
	var recs []history.JobRecord
	for _, st := range append([]*history.Store{own}, siteWide...) {
		if st == nil {
			continue
		}
		more, err := st.History(ctx, history.HistoryFilter{User: user, GPU: true})
		if err != nil {
			return nil, fmt.Errorf("%s: sessions of %s: %w", st.Path(), user, err)
		}
		recs = append(recs, more...)
	}
	slices.SortStableFunc(recs, history.NewestFirst)
	byName := map[string]*Name{}
	uses := map[string]map[string]int{}
	var names []*Name
	for _, r := range onceEach(recs) {
		if !isSession(&r) || !ended(&r) || r.Name == "" {
			continue
		}
		n := byName[r.Name]
		if n == nil {
			n = &Name{Name: r.Name, Kind: kindOf(r.Name)}
			byName[r.Name], uses[r.Name] = n, map[string]int{}
			names = append(names, n)
		}
		n.Sessions++
		if measured(&r) {
			n.WithMemory++
		}
		if r.End != nil && (n.LastEnded == nil || r.End.After(*n.LastEnded)) {
			n.LastEnded = r.End
		}
		profile := r.Profile
		if profile == "" {
			profile = r.GPUType
		}
		uses[r.Name][profile]++
	}
	out := make([]Name, 0, len(names))
	for _, n := range names {
		for p := range uses[n.Name] {
			n.Profiles = append(n.Profiles, p)
		}
		slices.SortFunc(n.Profiles, func(a, b string) int {
			return cmp.Or(cmp.Compare(uses[n.Name][b], uses[n.Name][a]), strings.Compare(a, b))
		})
		out = append(out, *n)
	}
	slices.SortStableFunc(out, func(a, b Name) int { return cmp.Compare(unixOf(b.LastEnded), unixOf(a.LastEnded)) })
	return out, nil
}

func kindOf(name string) string {
	switch {
	case OnDemand(name):
		return KindOnDemand
	case slices.Contains(unnamedSessions, name):
		return KindUnnamed
	}
	return KindNoScript
}

func unixOf(t *time.Time) int64 {
	if t == nil {
		return 0
	}
	return t.Unix()
}

// Suggest names the sessions a mistyped name may have meant, nearest
// first, at most three.
func Suggest(typed string, names []Name) []string {
	var known []string
	for _, n := range names {
		known = append(known, n.Name)
	}
	return suggest.Names(typed, known, 3)
}

// WriteNames writes the names as 'history --sessions' lists them, and
// what to run with one: the newest a name tells for a session.
func WriteNames(w io.Writer, names []Name) {
	t := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	fmt.Fprintln(t, "SESSION\tSESSIONS\tWITH MEMORY\tPROFILES\tLAST ENDED\tKIND")
	noScript := false
	for _, n := range names {
		last := "-"
		if n.LastEnded != nil {
			last = n.LastEnded.Local().Format("2006-01-02 15:04")
		}
		kind := map[string]string{KindOnDemand: "Open OnDemand", KindUnnamed: "salloc/srun", KindNoScript: "no script *"}[n.Kind]
		noScript = noScript || n.Kind == KindNoScript
		fmt.Fprintf(t, "%s\t%d\t%d\t%s\t%s\t%s\n", n.Name, n.Sessions, n.WithMemory, strings.Join(n.Profiles, ","), last, kind)
	}
	t.Flush()
	if noScript {
		fmt.Fprintln(w, "* linked to no script: a session named with -J, or batch jobs submitted without migadvisor's wrapper, which recommend --session judges as sessions")
	}
	if len(names) > 0 {
		// The newest known for a session by its name, else the newest.
		next := max(0, slices.IndexFunc(names, func(n Name) bool { return n.Kind != KindNoScript }))
		fmt.Fprintf(w, "next: migadvisor recommend --session %s\n", slurm.ShellWord(names[next].Name))
	}
}
