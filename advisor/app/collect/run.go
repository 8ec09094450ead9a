package collect

import (
	"context"
	"errors"
	"fmt"
	"io"
	"maps"
	"os"
	"slices"
	"time"

	"github.com/migadvisor/migadvisor/advisor/base/history"
	"github.com/migadvisor/migadvisor/internal/textutil"
	"github.com/migadvisor/migadvisor/slurm"
)

// The sources a Report names besides a dump's file name.
const (
	SourceSacct = "sacct" // sacct was run
	SourceNone  = "none"  // no tracked job is waiting for its record: nothing was asked
)

// scriptsPerCollect bounds the scripts one collect asks slurmdbd for; the
// next collect goes on with the rest, newest first.
const scriptsPerCollect = 20000

// RunOptions are what one collect reads, and the hooks that show it as it
// goes (any may be nil).
type RunOptions struct {
	Selection Selection
	// Cluster is the name the user gave (--cluster); "" asks slurmctld
	// (ChooseCluster). A dump with a Cluster column needs neither.
	Cluster string
	Outputs []string      // directories of job output files
	Overlap time.Duration // an incremental window's (WindowOptions)
	Stdin   io.Reader     // the dump named "-"; os.Stdin when nil

	// OnFallback hears the sentence that says which cluster name the jobs
	// are filed under when neither the user nor Slurm gave one.
	OnFallback func(sentence string)
	// OnAccounted hears the report once accounting is imported, before the
	// outputs are read: a progress count ends there, a dump's skipped
	// records are named.
	OnAccounted func(Report)
}

// Report is what one collect did.
type Report struct {
	Source     string // SourceSacct, the dump's name ("-": stdin), or SourceNone
	Accounting ImportResult
	Window     *Window // when sacct selected jobs by time
	// UnknownToSlurm are tracked ids Slurm has no job of (mistyped?).
	UnknownToSlurm []string
	Refiled        []history.Refiled // jobs filed under a real cluster name
	Linked         int               // the wrapper's submissions linked to their jobs (history.LinkPending)
	Unlinked       int               // those dropped, accounting having had no job for them after history.PendingRefused
	Ambiguous      int               // those left unlinked as ambiguous, for a later collect (history.PendingLinks)
	// ScriptsUnread is why the scripts slurmdbd stored could not be read
	// to pair the wrapper's submissions with their jobs ("": they were,
	// or none was needed): the pairs were decided by time alone.
	ScriptsUnread string
	// SetAside are the sbatch wrapper's records in the spool that the
	// history's open could not read, renamed *.bad (history.SetAside).
	SetAside []history.SetAside
	// pendingAsked is when sacct was asked about every job submitted since,
	// for the wrapper's records without ids (zero: it was not).
	pendingAsked time.Time
	Scripts      *ScriptsResult // when the selection links scripts
	Outputs      OutputResult
}

// Run is one collect: accounting from the selection (a dump, the tracked
// jobs that have not ended, or a window of sacct), each job filed once
// under its cluster's real name, jobs no submission names linked to
// slurmdbd's scripts (when the selection says so), then the output files.
// col names its own cluster as the source needs it.
func Run(ctx context.Context, col *Collector, opt RunOptions) (Report, error) {
	rep, err := col.importAccounting(ctx, opt)
	rep.SetAside = col.Store.SetAside() // set aside when the history was opened: said whatever follows
	if err != nil {
		return rep, err
	}
	if opt.OnAccounted != nil {
		opt.OnAccounted(rep)
	}
	// A job filed under "local" (Slurm could not be asked) that a real name
	// holds too is one job: filed there, with the submissions that link it.
	if rep.Refiled, err = col.FileTogether(ctx); err != nil {
		return rep, err
	}
	// The wrapper's records whose job ids it never saw find their jobs.
	links, err := col.LinkPending(ctx, time.Now(), rep.pendingAsked)
	if err != nil {
		return rep, err
	}
	rep.Linked, rep.Unlinked, rep.Ambiguous, rep.ScriptsUnread = links.Linked, links.Dropped, links.Ambiguous, links.ScriptsUnread
	if opt.Selection.ScriptsFile != "" {
		// The file is of the jobs this collect read: under the names
		// they are filed, or were refiled, under.
		clusters := maps.Clone(rep.Accounting.Clusters)
		if clusters == nil {
			clusters = map[string]bool{}
		}
		for _, r := range rep.Refiled {
			if clusters[r.From] {
				clusters[r.To] = true
			}
		}
		scripts, err := col.LinkScriptsFrom(ctx, opt.Selection.ScriptsFile, slices.Sorted(maps.Keys(clusters)))
		if err != nil {
			return rep, fmt.Errorf("link jobs to their scripts: %w", err)
		}
		rep.Scripts = &scripts
	} else if opt.Selection.Scripts {
		scripts, err := col.LinkScripts(ctx, scriptsPerCollect)
		if err != nil {
			return rep, fmt.Errorf("link jobs to their scripts: %w", err)
		}
		rep.Scripts = &scripts
	}
	col.SiteWide = opt.Selection.Query.AllUsers
	if rep.Outputs, err = col.ScanOutputs(ctx, opt.Outputs, nil); err != nil {
		return rep, err
	}
	// The jobs whose output was not found are said in this collect's
	// summary: once, not again at every collect.
	if err := col.NoteMissing(ctx, rep.Outputs); err != nil {
		return rep, err
	}
	return rep, nil
}

