package wrapper

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os/user"
	"path"
	"slices"
	"strings"

	"github.com/migadvisor/migadvisor/advisor/app/index"
	"github.com/migadvisor/migadvisor/advisor/base/session"
	"github.com/migadvisor/migadvisor/catalog"
	"github.com/migadvisor/migadvisor/slurm"
)

// The filter in salloc, and in srun where it makes a job (outside one:
// cli_filter.lua passes no srun step), runs "migadvisor-sbatch
// filter-advise --type=KIND JSON [KEY]": an interactive session has no
// script, so its advice is of the user's past sessions of its job name
// (advisor/base/session), as their advice index keeps them (index.Reader.
// Sessions), priced as this one asks. No record: collect finds sessions by
// their name.
const (
	FilterSalloc = "salloc"
	FilterSrun   = "srun"
	// FilterTypeFlag, before the options, names the command the filter
	// runs in: Slurm's options.type.
	FilterTypeFlag = "--type="
)

// sallocDefaultName is the job name of an salloc without -J, whatever its
// command: what sacct records for one on Slurm 22.05 (its options table
// has no job-name then, and SALLOC_JOB_NAME did not change it).
const sallocDefaultName = "interactive"

// sessionKeyTag is the third field of a session's key in the filter's
// cache, where a script's has its checksum (digits): no key of a script's
// submission is a session's.
const sessionKeyTag = "session"

// FilterAdviseSession is the filter's pre_submit in salloc or srun (kind):
// options is the JSON of the options Slurm parsed. It prints the advice on
// standard error, and on standard output the settings to make where the
// user consented (MIGADVISOR_APPLY=1), then "ok". Nothing where the
// sessions of the name recommend nothing, or what is asked is no bigger
// than what they recommend. key, where cli_filter.lua gave one, is the
// request's in the filter's cache.
func FilterAdviseSession(ctx context.Context, opt Options, kind, options, key string) {
	filterAdviseSession(ctx, opt, kind, options, key, nil)
}

