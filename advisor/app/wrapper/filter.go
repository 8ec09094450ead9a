package wrapper

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"reflect"
	"runtime/debug"
	"strings"
	"sync"
	"time"

	"github.com/migadvisor/migadvisor/advisor"
	"github.com/migadvisor/migadvisor/advisor/base/history"
	"github.com/migadvisor/migadvisor/slurm"
)

// The wrapper's part in Slurm's cli_filter/lua plugin (scripts/
// cli_filter.lua, which make install writes to PREFIX/share/migadvisor):
// inside sbatch on a login node, its slurm_cli_pre_submit answers from
// the filter's cache (filtercache.go) or runs "migadvisor-sbatch
// filter-advise JSON KEY" with the options sbatch parsed
// (slurm.json_cli_options: the command line, the environment and the
// script's #SBATCH lines, before slurmctld is asked), which caches its
// answer under cli_filter.lua's KEY; its slurm_cli_post_submit writes the
// record, with the id slurmctld gave the job, into the history's spool
// itself, or where it cannot, runs "migadvisor-sbatch filter-record JOBID
// DRAFT" in the background. One submission, sbatch's own: the filter
// changes its options in place, with the user's consent
// (MIGADVISOR_APPLY=1), and the record carries the job's id, so collect
// links it exactly.
const (
	FilterAdviseCommand = "filter-advise"
	FilterRecordCommand = "filter-record"
)

// What filter-advise writes on standard output for cli_filter.lua, one
// line each, tab-separated, all at once at its end: the options to set
// (the user consented), the record but its job id, and "ok", without which
// the filter uses none of it (the process was cut short). The advice
// itself goes to standard error, sbatch's, as the wrapper prints it.
const (
	FilterSet    = "set"    // set NAME VALUE: options[NAME] = VALUE
	FilterRecord = "record" // record DRAFT: for the spool, with the job id
	FilterOK     = "ok"
)

// The filter's processes' hard limits, start to exit: past one, the process
// exits at once, with nothing on standard output (filter-advise: the
// submission goes on as the user made it). Their steps have their own
// deadlines within them (AdviceDeadline, spoolDeadline).
const (
	filterAdviseLimit = AdviceDeadline + 100*time.Millisecond
	filterRecordLimit = spoolDeadline + 500*time.Millisecond
	filterHeapLimit   = 256 << 20
)

// FilterMain runs a filter command of this process (FilterAdviseCommand,
// FilterRecordCommand) with its arguments, environment and standard
// streams, within its limit; it returns the exit status, 0 unless the
// command line is not one the filter writes. FilterAdviseCommand's first
// argument may be FilterTypeFlag with the command the filter runs in: salloc
// or srun (FilterAdviseSession); sbatch's has none.
func FilterMain(command string, args []string) int {
	// A process of a few milliseconds inside sbatch: no garbage collection
	// until its heap is large (a third of the advice's cold cost).
	debug.SetGCPercent(-1)
	debug.SetMemoryLimit(filterHeapLimit)
	opt := ProcessOptions(nil, os.Environ(), nil, os.Stdout, os.Stderr)
	var out lockedWriter
	limit := filterAdviseLimit
	if command == FilterRecordCommand {
		limit = filterRecordLimit
	}
	// A file system that hangs the process past its limit: exit, with
	// nothing on standard output unless it is all there.
	timer := time.AfterFunc(limit, func() {
		out.mu.Lock()
		os.Exit(0)
	})
	defer timer.Stop()
	opt.Stdout = &out
	ctx := context.Background()
	kind := ""
	if len(args) > 0 && strings.HasPrefix(args[0], FilterTypeFlag) {
		kind, args = strings.TrimPrefix(args[0], FilterTypeFlag), args[1:]
	}
	switch {
	case command == FilterAdviseCommand && (kind == FilterSalloc || kind == FilterSrun) && (len(args) == 1 || len(args) == 2):
		FilterAdviseSession(ctx, opt, kind, args[0], strings.Join(args[1:], ""))
	case command == FilterAdviseCommand && kind == "" && len(args) == 1:
		FilterAdvise(ctx, opt, args[0], "")
	case command == FilterAdviseCommand && kind == "" && len(args) == 2:
		FilterAdvise(ctx, opt, args[0], args[1])
	case command == FilterRecordCommand && kind == "" && len(args) == 2:
		if err := FilterRecordJob(ctx, opt, args[0], args[1]); err != nil {
			fmt.Fprintf(os.Stderr, "migadvisor: this submission is not in the history: %v\n", err)
		}
	default:
		fmt.Fprintf(os.Stderr, "usage: migadvisor-sbatch %s [%sKIND] JSON [KEY] | %s JOBID DRAFT (for cli_filter.lua)\n",
			FilterAdviseCommand, FilterTypeFlag, FilterRecordCommand)
		return 2
	}
	out.flush(os.Stdout)
	return 0
}