// Err is the error a collect that imported r ends with: only when nothing
// could be imported, or, strict, when anything was skipped.
func (r ImportResult) Err(strict bool) error {
	skipped := r.SkippedTotal
	switch {
	case skipped > 0 && r.Total() == 0 && r.Partial > 0:
		// Steps were read, of jobs whose own records were not.
		return fmt.Errorf("no job's own record could be imported (%d skipped; the steps of %s read without it)", skipped, textutil.Plural(r.Partial, "job"))
	case skipped > 0 && r.Total() == 0:
		return fmt.Errorf("no record could be imported (%d skipped)", skipped)
	case skipped > 0 && strict:
		return fmt.Errorf("%s skipped (--strict)", textutil.Plural(skipped, "record"))
	}
	return nil
}

// importAccounting imports from the dump, or runs sacct for the tracked
// jobs or the selection's window.
func (c *Collector) importAccounting(ctx context.Context, opt RunOptions) (Report, error) {
	sel := opt.Selection
	if sel.Dump != "" {
		res, err := c.importDumpFile(ctx, opt)
		return Report{Source: sel.Dump, Accounting: res}, err
	}
	if err := c.NameCluster(ctx, opt.Cluster, opt.OnFallback); err != nil {
		return Report{}, err
	}
	if sel.TrackedOnly() {
		rep, err := c.importTracked(ctx, sel.Query)
		if err != nil || sel.Own == "" {
			return rep, err
		}
		return c.continueOwnWindow(ctx, rep, sel, opt.Overlap)
	}
	res, w, err := c.ImportWindow(ctx, sel.Query, WindowOptions{Overlap: opt.Overlap})
	return Report{Source: SourceSacct, Accounting: res, Window: &w}, err
}

// importTracked asks sacct about the tracked jobs that have not ended, and
// reports those Slurm has no job of.
func (c *Collector) importTracked(ctx context.Context, q slurm.SacctQuery) (Report, error) {
	tracked, err := c.Store.Tracked(ctx, history.TrackedFilter{})
	if err != nil {
		return Report{}, err
	}
	var rep Report
	if q.Jobs = history.Unended(tracked); len(q.Jobs) > 0 {
		byID := q
		byID.AllUsers = true // sbatch ids are unique; -a lets root and operators read them too
		res, unknown, err := c.ImportByID(ctx, byID)
		rep = Report{Source: SourceSacct, Accounting: res, UnknownToSlurm: unknown}
		if err != nil {
			return rep, err
		}
	}
	res, asked, err := c.importPending(ctx, q)
	switch {
	case !asked.IsZero():
		rep.Source, rep.pendingAsked = SourceSacct, asked
		rep.Accounting = rep.Accounting.Plus(res)
	case rep.Source == "":
		rep.Source = SourceNone
	}
	return rep, err
}

// importPending asks sacct (q's users and clusters) for the jobs submitted
// since the oldest of the wrapper's submissions recorded without their ids
// (history.OldestPending), those older than history.PendingKept dropped
// first; asked is when the window began, zero when there was none to ask
// about.
func (c *Collector) importPending(ctx context.Context, q slurm.SacctQuery) (res ImportResult, asked time.Time, err error) {
	if err := c.Store.DropStalePending(ctx, time.Now()); err != nil {
		return ImportResult{}, time.Time{}, err
	}
	oldest, pending, err := c.Store.OldestPending(ctx)
	if err != nil || !pending {
		return ImportResult{}, time.Time{}, err
	}
	q.Jobs, q.Since = nil, oldest.Add(-history.PendingEarly)
	res, err = c.ImportSacct(ctx, q)
	return res, q.Since, err
}

