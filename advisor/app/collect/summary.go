package collect

import (
	"github.com/migadvisor/migadvisor/advisor/base/history"
	"github.com/migadvisor/migadvisor/internal/jsonlist"
)

// Summary is what a collect did, as it says it (collect --json).
type Summary struct {
	Source       string        `json:"source"` // sacct, the dump's file name, or "none"
	Read         int           `json:"jobs_read"`
	New          int           `json:"new"`
	Updated      int           `json:"updated"`
	Unchanged    int           `json:"unchanged"`
	Stubs        int           `json:"stubs"`
	Skipped      []SkippedLine `json:"skipped"` // the first 1,000
	SkippedTotal int           `json:"skipped_total"`
	// StepsAlone counts the jobs whose steps alone were read, their own
	// record skipped or not in the input: not among the jobs read.
	StepsAlone int `json:"steps_alone"`
	// Jobstats counts the jobs whose jobstats summary (AdminComment) was
	// read, JobstatsGPU those whose summary held GPU figures (a CPU job's
	// holds none); BadJobstats those whose could not be, the first named.
	Jobstats        int          `json:"jobstats"`
	JobstatsGPU     int          `json:"jobstats_gpu_figures"`
	BadJobstats     int          `json:"jobstats_unreadable"`
	BadJobstatsJobs []BadSummary `json:"jobstats_unreadable_jobs"`
	// UnplacedGPUTypes are the GPU types accounting named that the site
	// gives no profile (neither its own names nor NVIDIA's for its slices),
	// each with its jobs, the most first ("" an untyped GPU): those jobs
	// have no profile and no SU. UnplacedOtherJobs counts the jobs on types
	// past the first MaxUnplacedKept.
	UnplacedGPUTypes  []GPUTypeJobs  `json:"unplaced_gpu_types"`
	UnplacedOtherJobs int            `json:"unplaced_other_types_jobs,omitempty"`
	Outputs           OutputSummary  `json:"outputs"`
	Scripts           *ScriptsResult `json:"scripts,omitempty"` // with --scripts
	Window            *Window        `json:"window,omitempty"`  // when sacct selected jobs by time
	Refiled           []RefiledJobs  `json:"refiled,omitempty"` // jobs filed under a real cluster name
	// Linked counts the sbatch wrapper's submissions linked to their jobs
	// (recorded beside sbatch, without the id it printed); Unlinked those
	// dropped, accounting having had no job for them after a day.
	Linked   int `json:"wrapper_submissions_linked"`
	Unlinked int `json:"wrapper_submissions_dropped"`
	// Ambiguous counts those left unlinked as ambiguous (two or more equally
	// plausible, no stored script to tell them apart), for a later collect.
	Ambiguous int `json:"wrapper_submissions_ambiguous"`
	// StoredScriptsUnread is why the scripts slurmdbd stored could not be
	// read to pair those submissions with their jobs: they were paired by
	// time alone ("" when they were read, or none was needed).
	StoredScriptsUnread string `json:"stored_scripts_unread,omitempty"`
	// UnknownToSlurm are tracked ids Slurm has no job of (mistyped?).
	UnknownToSlurm []string `json:"unknown_to_slurm"`
	// SpoolSetAside are the sbatch wrapper's records this collect could not
	// read from the spool: renamed *.bad, their submissions not recorded.
	SpoolSetAside []history.SetAside `json:"spool_set_aside"`
	// Lacks is what a dump's fields lack of what the report and recommend need, and
	// what that costs its jobs.
	Lacks []MissingFields `json:"dump_lacks"`
	// Published is what --publish wrote.
	Published *PublishSummary `json:"published,omitempty"`
	// Store is what went to the site store.
	Store *StoreReport `json:"site_store,omitempty"`
}

// RefiledJobs counts the jobs filed under a fallback name that were found
// under the cluster's real name too, and are filed there now.
type RefiledJobs struct {
	From string `json:"from"`
	To   string `json:"to"`
	Jobs int    `json:"jobs"`
}

// BadSummary is a job whose jobstats summary could not be read.
type BadSummary struct {
	JobID  string `json:"job_id"`
	Reason string `json:"reason"`
}

// SkippedLine is a record of a dump that was skipped, and why.
type SkippedLine struct {
	Line   int    `json:"line"`
	Reason string `json:"reason"`
}

