package session

import (
	"context"
	"fmt"
	"slices"
	"strings"

	"github.com/migadvisor/migadvisor/advisor/base/history"
	"github.com/migadvisor/migadvisor/advisor/base/memory"
	"github.com/migadvisor/migadvisor/catalog"
	"github.com/migadvisor/migadvisor/internal/textutil"
	"github.com/migadvisor/migadvisor/slurm"
)

// DefaultLast is how many of the newest sessions the advice weighs: what a
// user did lately, not a year of habits.
const DefaultLast = 10

// Request says whose sessions to judge, and where.
type Request struct {
	Name string // the job name the sessions take (sys/dashboard/sys/jupyter, interactive)
	User string // whose sessions: in a site-wide history every user's jobs are
	Site *catalog.Site
	// Last is how many of the newest sessions weigh; 0: DefaultLast.
	Last int
	// Read names the histories read, for a sentence that says none has a
	// session (Advise fills it in); "": "the histories read".
	Read string
	// Asking is the session being asked for now (salloc or srun, in the
	// cli_filter), priced and compared in place of the newest past one;
	// nil: the newest past session's request.
	Asking *Asking
}

// Asking is what a session asks for: the request the advice prices per
// hour and names as asked.
type Asking struct {
	Profile, Partition, QoS string
	CPUs                    int     // 0 counts as 1
	MemMiB                  float64 // 0: the partition's default memory per CPU
}

// Advise reads the sessions of the request's user and name in the user's
// history (nil: none yet) and the site-wide ones, a job both hold once,
// and judges them.
func Advise(ctx context.Context, req Request, own *history.Store, siteWide ...*history.Store) (*Advice, error) {
	req.Read = "no history (there is none yet)"
	if own != nil || len(siteWide) > 0 {
		req.Read = history.Describe(own, siteWide)
	}
	var recs []history.JobRecord
	for _, st := range append([]*history.Store{own}, siteWide...) {
		if st == nil {
			continue
		}
		more, err := st.History(ctx, history.HistoryFilter{Named: []history.UserJobName{{User: req.User, Name: req.Name}}})
		if err != nil {
			return nil, fmt.Errorf("sessions named %s: %w", req.Name, err)
		}
		recs = append(recs, more...)
	}
	slices.SortStableFunc(recs, history.NewestFirst)
	a := Judge(req, onceEach(recs))
	if a.Found == 0 && own != nil {
		// A mistyped name: the names of the user's own sessions, a look
		// through their own history; the site's, every user's jobs, would
		// cost an Open OnDemand form that asks for a user with none a scan.
		names, err := Names(ctx, req.User, own)
		if err != nil {
			return nil, err
		}
		a.suggest(names)
	}
	return a, nil
}

// suggest names, where the advice found no session of its name, the names
// of the user's sessions it may have meant, and where to see them all.
func (a *Advice) suggest(names []Name) {
	if len(names) == 0 {
		return
	}
	a.DidYouMean = Suggest(a.Session, names)
	if len(a.DidYouMean) == 0 {
		a.Why += fmt.Sprintf("; your sessions took %s, none like it: 'migadvisor history --sessions' lists them",
			textutil.Plural(len(names), "other name"))
		return
	}
	var near []string
	for _, s := range a.DidYouMean {
		i := slices.IndexFunc(names, func(n Name) bool { return n.Name == s })
		near = append(near, fmt.Sprintf("%s (%s)", s, textutil.Plural(names[i].Sessions, "session")))
	}
	a.Why = strings.TrimSuffix(a.Why, ": "+collectSessions) + ": did you mean " + strings.Join(near, " or ") +
		"? 'migadvisor history --sessions' lists the names of yours"
}

// OnDemand reports whether a job name is an Open OnDemand interactive
// app's: sys/dashboard/sys/jupyter, ondemand/sys/dashboard/sys/..., or a
// sandbox app's sys/dashboard/dev/....
func OnDemand(name string) bool { return strings.Contains(name, "sys/dashboard/") }

// slurmdbdScript marks a submission collect --scripts made from the batch
// script slurmdbd stored for a job (advisor/app/collect's linkedPrefix).
const slurmdbdScript = "sacct:"

// isSession reports whether a job of the name is a session: one no script
// the user submitted is linked to. An OnDemand job linked through the
// script slurmdbd stored is one too: the app writes a script per session,
// which a site-wide collect --scripts links as if it were a batch job's.
func isSession(r *history.JobRecord) bool {
	return r.Fingerprint == "" || OnDemand(r.Name) && strings.HasPrefix(r.Script, slurmdbdScript)
}