// PendingResult is what FindPending did: the wrapper's submissions linked
// to their jobs, those dropped (accounting had no job for them a day
// later), and those made in the last history.PendingLate still waiting
// (slurmdbd may not have their jobs yet); ScriptsUnread why the scripts
// slurmdbd stored could not be read to pair them (PendingLinked).
type PendingResult struct {
	Linked, Dropped, Ambiguous, Waiting int
	ScriptsUnread                       string
}

// FindPending links the sbatch wrapper's submissions recorded without
// their ids to their jobs, asking sacct for the user's jobs since the
// oldest of them (nothing is asked when there is none): what status and
// wait do first, so that a job submitted through the shim is theirs to
// show. It names the cluster first if c has none.
func (c *Collector) FindPending(ctx context.Context) (PendingResult, error) {
	var res PendingResult
	if _, pending, err := c.Store.OldestPending(ctx); err != nil || !pending {
		return res, err
	}
	if c.Cluster == "" {
		if err := c.NameCluster(ctx, "", nil); err != nil {
			return res, err
		}
	}
	_, asked, err := c.importPending(ctx, slurm.SacctQuery{})
	if err != nil {
		return res, err
	}
	now := time.Now()
	links, err := c.LinkPending(ctx, now, asked)
	if err != nil {
		return res, err
	}
	res.Linked, res.Dropped, res.Ambiguous, res.ScriptsUnread = links.Linked, links.Dropped, links.Ambiguous, links.ScriptsUnread
	res.Waiting, err = c.Store.PendingCount(ctx, now.Add(-history.PendingLate))
	return res, err
}

// FindPendingWithin is FindPending asked again each second, for up to
// patience, while submissions wait: a job submitted through the shim a
// moment ago may not be in accounting yet. The result adds up every pass
// but Waiting, which is the last one's; a cancelled ctx ends it with what
// it found.
func (c *Collector) FindPendingWithin(ctx context.Context, patience time.Duration) (PendingResult, error) {
	var total PendingResult
	deadline := time.Now().Add(patience)
	for {
		res, err := c.FindPending(ctx)
		total.Linked += res.Linked
		total.Dropped += res.Dropped
		total.Ambiguous, total.Waiting = res.Ambiguous, res.Waiting
		if total.ScriptsUnread == "" {
			total.ScriptsUnread = res.ScriptsUnread // said once, however many passes failed alike
		}
		if err != nil || res.Waiting == 0 || !time.Now().Before(deadline) {
			return total, err
		}
		select {
		case <-ctx.Done():
			return total, nil
		case <-time.After(time.Second):
		}
	}
}

// importDumpFile imports the dump the selection names, its errors told by
// the file's name (and line).
func (c *Collector) importDumpFile(ctx context.Context, opt RunOptions) (ImportResult, error) {
	name := opt.Selection.Dump
	in := opt.Stdin
	if in == nil {
		in = os.Stdin
	}
	if name != "-" {
		f, err := os.Open(name)
		if err != nil {
			return ImportResult{}, err
		}
		defer f.Close()
		in = f
	}
	res, err := c.importDump(ctx, in, opt)
	var le *slurm.LineError
	if errors.As(err, &le) {
		return res, fmt.Errorf("%s:%d: %v", name, le.Line, le.Err)
	}
	if err != nil {
		return res, fmt.Errorf("%s: %w", name, err)
	}
	return res, nil
}

// importDump imports a dump, naming the cluster its header leaves to be
// named, and says what its fields lack of what the report needs where it
// brought a new or changed job. A dump
// with a Cluster column keeps its own names: Slurm need not be asked (a
// record with the field empty takes the name the history last used). A
// file that is not a dump at all fails on its first line before any
// cluster is named: that error is the one sentence the user reads.
func (c *Collector) importDump(ctx context.Context, r io.Reader, opt RunOptions) (ImportResult, error) {
	sr, err := slurm.NewSacctReader(r)
	switch {
	case errors.Is(err, slurm.ErrNoHeader):
		// An empty file holds no job: there is no cluster to file one
		// under, and Slurm is not asked for its name.
		return ImportResult{}, nil
	case err != nil:
		return ImportResult{}, err
	case sr.HasField("Cluster") && opt.Cluster == "":
		c.Cluster, err = LastCluster(ctx, c.Store)
		if err != nil {
			return ImportResult{}, err
		}
	default:
		if err := c.NameCluster(ctx, opt.Cluster, opt.OnFallback); err != nil {
			return ImportResult{}, err
		}
	}
	res, err := c.importFrom(ctx, sr, nil)
	if res.New+res.Updated > 0 {
		// A job the dump leaves as it was keeps what the history held.
		res.Lacks = Lacking(sr.HasField)
	}
	return res, err
}