// lockedWriter keeps what is written until flush, which writes it at once
// and holds the lock to the end of the process.
type lockedWriter struct {
	mu  sync.Mutex
	buf bytes.Buffer
}

func (l *lockedWriter) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.buf.Write(p)
}

func (l *lockedWriter) flush(f *os.File) {
	l.mu.Lock() // never unlocked: the process is about to exit
	f.Write(l.buf.Bytes())
}

// FilterAdvise is the filter's pre_submit: options is the JSON of the
// options sbatch parsed (slurm.json_cli_options). It prints the advice on
// standard error, as the wrapper does, and on standard output (Options.
// Stdout) the settings to make when the user consented (MIGADVISOR_APPLY=1
// in the environment), the draft of the record when sbatch will make a job
// of a script file, then "ok". Every problem costs at most one line. key,
// where cli_filter.lua gave one, is the submission's in the filter's
// cache: an answer that holds for its next submissions goes there.
func FilterAdvise(ctx context.Context, opt Options, options, key string) {
	filterAdvise(ctx, opt, options, key, nil)
}

// filterAdvise is FilterAdvise; gathered, where not nil, takes the answer
// to cache instead of the cache (the cache made anew: remakeFilterCache).
func filterAdvise(ctx context.Context, opt Options, options, key string, gathered *[]filterCacheEntry) {
	started := time.Now()    // the file system's clock: sbatch read the script before this process started
	var said strings.Builder // the advice, for the cache
	opt.Stderr = teeWriter(opt.Stderr, &said)
	w := newWrapper(opt)
	w.filter = true
	cache := startFilterCacheWrite(key, w.dbPath(), gathered)
	var sets, record strings.Builder
	defer func() { // the whole answer at once, and "ok": this process ran to its end
		if p := recover(); p != nil { // a bug or a damaged file costs the advice, never the submission
			w.warn("no advice this time: internal error: %v", p)
			sets.Reset()
			record.Reset()
		}
		if opt.Stdout != nil {
			fmt.Fprintf(opt.Stdout, "%s%s%s\n", sets.String(), record.String(), FilterOK)
		}
	}()
	if w.getenv(EnvDisable) == "1" {
		return
	}
	req, err := parseFilterOptions(options)
	if err != nil {
		w.warn("no advice this time: %v", err)
		return
	}
	// The script as sbatch read it: one that changed since is no record.
	base := slurm.ParseCommandLine(req.baseArgs())
	script, fresh := w.scriptAsSubmitted(base, started)
	if script == nil && base.Script() != "" { // --test-only: the advice alone
		script, _ = readScript(w.scriptFile(base.Script()))
	}
	w.submitted = script
	cl := slurm.ParseCommandLine(req.args(script, w.opt.Env))
	apply := w.getenv(EnvApply) == "1"
	if why := notApplied(cl); apply && why != "" {
		w.warn("%s", why)
	}
	applied, read := w.adviseWithin(ctx, cl, apply)
	if apply && read != nil && read.submit != nil && applied != cl {
		for _, s := range read.submit.Settings {
			if strings.ContainsAny(s.Name+s.Value, "\t\n") {
				w.warn("the advice cannot be applied here, so the job is submitted unchanged")
				sets.Reset()
				applied = cl
				break
			}
			fmt.Fprintf(&sets, "%s\t%s\t%s\n", FilterSet, s.Name, s.Value)
		}
	}
	var draft []byte
	if fresh {
		draft = w.filterDraft(read, applied, script, req)
	}
	if draft != nil {
		fmt.Fprintf(&record, "%s\t%s\n", FilterRecord, draft)
	}
	if cache != nil && w.holdsNextTime(read, createsJob(base, nil) && !fresh, key, req.argv) {
		e := filterCacheEntry{written: w.opt.Now().Unix(), key: key, advice: said.String(), sets: sets.String(), draft: string(draft),
			options: options}
		if err := cache.put(history.SpoolFor(w.dbPath()).Dir, e); err != nil {
			w.warn("the advice is not cached for next time: %v", err)
		}
	}
}