// filterAdviseSession is FilterAdviseSession; gathered as filterAdvise's.
func filterAdviseSession(ctx context.Context, opt Options, kind, options, key string, gathered *[]filterCacheEntry) {
	var said strings.Builder
	opt.Stderr = teeWriter(opt.Stderr, &said)
	w := newWrapper(opt)
	w.filter = true
	cache := startFilterCacheWrite(key, w.dbPath(), gathered)
	var sets strings.Builder
	defer func() {
		if p := recover(); p != nil { // a bug or a damaged file costs the advice, never the session
			w.warn("no advice this time: internal error: %v", p)
			sets.Reset()
		}
		if opt.Stdout != nil {
			fmt.Fprintf(opt.Stdout, "%s%s\n", sets.String(), FilterOK)
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
	adv, err := runWithin(ctx, w.opt.AdviceDeadline, func(context.Context) (*sessionAdvice, error) {
		return w.adviseSession(kind, req)
	})
	if err != nil {
		w.warn("no advice this time: %v", err)
		return
	}
	if adv != nil {
		w.saySession(adv, w.getenv(EnvApply) == "1", &sets)
	}
	if cache != nil && !w.warned && sessionKeyMatches(key, kind) {
		e := filterCacheEntry{written: w.opt.Now().Unix(), key: key, advice: said.String(), sets: sets.String(), options: options}
		if err := cache.put("", e); err != nil {
			w.warn("the advice is not cached for next time: %v", err)
		}
	}
}

// sessionAdvice is the advice for a session being asked for.
type sessionAdvice struct {
	line     string // the sessions' help line, named
	profile  string // the profile it recommends
	settings []slurm.Setting
}

// saySession prints the advice, and with apply the change it makes (as
// sbatch's apply says it), writing its settings to sets.
func (w *wrapper) saySession(adv *sessionAdvice, apply bool, sets *strings.Builder) {
	var use, changes []string
	for _, s := range adv.settings {
		if strings.ContainsAny(s.Name+s.Value, "\t\n") {
			w.warn("the advice cannot be applied here, so the session is asked for unchanged")
			return
		}
		use = append(use, slurm.ShellWord(s.String()))
		changes = append(changes, s.Before()+" -> "+slurm.ShellWord(s.String()))
	}
	if !apply {
		w.say("%s; next time ask with %s, or set %s=1 to have it changed for you", adv.line, strings.Join(use, " "), EnvApply)
		return
	}
	w.say("%s.", adv.line)
	w.say("submitting on %s: %s", adv.profile, strings.Join(changes, ", "))
	for _, s := range adv.settings {
		fmt.Fprintf(sets, "%s\t%s\t%s\n", FilterSet, s.Name, s.Value)
	}
}

// adviseSession judges the user's past sessions of the request's job name
// for this request; nil when there is nothing to say.
func (w *wrapper) adviseSession(kind string, req filterRequest) (*sessionAdvice, error) {
	cl := slurm.ParseCommandLine(req.sessionArgs())
	res := cl.Resources(nil, nil)
	if len(res.GPUs) != 1 {
		return nil, nil // no GPU, or several kinds: no slice to advise
	}
	site, err := w.opt.LoadSite(w.getenv(EnvSite))
	if err != nil {
		return nil, err
	}
	job, err := site.JobFor(res)
	if err != nil || job.Profile == nil || job.GPUs != 1 {
		return nil, nil // a GPU type the site does not know is Slurm's to refuse
	}
	own, err := w.opt.OpenIndex(index.OwnPath(w.dbPath()))
	switch {
	case errors.Is(err, fs.ErrNotExist):
		return nil, nil // no collect yet: no sessions
	case err != nil:
		return nil, fmt.Errorf("your advice index is not readable (any 'migadvisor collect' writes it again): %w", err)
	}
	defer own.Close()
	name, user := sessionName(kind, req, w.getenv), w.sessionUser()
	kept, ok, err := own.Sessions(user, name)
	if err != nil || !ok {
		return nil, err
	}
	asking := &session.Asking{Profile: job.Profile.Name, Partition: job.Partition, QoS: job.QoS, CPUs: job.CPUs, MemMiB: job.MemMiB}
	a := session.Judge(session.Request{Name: name, User: user, Site: site, Asking: asking}, kept.Records(user, name))
	rec, ok := site.Profile(a.Recommended)
	if !ok || rec.UsableMemory >= job.Profile.UsableMemory {
		return nil, nil // nothing recommended, or no smaller than what is asked
	}
	settings, err := sessionSettings(cl, res, rec)
	if err != nil {
		return nil, err
	}
	return &sessionAdvice{line: a.NamedLine(site), profile: rec.Name, settings: settings}, nil
}

// sessionSettings are the options that ask for profile p instead: its GPU
// request, written with the option the request used, and the partition
// and QoS p needs where the request names others.
// res: what cl asks for (cl.Resources(nil, nil)), as adviseSession read it.
func sessionSettings(cl *slurm.CommandLine, res slurm.Resources, p *catalog.Profile) ([]slurm.Setting, error) {
	gpu, err := cl.GPUSetting(res, nil, nil, p.Request)
	if err != nil {
		return nil, err
	}
	settings := []slurm.Setting{gpu}
	if was, _ := cl.Effective("partition", nil, nil); was != "" && len(p.Partitions) > 0 && !slices.Contains(p.Partitions, was) {
		settings = append(settings, slurm.Setting{Name: "partition", Value: p.Partitions[0], Was: was})
	}
	if was, _ := cl.Effective("qos", nil, nil); p.QoS != "" && p.QoS != was {
		settings = append(settings, slurm.Setting{Name: "qos", Value: p.QoS, Was: was})
	}
	return settings, nil
}

// sessionUser is whose sessions these are: the wrapper's user, else the
// process's (a session's evidence is keyed by its user alone).
func (w *wrapper) sessionUser() string {
	if name := w.user(); name != "" {
		return name
	}
	if u, err := user.Current(); err == nil {
		return u.Username
	}
	return ""
}

// sessionArgs is the request's resources as a command line: no script,
// and no command (salloc's and srun's argv is the program to run).
func (r filterRequest) sessionArgs() []string {
	var args []string
	for _, name := range filterResources {
		if word, ok := r.word(name); ok {
			args = append(args, word)
		}
	}
	return args
}

// sessionName is the job name the session gets: its -J, else srun's
// SLURM_JOB_NAME or its program's name, else salloc's default.
func sessionName(kind string, r filterRequest, getenv func(string) string) string {
	if name := r.opts["job-name"]; name != "" {
		return name
	}
	if kind != FilterSrun {
		return sallocDefaultName
	}
	if name := getenv("SLURM_JOB_NAME"); name != "" {
		return name
	}
	if len(r.argv) > 0 {
		return path.Base(r.argv[0])
	}
	return ""
}

// sessionKeyMatches reports whether key is cli_filter.lua's of a session
// of kind (migadvisor.session_key): an answer filed under it is found only
// for such a request.
func sessionKeyMatches(key, kind string) bool {
	fields := strings.SplitN(key, "\t", 4)
	return len(fields) == 4 && fields[0] == kind && fields[2] == sessionKeyTag && !strings.ContainsAny(key, "\n\r")
}
