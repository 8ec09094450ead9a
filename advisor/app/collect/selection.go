package collect

import "github.com/migadvisor/migadvisor/slurm"

// Selection is what one collect reads accounting for: a saved dump, the
// jobs the history tracks, or a selection of sacct by time and user.
type Selection struct {
	Dump  string // a saved dump ("-": stdin); "" runs sacct
	Query slurm.SacctQuery
	// Scripts links jobs no submission names to slurmdbd's stored scripts.
	Scripts bool
	// ScriptsFile is a saved file of `sacct --batch-script` output that
	// the scripts are read from instead of slurmdbd; "": none.
	ScriptsFile string
	// Own is the user a collect of the tracked jobs alone (no dump, no
	// --since) also reads the jobs of, from where their last collect by
	// time (collect --since) left off: sessions and jobs plain sbatch
	// submitted, which no submission tracks. "" reads the tracked jobs
	// alone, as does a user who never collected by time.
	Own string
}

// NewSelection applies collect's defaults to what the user named. A
// site-wide history (--all-users) links scripts unless told not to
// (scripts non-nil), as it needs them to know which jobs ran the same
// script. A selection by time alone is sacct's default, the user's own
// jobs, named (me), so that its watermark is that user's and not one
// shared with a later --all-users.
func NewSelection(dump string, q slurm.SacctQuery, scripts *bool, me string) Selection {
	s := Selection{Dump: dump, Query: q, Scripts: q.AllUsers}
	if scripts != nil {
		s.Scripts = *scripts
	}
	if !q.Since.IsZero() && !q.AllUsers && len(q.Users) == 0 && me != "" {
		s.Query.Users = []string{me}
	}
	if s.TrackedOnly() {
		s.Own = me
	}
	return s
}

// TrackedOnly reports whether the collect asks sacct about the tracked jobs
// alone: no dump, and no selection by time or user.
func (s Selection) TrackedOnly() bool {
	return s.Dump == "" && s.Query.Since.IsZero() && !s.Query.AllUsers && len(s.Query.Users) == 0
}