// holdsNextTime reports whether the filter's answer holds for the next
// submissions of its key alike: no problem on the way (unrecorded: a job
// made of a script changed since sbatch read it), no lint line (one may be
// of the file system: a directory made since), made where PWD says, of
// the script the key is of.
func (w *wrapper) holdsNextTime(read *advice, unrecorded bool, key string, argv []string) bool {
	if w.warned || read == nil || len(read.lint) > 0 || unrecorded || w.getenv("PWD") != w.opt.WorkDir {
		return false
	}
	var data []byte
	if w.submitted != nil {
		data = w.submitted.Data
	}
	return filterKeyMatches(key, argv, data)
}

// filterDraft is the record of the submission but its job id, as JSON; nil
// where there is none (sbatch makes no job of a script file).
func (w *wrapper) filterDraft(read *advice, applied *slurm.CommandLine, script *slurm.Script, req filterRequest) []byte {
	if read == nil { // the advice ran out of time: the script is still the one read
		read = &advice{script: script}
	}
	sub, _, _, ok, err := w.submissionOf(read, applied)
	if err == nil && ok {
		if c := req.opts["clusters"]; c != "" && !strings.Contains(c, ",") {
			sub.Cluster = c // -M: where sbatch submits it
		}
		var draft []byte
		if draft, err = json.Marshal(sub); err == nil {
			return draft
		}
	}
	if err != nil {
		w.warn("this submission is not in the history: %v", err)
	}
	return nil
}

// teeWriter is w, and a copy into copied; copied alone when w is nil.
func teeWriter(w io.Writer, copied io.Writer) io.Writer {
	if w == nil {
		return copied
	}
	return io.MultiWriter(w, copied)
}

// FilterRecordJob is the filter's post_submit: the record filter-advise
// drafted, with the id slurmctld gave the job, into the history's spool
// (within spoolDeadline), where collect links it to the job by its id.
func FilterRecordJob(ctx context.Context, opt Options, jobID, draft string) error {
	w := newWrapper(opt)
	if jobID == "" || strings.Trim(jobID, "0123456789") != "" {
		return fmt.Errorf("job id %q", jobID)
	}
	var sub history.Submission
	if err := json.Unmarshal([]byte(draft), &sub); err != nil {
		return fmt.Errorf("the draft: %w", err)
	}
	if sub.Fingerprint == "" || sub.Source == "" {
		return fmt.Errorf("the draft has no script")
	}
	sub.JobID = jobID
	return w.spool(ctx, func() (history.Submission, bool, error) { return sub, true, nil })
}

// filterNextTime is the advice's request when it is not applied, where
// sbatch runs the filter: MIGADVISOR_APPLY=1, since sbatch knows no
// --mig-apply.
func filterNextTime(a *advisor.SubmitAdvice) string {
	return fmt.Sprintf("Next time, submit with %s, or with %s=1 in the environment to have it changed for you.", a.Use(), EnvApply)
}

// filterRequest is what sbatch's cli_filter read: the options set (by
// the command line, the environment or the script), and argv, the script
// and its arguments (none for --wrap or a script on standard input).
type filterRequest struct {
	opts map[string]string
	argv []string
}

