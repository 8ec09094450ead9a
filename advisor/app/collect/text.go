package collect

import (
	"fmt"
	"io"
	"strings"

	"github.com/migadvisor/migadvisor/advisor/base/history"
	"github.com/migadvisor/migadvisor/internal/textutil"
	"github.com/migadvisor/migadvisor/slurm"
)

// WriteText says what a collect did, a line for each thing it read or
// changed: accounting, what it could not place, jobstats, the window,
// the wrapper's submissions, scripts, job output, the site store and the
// publication.
func (rep Summary) WriteText(w io.Writer) {
	rep.writeAccounting(w)
	rep.writeLacks(w)
	rep.writeUnplaced(w)
	rep.writeJobstats(w)
	if rep.Window != nil {
		rep.Window.writeText(w)
	}
	if len(rep.UnknownToSlurm) > 0 {
		fmt.Fprintln(w, NoSuchJob(rep.UnknownToSlurm))
	}
	rep.writeSubmissions(w)
	if s := rep.Scripts; s != nil {
		s.writeText(w)
	}
	rep.Outputs.writeText(w)
	switch {
	case rep.Store != nil && rep.Store.Changes == 0:
		fmt.Fprintf(w, "site store: %s already had everything\n", rep.Store.Store)
	case rep.Store != nil:
		fmt.Fprintf(w, "site store: %s written or deleted in %s\n", textutil.Plural(rep.Store.Changes, "row"), rep.Store.Store)
	}
	if rep.Published != nil {
		rep.Published.WriteText(w)
	}
}

// writeAccounting counts the jobs read from accounting, by what became of
// them, and the records that could not be read.
func (rep Summary) writeAccounting(w io.Writer) {
	switch {
	case rep.Source == SourceNone:
		fmt.Fprintln(w, "accounting: no tracked job is waiting for its record")
		return
	case rep.Source != SourceSacct && rep.Read == 0 && rep.StepsAlone == 0 && rep.SkippedTotal == 0:
		fmt.Fprintf(w, "accounting (%s): the dump holds no job\n", rep.Source)
		return
	}
	fmt.Fprintf(w, "accounting (%s): %s: %d new, %d updated, %d unchanged", rep.Source, textutil.Plural(rep.Read, "job"),
		rep.New, rep.Updated, rep.Unchanged)
	if rep.Stubs > 0 {
		fmt.Fprintf(w, ", %d still a placeholder record (run collect again in a few seconds)", rep.Stubs)
	}
	if n := rep.StepsAlone; n > 0 {
		fmt.Fprintf(w, "; the steps alone of %s whose own record was skipped or is not in the input", textutil.Plural(n, "more job"))
	}
	if n := rep.SkippedTotal; n > 0 {
		fmt.Fprintf(w, "; %s skipped", textutil.Plural(n, "record"))
	}
	fmt.Fprintln(w)
}

// writeLacks says, in one sentence, which fields the report and
// recommend need that the dump lacks, what their lack costs its jobs, and how to save a dump
// with them.
func (rep Summary) writeLacks(w io.Writer) {
	if len(rep.Lacks) == 0 {
		return
	}
	var fields, costs []string
	for _, l := range rep.Lacks {
		fields = append(fields, l.Fields...)
		costs = append(costs, l.Cost)
	}
	fmt.Fprintf(w, "the dump lacks %s, which the report and recommend need: %s (collect --help shows the sacct command that saves every field it reads)\n",
		textutil.JoinAnd(fields), strings.Join(costs, ", "))
}

// SetAsideSentence says that a record of the sbatch wrapper's could not
// be read from the spool (why), and where it is kept: its submission is
// not in the history, and nothing else will say so.
func SetAsideSentence(a history.SetAside) string {
	if !strings.HasSuffix(a.File, ".bad") {
		return fmt.Sprintf("a record of the sbatch wrapper's could not be read: %s (%s): its submission is not in the history", a.File, a.Reason)
	}
	return fmt.Sprintf("a record of the sbatch wrapper's could not be read (%s): set aside as %s, its submission not in the history", a.Reason, a.File)
}