// unnamedSessions are the names Slurm gives a session started without
// -J: salloc's, and srun --pty's, after the shell it runs.
var unnamedSessions = []string{"interactive", "bash", "sh", "zsh", "tcsh", "csh", "ksh", "fish"}

// IsInteractive reports whether a job is known to be a session without
// anyone naming it (recommend --session is given the name; the admins'
// report is not): a session by isSession's rule that is an Open OnDemand
// app's, or named as salloc and srun --pty name theirs when no -J is
// given. A session named with -J is not told apart from a batch job whose
// script slurmdbd did not keep, so it is judged as that.
func IsInteractive(r *history.JobRecord) bool {
	return isSession(r) && (OnDemand(r.Name) || slices.Contains(unnamedSessions, r.Name))
}

// ended reports whether the session is over, with the record of its end.
func ended(r *history.JobRecord) bool { return !r.Stub && slurm.TerminalState(r.State) }

// onceEach keeps one record of each job that several histories hold (its
// id and submit time), the one with more evidence, in order.
func onceEach(recs []history.JobRecord) []history.JobRecord {
	type identity struct {
		key    string
		submit int64
	}
	at := map[identity]int{}
	var out []history.JobRecord
	for _, r := range recs {
		id := identity{key: r.Key}
		if r.Submit != nil {
			id.submit = r.Submit.Unix()
		} else {
			id.key = r.Cluster + "/" + r.Key
		}
		i, dup := at[id]
		switch {
		case !dup:
			at[id] = len(out)
			out = append(out, r)
		case evidence(&r) > evidence(&out[i]):
			out[i] = r
		}
	}
	return out
}

// evidence weighs what a record tells of the GPU memory.
func evidence(r *history.JobRecord) int {
	w := len(r.GPUMemPeaks())
	if r.GPUOOM != "" {
		w++
	}
	if r.OutputPath != "" {
		w++
	}
	return w
}

// measured reports whether a session says anything of its GPU memory: a
// peak, the framework's allocated peak, or an out-of-memory error.
func measured(r *history.JobRecord) bool {
	return r.GPUMemPeakMiB() != nil || r.GPUOOM != "" || r.Metrics[slurm.AllocatedMetric] > 0
}

// heldItsWork reports whether a session ended without running out of GPU
// memory after it ran with a memory figure: what a script's completed run
// proves. A session ends at its time limit or when its user ends it, and
// without a figure its end says nothing: it may have run nothing.
func heldItsWork(r *history.JobRecord) bool {
	if r.GPUOOM != "" || r.Start == nil || r.GPUMemPeakMiB() == nil {
		return false
	}
	return r.State == "COMPLETED" || r.State == "TIMEOUT" || strings.HasPrefix(r.State, "CANCELLED")
}

// memoryRuns are the sessions as advisor/base/memory's rules read them: what
// held the memory from the software any session's output showed (a
// session's own settings over none), as a script's runs are read.
func memoryRuns(site *catalog.Site, sessions []history.JobRecord) []memory.Run {
	var seen []memory.Software
	for _, r := range sessions {
		for _, name := range memory.SoftwareOfRecord(r.Versions, r.GPUOOM) {
			if !slices.ContainsFunc(seen, func(s memory.Software) bool { return s.Name == name }) {
				seen = append(seen, memory.Software{Name: name, Why: fmt.Sprintf("session %s's output shows %s", r.JobID, name)})
			}
		}
	}
	var runs []memory.Run
	for _, r := range sessions {
		p, ok := site.Profile(r.Profile)
		if !ok || !measured(&r) {
			continue
		}
		run := memory.Run{Profile: r.Profile, UsableMiB: p.UsableMemory.MiB(), Completed: heldItsWork(&r), GPUOOM: r.GPUOOM != "",
			NeedMiB: orNone(r.GPUNeedMiB), PeakMiB: orNone(r.GPUMemPeakMiB()), PeakSource: r.GPUMemSource(), AllocatedMiB: -1,
			Holder: memory.HolderOf(seen, r.Settings)}
		if v := r.Metrics[slurm.AllocatedMetric]; v > 0 {
			run.AllocatedMiB = v
		}
		runs = append(runs, run)
	}
	return runs
}

// orNone is a figure as memory.Run holds it: < 0 when unknown.
func orNone(v *float64) float64 {
	if v == nil {
		return -1
	}
	return *v
}