func parseFilterOptions(data string) (filterRequest, error) {
	var raw map[string]json.RawMessage
	if err := json.Unmarshal([]byte(data), &raw); err != nil {
		return filterRequest{}, fmt.Errorf("sbatch's options: %w", err)
	}
	req := filterRequest{opts: map[string]string{}}
	for name, v := range raw {
		var err error
		if name == "argv" {
			err = json.Unmarshal(v, &req.argv)
		} else {
			var s string
			if json.Unmarshal(v, &s) == nil { // an option of another shape is none the advice reads
				req.opts[name] = s
			}
		}
		if err != nil {
			return filterRequest{}, fmt.Errorf("sbatch's options: %s: %w", name, err)
		}
	}
	return req, nil
}

// filterFlags are the options the filter passes on that are read only
// where sbatch runs: which job it makes, if any, and where.
var filterFlags = []string{"test-only", "wrap", "chdir", "clusters"}

// filterResources are the options that make the job's resources
// (slurm.Resources), in the order the filter passes them on.
var filterResources = []string{"partition", "qos", "account", "job-name", "output", "error", "array", "time",
	"nodes", "ntasks", "ntasks-per-node", "cpus-per-task", "cpus-per-gpu", "mincpus", "sockets-per-node",
	"exclusive", "mem", "mem-per-cpu", "mem-per-gpu",
	slurm.OptGres, slurm.OptGPUs, slurm.OptGPUsPerNode, slurm.OptGPUsPerTask, slurm.OptGPUsPerSocket}

// baseArgs is the command line without the resources' options: which job
// sbatch makes, of which script.
func (r filterRequest) baseArgs() []string {
	var args []string
	for _, name := range filterFlags {
		if word, ok := r.word(name); ok {
			args = append(args, word)
		}
	}
	return append(args, r.argv...)
}

// args is sbatch's command line as the filter's options make it: the
// options whose values the script's #SBATCH lines and the environment do
// not already give (theirs keep their lines, and the advice speaks of them
// as the user wrote them), then the script and its arguments.
func (r filterRequest) args(script *slurm.Script, env []string) []string {
	var opts []string
	for _, name := range filterFlags {
		if word, ok := r.word(name); ok {
			opts = append(opts, word)
		}
	}
	for _, name := range filterResources {
		word, ok := r.word(name)
		if !ok {
			continue
		}
		without := slurm.ParseCommandLine(append(opts, r.argv...)).Resources(script, env)
		with := slurm.ParseCommandLine(append(append(opts[:len(opts):len(opts)], word), r.argv...)).Resources(script, env)
		if !sameResources(with, without) {
			opts = append(opts, word)
		}
	}
	return append(opts, r.argv...)
}

// word is the option as sbatch's command line writes it; false when it is
// not set.
func (r filterRequest) word(name string) (string, bool) {
	v, ok := r.opts[name]
	switch {
	case !ok || v == "unset":
		return "", false
	case v == "set" || (name == "exclusive" && v == "exclusive"):
		return "--" + name, true
	case name == slurm.OptGres: // "gres:gpu:a100:1,gres:shard:1", as Slurm keeps it
		parts := strings.Split(v, ",")
		for i, p := range parts {
			parts[i] = strings.TrimPrefix(p, "gres:")
		}
		v = strings.Join(parts, ",")
	}
	return "--" + name + "=" + v, true
}

// sameResources reports whether two readings of a job ask for the same,
// wherever each value was written.
func sameResources(a, b slurm.Resources) bool {
	if len(a.GPUs) != len(b.GPUs) {
		return false
	}
	for i := range a.GPUs {
		x, y := a.GPUs[i], b.GPUs[i]
		if x.Option != y.Option || x.Type != y.Type || x.Count != y.Count {
			return false
		}
	}
	a.GPUs, b.GPUs = nil, nil
	a.TimeLine, b.TimeLine = 0, 0
	a.MemLine, b.MemLine = 0, 0
	return reflect.DeepEqual(a, b)
}