// UnreadDirSentence says that an --outputs directory could not be read,
// and why: its jobs' files were not looked for there.
func UnreadDirSentence(d DirError) string {
	return fmt.Sprintf("--outputs %s could not be read (%s): no output file was looked for there", d.Dir, d.Reason)
}

// StoredScriptsUnread says that the scripts slurmdbd stored could not be
// read (why), so the sbatch wrapper's submissions were paired with their
// jobs by time alone: a pair time cannot decide waits for a later collect.
func StoredScriptsUnread(why string) string {
	return "the scripts slurmdbd stored could not be read (" + why + "), so the sbatch wrapper's submissions were paired " +
		"with their jobs by time alone; those time cannot tell apart wait for a later collect"
}

// writeText says how many jobs were linked to slurmdbd's scripts, and of
// those with none, the batch jobs whose script it did not store apart from
// salloc's and srun's allocations, which never have one.
func (s ScriptsResult) writeText(w io.Writer) {
	from := "slurmdbd"
	if s.From != "" {
		from = s.From
	}
	fmt.Fprintf(w, "scripts: %s linked from %s", textutil.Plural(s.Linked, "job"), from)
	switch {
	case s.Missing > 0 && s.From != "":
		fmt.Fprintf(w, ", %d it shows as NONE (batch jobs that ran before AccountingStoreFlags=job_script was set, "+
			"or salloc and srun allocations, which never have a script: a file of scripts cannot tell them apart)", s.Missing)
	case s.Missing > 0 && s.KindsUnread != "":
		fmt.Fprintf(w, ", %d without a stored script (AccountingStoreFlags=job_script? or salloc and srun allocations, which never have one: "+
			"sacct could not tell them apart: %s)", s.Missing, s.KindsUnread)
	case s.Missing == 1:
		fmt.Fprint(w, ", 1 batch job without a stored script (AccountingStoreFlags=job_script?)")
	case s.Missing > 1:
		fmt.Fprintf(w, ", %d batch jobs without a stored script (AccountingStoreFlags=job_script?)", s.Missing)
	}
	if s.Unmatched > 0 {
		fmt.Fprintf(w, ", %s in it naming no GPU job of the history that has none linked (CPU-only jobs, jobs of another dump, "+
			"or jobs linked or found without a script already)", textutil.Plural(s.Unmatched, "script"))
	}
	if s.Ambiguous > 0 {
		fmt.Fprintf(w, ", %s left unlinked: the history holds their ids under two cluster names, and the file names none",
			textutil.Plural(s.Ambiguous, "job"))
	}
	if s.Unshown > 0 {
		fmt.Fprintf(w, ", %s sacct --batch-script said nothing of: slurmdbd shows another user's script only to root, SlurmUser, "+
			"Slurm's operators and the account's coordinators, and none of a job it no longer holds", textutil.Plural(s.Unshown, "job"))
	}
	switch {
	case s.Allocations == 1:
		fmt.Fprint(w, "; 1 salloc or srun allocation, which has no batch script")
	case s.Allocations > 1:
		fmt.Fprintf(w, "; %d salloc or srun allocations, which have no batch script", s.Allocations)
	}
	switch {
	case s.NeverStarted == 1:
		fmt.Fprint(w, "; 1 job that never started, whose script slurmdbd does not store")
	case s.NeverStarted > 1:
		fmt.Fprintf(w, "; %d jobs that never started, whose scripts slurmdbd does not store", s.NeverStarted)
	}
	fmt.Fprintln(w)
}

// NoSuchJob says that Slurm has never seen the jobs ids (neither its queue
// nor its accounting).
func NoSuchJob(ids []string) string {
	were := "were the ids mistyped?"
	if len(ids) == 1 {
		were = "was the id mistyped?"
	}
	return "Slurm has no " + textutil.JobsNamed(ids, 0) + ": " + were
}

// unplacedShown bounds the GPU types collect names in its summary; --json
// lists them all.
const unplacedShown = 10