// OutputSummary is what the scan of the jobs' output files found.
type OutputSummary struct {
	Scanned   int      `json:"scanned"`
	Unchanged int      `json:"unchanged"`
	GPUOOMs   int      `json:"gpu_ooms"`
	HostOOMs  int      `json:"host_ooms"`
	Work      int      `json:"with_work"`
	Missing   []string `json:"missing"` // not said before
	// MissingBefore counts the jobs with no output file found that an
	// earlier collect said so of: not said again.
	MissingBefore int      `json:"missing_said_before"`
	Capped        []string `json:"capped"` // read at head and tail only
	GPUMemory     int      `json:"with_gpu_memory"`
	Unread        []string `json:"unread_summaries"`
	Emulated      int      `json:"emulated_runs"` // runs of emulation jobs (migadvisor emulate)
	// Predating are the jobs whose output file predates the job: another
	// job's of the same id, not read.
	Predating []string `json:"predating_their_job"`
	// UnreadDirs are the --outputs directories that could not be read.
	UnreadDirs []DirError `json:"unreadable_dirs"`
}

// SummaryOf is what a collect session did, as collect says it.
func SummaryOf(s SessionReport) Summary {
	res := s.Report
	acct, out := res.Accounting, res.Outputs
	rep := Summary{Source: res.Source, Read: acct.Total(), New: acct.New, Updated: acct.Updated, Unchanged: acct.Unchanged,
		Stubs: acct.Stubs, Lacks: jsonlist.NonNil(acct.Lacks), Skipped: []SkippedLine{}, SkippedTotal: acct.SkippedTotal, StepsAlone: acct.Partial, Scripts: res.Scripts, Window: res.Window,
		UnknownToSlurm: jsonlist.NonNil(res.UnknownToSlurm), SpoolSetAside: append([]history.SetAside{}, res.SetAside...),
		Outputs: OutputSummary{Scanned: out.Scanned, Unchanged: out.Unchanged, GPUOOMs: out.GPUOOMs, HostOOMs: out.HostOOMs, Work: out.Work,
			Missing: jsonlist.NonNil(out.Missing), MissingBefore: out.MissingBefore, Capped: jsonlist.NonNil(out.Capped), Predating: jsonlist.NonNil(out.Predating), GPUMemory: out.GPUMemory,
			Unread: jsonlist.NonNil(out.Unread), Emulated: out.Emulated, UnreadDirs: append([]DirError{}, out.UnreadDirs...)}}
	rep.Jobstats, rep.JobstatsGPU, rep.BadJobstats, rep.BadJobstatsJobs = acct.Jobstats, acct.JobstatsGPU, acct.BadJobstats, []BadSummary{}
	rep.UnplacedGPUTypes, rep.UnplacedOtherJobs = acct.UnplacedTypes(), acct.UnplacedMore
	for _, b := range acct.BadJobstatsJobs {
		rep.BadJobstatsJobs = append(rep.BadJobstatsJobs, BadSummary{b.JobID, b.Err})
	}
	for _, s := range acct.Skipped {
		rep.Skipped = append(rep.Skipped, SkippedLine{s.Line, s.Err.Error()})
	}
	for _, m := range res.Refiled {
		rep.Refiled = append(rep.Refiled, RefiledJobs{m.From, m.To, m.Jobs})
	}
	rep.Linked, rep.Unlinked, rep.Ambiguous, rep.StoredScriptsUnread = res.Linked, res.Unlinked, res.Ambiguous, res.ScriptsUnread
	rep.Store = s.Store
	if p := s.Published; p != nil {
		sum := p.Summary()
		rep.Published = &sum
	}
	return rep
}

// PublishSummary is what a publish wrote, as publish and collect --publish
// say it (--json).
type PublishSummary struct {
	Snapshot string `json:"snapshot"`
	Index    string `json:"index"`
	Scripts  int    `json:"scripts"`
	Runs     int    `json:"runs"`
	From     string `json:"from"` // the history published: a file, or "site store user@host:port/database"
}

// Summary is the publication as it is said.
func (p Publication) Summary() PublishSummary {
	return PublishSummary{Snapshot: p.Snapshot, Index: p.Index, Scripts: p.Scripts, Runs: p.Runs, From: p.From}
}