// writeUnplaced names the GPU types accounting gave that the site has no
// profile for, with their jobs, and what to add to the site file: those
// jobs have no profile and no SU until it names them.
func (rep Summary) writeUnplaced(w io.Writer) {
	var named []string
	jobs, untyped := rep.UnplacedOtherJobs, 0
	for _, u := range rep.UnplacedGPUTypes {
		if u.Type == "" {
			untyped = u.Jobs
			continue
		}
		jobs += u.Jobs
		if len(named) < unplacedShown {
			named = append(named, fmt.Sprintf("%s (%d)", u.Type, u.Jobs))
		}
	}
	if types := len(rep.UnplacedGPUTypes) - min(untyped, 1); types > len(named) || rep.UnplacedOtherJobs > 0 {
		named = append(named, "others")
	}
	switch {
	case jobs == 1:
		fmt.Fprintf(w, "1 job on a GPU type this site file does not name: %s; add it as gres_types in the site file\n", named[0])
	case jobs > 1:
		fmt.Fprintf(w, "%d jobs on GPU types this site file does not name: %s; add them as gres_types in the site file\n", jobs, strings.Join(named, ", "))
	}
	switch {
	case untyped == 1:
		fmt.Fprintln(w, "1 job on a GPU of no type, which this site file gives no profile: set untyped_gpu in the site file")
	case untyped > 1:
		fmt.Fprintf(w, "%d jobs on GPUs of no type, which this site file gives no profile: set untyped_gpu in the site file\n", untyped)
	}
}

// writeJobstats counts the jobstats summaries read, those without GPU
// figures, and those that could not be read.
func (rep Summary) writeJobstats(w io.Writer) {
	if rep.Jobstats == 0 && rep.BadJobstats == 0 {
		return
	}
	fmt.Fprintf(w, "jobstats: GPU figures of %s read from AdminComment", textutil.Plural(rep.JobstatsGPU, "job"))
	switch others := rep.Jobstats - rep.JobstatsGPU; {
	case others == 1:
		fmt.Fprint(w, "; 1 other summary held none")
	case others > 1:
		fmt.Fprintf(w, "; %d other summaries held none", others)
	}
	if rep.BadJobstats > 0 {
		b := rep.BadJobstatsJobs[0]
		fmt.Fprintf(w, "; %d summaries could not be read, imported without them (job %s: %s)", rep.BadJobstats, b.JobID, b.Reason)
	}
	fmt.Fprintln(w)
}

// writeSubmissions says what became of the sbatch wrapper's submissions
// recorded without their job's id.
func (rep Summary) writeSubmissions(w io.Writer) {
	for _, a := range rep.SpoolSetAside {
		fmt.Fprintln(w, SetAsideSentence(a))
	}
	if rep.StoredScriptsUnread != "" {
		fmt.Fprintf(w, "%s\n", StoredScriptsUnread(rep.StoredScriptsUnread))
	}
	if rep.Unlinked > 0 {
		fmt.Fprintf(w, "%s through the sbatch wrapper found no job in accounting a day later "+
			"(refused by sbatch? another user, name or directory?): dropped\n", textutil.Plural(rep.Unlinked, "submission"))
	}
	if rep.Ambiguous > 0 {
		fmt.Fprintf(w, "%s through the sbatch wrapper left unlinked as ambiguous (scripts of one job name submitted from one directory at once, "+
			"and slurmdbd has not stored their jobs' scripts yet): the next collect tries again\n", textutil.Plural(rep.Ambiguous, "submission"))
	}
	if rep.Linked > 0 {
		fmt.Fprintf(w, "%s through the sbatch wrapper linked to %s\n", textutil.Plural(rep.Linked, "submission"),
			map[bool]string{true: "its job", false: "their jobs"}[rep.Linked == 1])
	}
	for _, m := range rep.Refiled {
		if m.Jobs == 1 {
			fmt.Fprintf(w, "1 job filed under cluster %q is the same as %s's: it is one record now, under %s\n", m.From, m.To, m.To)
		} else {
			fmt.Fprintf(w, "%d jobs filed under cluster %q are the same as %s's: each is one record now, under %s\n", m.Jobs, m.From, m.To, m.To)
		}
	}
}

// writeText says how many output files were read, what they held, and
// what could not be read or found.
func (o OutputSummary) writeText(w io.Writer) {
	fmt.Fprintf(w, "job output: %d files read, %d unchanged", o.Scanned, o.Unchanged)
	var found []string
	if o.GPUOOMs > 0 {
		found = append(found, textutil.Plural(o.GPUOOMs, "GPU OOM"))
	}
	if o.HostOOMs > 0 {
		found = append(found, textutil.Plural(o.HostOOMs, "host OOM"))
	}
	if o.Work > 0 {
		found = append(found, fmt.Sprintf("work reported by %s", textutil.Plural(o.Work, "job")))
	}
	if o.GPUMemory > 0 {
		found = append(found, fmt.Sprintf("GPU memory measured in %s", textutil.Plural(o.GPUMemory, "job")))
	}
	if o.Emulated > 0 {
		found = append(found, textutil.Plural(o.Emulated, "emulated run"))
	}
	if len(found) > 0 {
		fmt.Fprintf(w, "; %s", strings.Join(found, ", "))
	}
	fmt.Fprintln(w)
	for _, d := range o.UnreadDirs {
		fmt.Fprintln(w, UnreadDirSentence(d))
	}
	for _, u := range o.Unread {
		fmt.Fprintf(w, "skipped: %s\n", u)
	}
	for _, p := range o.Capped {
		fmt.Fprintf(w, "%s is over 64 MiB: read its first and last 32 MiB only\n", p)
	}
	if len(o.Predating) > 0 {
		fmt.Fprintf(w, "not read: the output file of %s was last written before the job started: another job's of the same id "+
			"(a cluster beside this one writing to the same directory, or one from before Slurm's job ids started again)\n", textutil.JobsNamed(o.Predating, 10))
	}
	if len(o.Missing) > 0 {
		// A site-wide collect can miss thousands (other users' files it cannot
		// see): name a few, count the rest; --json lists them all.
		fmt.Fprintf(w, "no output file found for %s (point --outputs at their directory)\n", textutil.JobsNamed(o.Missing, 10))
	}
}

// writeText says which stretch of accounting was read and where the next
// collect starts.
func (win Window) writeText(w io.Writer) {
	const layout = "2006-01-02 15:04:05"
	from := "since " + win.Since.Format(layout)
	if win.FromWatermark {
		from += " (where the last collect left off)"
	}
	if win.Rechecked > 0 {
		from += fmt.Sprintf(", and %s still running or pending asked about by id", textutil.Plural(win.Rechecked, "job"))
	}
	fmt.Fprintf(w, "window: %s\n", from)
	if !win.Ahead.IsZero() {
		fmt.Fprintf(w, "the last collect left off at %s, later than this host's clock (set back since?): read from where the history's jobs end instead\n",
			win.Ahead.Format(layout))
	}
	switch {
	case !win.Gap.IsZero():
		fmt.Fprintf(w, "the next collect still starts at %s: --since is later, and moving it would skip what lies between\n", win.Gap.Format(layout))
	case !win.Watermark.IsZero():
		fmt.Fprintf(w, "the next collect starts at %s\n", win.Watermark.Format(layout))
	}
}

// WriteText says what a publish wrote, and from the site store when it
// was the store's.
func (p PublishSummary) WriteText(w io.Writer) {
	fmt.Fprintf(w, "published %s and %s (%s of %s)", p.Snapshot, p.Index, textutil.Plural(p.Runs, "run"), textutil.Plural(p.Scripts, "script"))
	if strings.HasPrefix(p.From, "site store ") {
		fmt.Fprintf(w, " from the %s", p.From)
	}
	fmt.Fprintln(w)
}

// skippedShown bounds the skipped records a collect names; --json lists
// more.
const skippedShown = 20

// WriteSkipped names the records of the dump file that were skipped, the
// first skippedShown, and counts the rest.
func (r ImportResult) WriteSkipped(w io.Writer, file string) {
	for i, s := range r.Skipped {
		if i == skippedShown {
			fmt.Fprintf(w, "%s: %d more records skipped (--json lists the first %d)\n", file, r.SkippedTotal-i, slurm.MaxSkippedKept)
			break
		}
		fmt.Fprintf(w, "%s:%d: skipped: %v\n", file, s.Line, s.Err)
	}
}
