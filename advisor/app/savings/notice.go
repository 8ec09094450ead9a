package savings

import (
	"bytes"
	"cmp"
	"context"
	"errors"
	"fmt"
	"io/fs"
	"math"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"syscall"
	"time"

	"github.com/migadvisor/migadvisor/advisor/base/memory"
	"github.com/migadvisor/migadvisor/catalog"
	"github.com/migadvisor/migadvisor/internal/atomicfile"
	"github.com/migadvisor/migadvisor/internal/lazyre"
	"github.com/migadvisor/migadvisor/internal/textutil"
	"github.com/migadvisor/migadvisor/slurm"
)

// Notice is one user's message: their listed scripts not told of within
// the site's notify_every_days.
type Notice struct {
	User    string   `json:"user"`
	Subject string   `json:"subject"`
	Body    string   `json:"body"`
	Scripts []string `json:"scripts"` // the ledger's keys of the scripts it tells of
	To      string   `json:"to"`      // where it goes: a file or the command line, in words
	Err     string   `json:"error,omitempty"`
}

// A Sender delivers notices.
type Sender interface {
	// Where says where n goes, for the report and a dry run.
	Where(n Notice) string
	Send(ctx context.Context, n Notice) error
}

// safeUser is a user name that may go into a file name or a command's
// arguments: POSIX's portable characters, not starting with '-' (which a
// mail command would read as an option).
var safeUser = lazyre.New(`^[A-Za-z0-9._][A-Za-z0-9._-]*$`)

// DirSender writes each notice to DIR/USER-YYYYMMDD-HHMMSS.txt: a second
// run the same day adds its own files.
type DirSender struct {
	Dir string
	Now time.Time
}

// Where names the file.
func (d DirSender) Where(n Notice) string {
	return filepath.Join(d.Dir, n.User+"-"+d.Now.Format("20060102-150405")+".txt")
}

// Send writes the file, mode 0600: a notice is about one user's jobs.
func (d DirSender) Send(_ context.Context, n Notice) error {
	text := "Subject: " + n.Subject + "\n\n" + n.Body
	return atomicfile.Write(d.Where(n), []byte(text), 0o600)
}

// CommandSender runs the site's mail command for each notice: an argument
// vector, never a shell, with {user} and {subject} replaced, the body on
// its standard input.
type CommandSender struct {
	Argv    []string
	Timeout time.Duration // per notice; 0: a minute
}

func (c CommandSender) argv(n Notice) []string {
	out := make([]string, len(c.Argv))
	for i, a := range c.Argv {
		out[i] = strings.NewReplacer("{user}", n.User, "{subject}", n.Subject).Replace(a)
	}
	return out
}

// Where is the command line, each argument quoted where it needs to be.
func (c CommandSender) Where(n Notice) string {
	var words []string
	for _, a := range c.argv(n) {
		words = append(words, slurm.ShellWord(a))
	}
	return strings.Join(words, " ")
}

// Send runs the command in its own process group, killed whole at the
// timeout (mail hands over to sendmail, a child that would outlive it);
// its exit status and first line of stderr make the error.
func (c CommandSender) Send(parent context.Context, n Notice) error {
	timeout := c.Timeout
	if timeout <= 0 {
		timeout = time.Minute
	}
	ctx, cancel := context.WithTimeout(parent, timeout)
	defer cancel()
	argv := c.argv(n)
	cmd := exec.CommandContext(ctx, argv[0], argv[1:]...)
	cmd.Stdin = strings.NewReader(n.Body)
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	cmd.Cancel = func() error { return syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL) }
	cmd.WaitDelay = time.Second // a grandchild holding stderr open does not hold us
	err := cmd.Run()
	if errors.Is(ctx.Err(), context.DeadlineExceeded) && parent.Err() == nil {
		return fmt.Errorf("%s did not finish within %s: stopped", argv[0], timeout)
	}
	if err != nil {
		if line, _, _ := strings.Cut(strings.TrimSpace(stderr.String()), "\n"); line != "" {
			return fmt.Errorf("%s: %w: %s", argv[0], err, line)
		}
		return fmt.Errorf("%s: %w", argv[0], err)
	}
	return nil
}

// unsetSender stands for the mail command a site file does not name yet:
// a dry run shows the notices through it, and nothing is ever sent.
type unsetSender struct{}

func (unsetSender) Where(Notice) string { return "nowhere yet (no notify_command)" }

func (unsetSender) Send(context.Context, Notice) error {
	return errors.New("the site file's [report] names no notify_command")
}

// Delivery is how the notices go out, as the site file and --notify-dir
// set it up, and what of that is not configured yet.
type Delivery struct {
	Sender Sender
	Files  bool     // the notices go to files, not a mail command
	Unset  []string // what is not configured yet, a clause each
}

// NewDelivery picks the sender: files in dir where one is given, else the
// site's notify_command. A dry run goes ahead with what is missing and
// says what it is; a real run refuses to send through nothing.
func NewDelivery(site *catalog.Site, dir string, dryRun bool, now time.Time) (Delivery, error) {
	th := site.Report.WithDefaults()
	var d Delivery
	switch {
	case dir != "":
		d.Sender, d.Files = DirSender{Dir: dir, Now: now}, true
		if info, err := os.Stat(dir); err != nil || !info.IsDir() {
			if !dryRun {
				return d, fmt.Errorf("--notify-dir: %s is not a directory (create it, readable by the admins only)", dir)
			}
			d.Unset = append(d.Unset, fmt.Sprintf("--notify-dir %s is not a directory yet; create it, readable by the admins only", dir))
		}
	case len(th.NotifyCommand) > 0:
		d.Sender = CommandSender{Argv: th.NotifyCommand}
		// What would run is checked before anything is sent: a command that
		// is not there fails every notice of a real run, and a dry run that
		// showed it as "would send" would have hidden that.
		if err := runnable(th.NotifyCommand[0]); err != nil {
			if !dryRun {
				return d, fmt.Errorf("--notify: site %s's notify_command runs %s; nothing was sent", site.Name, err)
			}
			d.Unset = append(d.Unset, fmt.Sprintf("site %s's notify_command runs %s, so --notify would send nothing", site.Name, err))
		}
	default:
		if !dryRun {
			return d, fmt.Errorf("--notify: site %s names no notify_command in its [report]; give --notify-dir DIR to write the notices as files", site.Name)
		}
		d.Sender = unsetSender{}
		d.Unset = append(d.Unset, fmt.Sprintf("site %s names no notify_command in its [report], so --notify would send nothing; "+
			"set one (such as [\"/usr/bin/mail\", \"-s\", \"{subject}\", \"{user}\"]) or give --notify-dir DIR", site.Name))
	}
	if th.NotifyContact == "" {
		d.Unset = append(d.Unset, fmt.Sprintf("site %s names no notify_contact in its [report], so the notices name no one to write to with questions", site.Name))
	}
	return d, nil
}

// runnable checks that the command a notice would run is there and may be
// run: a path, else a name looked up on PATH as exec does. Its error reads
// after "runs ": "/usr/bin/mail, which does not exist (install …)".
func runnable(command string) error {
	const install = "install a mail command (mailutils, bsd-mailx or s-nail) or name one that is installed"
	path := command
	if !strings.Contains(command, "/") {
		found, err := exec.LookPath(command)
		if err != nil {
			return fmt.Errorf("%s, which is not on PATH (%s): %s", command, os.Getenv("PATH"), install)
		}
		path = found
	}
	info, err := os.Stat(path)
	switch {
	case errors.Is(err, fs.ErrNotExist):
		return fmt.Errorf("%s, which does not exist: %s", command, install)
	case err != nil:
		return fmt.Errorf("%s, which cannot be checked: %v", command, err)
	case info.IsDir():
		return fmt.Errorf("%s, which is a directory, not a command", command)
	case info.Mode().Perm()&0o111 == 0 || syscall.Access(path, 0x1) != nil: // X_OK: for this user
		return fmt.Errorf("%s, which is not executable (%s)", command, info.Mode().Perm())
	}
	return nil
}

// NotifyRequest says whom to tell, through what, and what they were told
// before.
type NotifyRequest struct {
	Report *Report
	Site   *catalog.Site
	Ledger string // the file that remembers who was told of what, and when
	Sender Sender
	DryRun bool // build and show the notices; send nothing, record nothing
	Now    time.Time
	Unset  []string // what is not configured yet (Delivery.Unset), for the result
}

// NotifyResult is what Notify did.
type NotifyResult struct {
	Notices []Notice `json:"notices"` // sent, or for a dry run that would be; failures carry Err
	// Told: scripts left out because their user was told of them within
	// notify_every_days, listed or worth measuring; a script both counts
	// once.
	Told   int `json:"already_told"`
	Failed int `json:"failed"`
	// Refused: users a notice cannot be addressed to (a name a command
	// could misread); never sent, and not a failure to retry.
	Refused int `json:"refused"`
	// Unset: what is not configured yet (no notify_command, no
	// notify_contact, no --notify-dir directory), a sentence each.
	Unset []string `json:"not_configured,omitempty"`
}

// Notify writes one message per user listed in the report, about the
// scripts they were not told of within the site's notify_every_days, and
// records in the ledger each one sent. A user whose notice cannot be sent
// does not stop the others; the next run tries them again.
func Notify(ctx context.Context, req NotifyRequest) (NotifyResult, error) {
	res := NotifyResult{Notices: []Notice{}, Unset: req.Unset}
	unlock, err := lockLedger(req.Ledger, req.DryRun)
	if err != nil {
		return res, err
	}
	defer unlock()
	led, err := readLedger(req.Ledger)
	if err != nil {
		return res, err
	}
	th := req.Site.Report.WithDefaults()
	every := time.Duration(th.NotifyEveryDays) * 24 * time.Hour
	led.forget(req.Now, every)
	if !req.DryRun {
		// A ledger that cannot be written would send the same notices
		// again next time: find out before the first.
		if err := led.save(req.Ledger); err != nil {
			return res, err
		}
	}
	told := map[string]bool{} // the scripts left out, by scriptIdentity
	for _, user := range usersOf(req.Report) {
		if err := ctx.Err(); err != nil {
			return res, err // interrupted: the rest wait for the next run
		}
		scripts, measures := news(req.Report, led, user, told)
		if len(scripts) == 0 && len(measures) == 0 {
			continue
		}
		n := compose(req.Report, req.Site, th, user, scripts)
		addMeasures(&n, req.Site, scripts, measures)
		n.To = req.Sender.Where(n)
		switch {
		case !safeUser.MatchString(n.User):
			// A name a file name or the mail command could misread.
			n.Err = fmt.Sprintf("user name %q is not one a notice can be addressed to", n.User)
			res.Refused++
		case req.DryRun:
		default:
			if err := req.Sender.Send(ctx, n); err != nil {
				n.Err = err.Error()
				res.Failed++
			} else if err := led.record(req.Ledger, n, req.Now); err != nil {
				return res, err
			}
		}
		res.Notices = append(res.Notices, n)
	}
	res.Told = len(told)
	return res, nil
}

// news is what the user's notice tells of: their listed scripts and
// scripts to measure the ledger has not seen within notify_every_days
// (forget dropped those told before). Those it has are added to told.
func news(rep *Report, led *ledger, user string, told map[string]bool) ([]Script, []Measure) {
	var scripts []Script
	for _, s := range rep.Scripts {
		if s.User != user {
			continue
		}
		if _, ok := led.Sent[ledgerKey(user, s)]; ok {
			told[scriptIdentity(s.group, ledgerKey(user, s))] = true
			continue
		}
		scripts = append(scripts, s)
	}
	var measures []Measure
	for _, m := range rep.ToMeasure {
		if m.User != user {
			continue
		}
		if _, ok := led.Sent[measureKey(m)]; ok {
			told[scriptIdentity(m.group, measureKey(m))] = true
			continue
		}
		measures = append(measures, m)
	}
	return scripts, measures
}

// scriptIdentity tells a script apart from the others of the report: the
// group of jobs it is of, which a row and a measurement of one script
// share; else, in a report the builder did not make, its ledger key.
func scriptIdentity(group, key string) string {
	if group != "" {
		return "group " + group
	}
	return "key " + key
}

// usersOf lists the users with listed scripts, in order of SU saved,
// then those with scripts to measure alone, in order of SU possible.
func usersOf(rep *Report) []string {
	var users []string
	for _, s := range rep.Scripts {
		if !slices.Contains(users, s.User) {
			users = append(users, s.User)
		}
	}
	for _, m := range rep.ToMeasure {
		if !slices.Contains(users, m.User) {
			users = append(users, m.User)
		}
	}
	return users
}

// measureKey is a script to measure as the ledger knows it: its user, name
// and the profile to try.
func measureKey(m Measure) string {
	return fmt.Sprintf("%s measure:%s/%s", m.User, m.Name, m.Profile)
}

// addMeasures adds the user's scripts worth measuring to the notice: the
// slice each may fit, what it would have saved there, and the command that
// settles it. A notice of those alone says so in its subject and opening.
func addMeasures(n *Notice, site *catalog.Site, scripts []Script, measures []Measure) {
	if len(measures) == 0 {
		return
	}
	var b strings.Builder
	for _, m := range measures {
		what := "jobs named “" + m.Name + "”"
		if m.Session {
			what = "sessions named “" + m.Name + "”"
		}
		if m.Script != "" {
			what = m.Script + " (" + what + ")"
		}
		unit := "job"
		if m.Session {
			unit = "session"
		}
		fmt.Fprintf(&b, "- %s: %s on %s; %s could have saved up to %s SU %s. Not known yet: %s.\n  To find out: %s\n",
			what, textutil.Plural(m.Jobs, unit), strings.Join(m.RanOn, ", "), m.Profile, catalog.FormatSU(m.SUPossible), ifWords(m.Unknown, false), m.Why, m.Command)
		n.Scripts = append(n.Scripts, measureKey(m))
	}
	if len(scripts) == 0 {
		n.Subject = fmt.Sprintf("Your GPU jobs on %s may fit a smaller GPU slice", site.Called())
		hello, rest, _ := strings.Cut(n.Body, "\n\n")
		_, rest, _ = strings.Cut(rest, "\n\n") // compose's opening is about scripts listed
		n.Body = hello + "\n\nSome of your GPU jobs may cost less on another slice, " + ifWords(measuresUnknown(measures), true) + "; one measurement settles it " +
			"(JOB.sh stands for the script, where migadvisor does not know its file):\n\n" + b.String() + "\n" + rest
		return
	}
	i := strings.Index(n.Body, "This note was written by migadvisor")
	if i < 0 {
		i = len(n.Body)
	}
	n.Body = n.Body[:i] + "These may cost less on another slice too, " + ifWords(measuresUnknown(measures), true) + "; one measurement settles it:\n\n" + b.String() + "\n" + n.Body[i:]
}

// ifWords is the condition a saving to measure rests on, by what is not
// known: "if it fits there" is wrong of a job known to fit whose runtime
// there is only predicted.
func ifWords(unknown string, they bool) string {
	words := map[string][2]string{
		UnknownRuntime: {"if it runs there as fast as predicted", "if they run there as fast as predicted"},
		UnknownBoth:    {"if it fits there and runs as fast as predicted", "if they fit there and run as fast as predicted"},
		UnknownFit:     {"if it fits there", "if they fit there"},
	}[cmp.Or(unknown, UnknownFit)]
	if they {
		return words[1]
	}
	return words[0]
}

// measuresUnknown is what the measurements settle together: one kind
// where they all settle it, else both.
func measuresUnknown(measures []Measure) string {
	kind := measures[0].Unknown
	for _, m := range measures[1:] {
		if m.Unknown != kind {
			return UnknownBoth
		}
	}
	return kind
}

// compose writes a user's notice: short, polite, and concrete: per script
// the slice that would do, the SU it would save, and the line to change.
func compose(rep *Report, site *catalog.Site, th catalog.Report, user string, scripts []Script) Notice {
	n := Notice{User: user, Subject: fmt.Sprintf("Your GPU jobs on %s could use a smaller GPU slice", site.Called())}
	jobs, saved, larger := 0, 0.0, false
	for _, s := range scripts {
		jobs += s.Jobs
		saved += s.unrounded()
		larger = larger || s.Direction == DirectionLarger
		n.Scripts = append(n.Scripts, ledgerKey(user, s))
	}
	var b strings.Builder
	fmt.Fprintf(&b, "Hello %s,\n\n", user)
	they, them := "they", "them"
	if jobs == 1 {
		they, them = "it", "it"
	}
	if larger {
		// A larger slice that runs them enough faster is no "bigger GPU
		// than needed": say what holds for both directions.
		n.Subject = fmt.Sprintf("Your GPU jobs on %s could use a GPU slice that costs less", site.Called())
		fmt.Fprintf(&b, "%s, %s of yours on %s ran on a GPU slice that cost more than another would have. "+
			"The slices below would have run %s for about %s SU less:\n\n",
			periodWords(rep), textutil.Plural(jobs, "GPU job"), site.Called(), them, catalog.FormatSU(catalog.RoundSU(saved)))
	} else {
		fmt.Fprintf(&b, "%s, %s of yours on %s asked for a bigger GPU than %s needed. "+
			"A smaller slice would have run %s for about %s SU less:\n\n",
			periodWords(rep), textutil.Plural(jobs, "GPU job"), site.Called(), they, them,
			catalog.FormatSU(catalog.RoundSU(saved)))
	}
	for _, s := range scripts {
		writeScript(&b, s)
	}
	b.WriteString(recommendCommands(scripts))
	fmt.Fprintf(&b, "This note was written by migadvisor, %s's GPU advisor; you will not hear about these %s again for %d days.",
		site.Called(), whatTold(scripts), th.NotifyEveryDays)
	if th.NotifyContact != "" {
		fmt.Fprintf(&b, " Questions are welcome at %s.", th.NotifyContact)
	}
	b.WriteString("\n")
	n.Body = b.String()
	return n
}

func writeScript(b *strings.Builder, s Script) {
	what := "jobs named “" + s.Name + "”"
	if s.Session {
		writeSession(b, s)
		return
	}
	if f := s.File(); f != "" {
		what = f + " (jobs named “" + s.Name + "”)"
	} else if s.CPUs > 0 {
		what += fmt.Sprintf(" with %s and %s of memory", textutil.Plural(int(s.CPUs), "CPU"), memory.FormatMiB(s.MemMiB))
		if s.Partition != "" {
			what += " in " + s.Partition
		}
	}
	fmt.Fprintf(b, "- %s: %s on %s; %s would do.\n", what, textutil.Plural(s.Jobs, "job"), strings.Join(s.RanOn, ", "), s.Recommended)
	writeMemory(b, s)
	switch {
	case s.TimeBudgetS > 0 && s.RuntimeS > 0:
		// The runs did what work their time limit allowed: the times are
		// that work's, and so are the SU below.
		fmt.Fprintf(b, "  Time: every run ran until its time limit stopped it, after about %s; the same work would take about %s on %s",
			approxTime(s.TimeBudgetS), approxTime(s.RuntimeS), s.Recommended)
		if s.RuntimeMaxS > s.RuntimeS*1.05 {
			fmt.Fprintf(b, ", at most about %s", approxTime(s.RuntimeMaxS))
		}
		b.WriteString(" (with the same time limit, a run there does less of it).\n")
	case s.RanS > 0 && s.RuntimeS > 0 && len(s.RanOn) == 1: // the runtimes are of one profile's runs
		fmt.Fprintf(b, "  Time: a run took about %s on %s; expect about %s on %s", approxTime(s.RanS), strings.Join(s.RanOn, ", "),
			approxTime(s.RuntimeS), s.Recommended)
		if s.RuntimeMaxS > s.RuntimeS*1.05 {
			fmt.Fprintf(b, ", at most about %s", approxTime(s.RuntimeMaxS))
		}
		b.WriteString(".\n")
	}
	there := ""
	if s.TimeBudgetS > 0 {
		there = " for the same work"
	}
	fmt.Fprintf(b, "  SU: %s spent; about %s on %s%s.\n", catalog.FormatSU(s.SUSpent), catalog.FormatSU(s.SUThere), s.Recommended, there)
	if s.RanRequest != "" {
		fmt.Fprintf(b, "  To switch, replace %s with %s in the script's #SBATCH lines.\n", s.RanRequest, s.Request)
	} else {
		fmt.Fprintf(b, "  To switch, ask for it in the script: #SBATCH %s\n", s.Request)
	}
	switch {
	case s.TimeLimit != "" && s.TimeBudgetS > 0:
		// A run goes on to its limit: the limit is what it costs.
		fmt.Fprintf(b, "  And the time limit of the same work there: #SBATCH --time=%s (a run goes on to its limit: a longer one does more work, and costs more).\n", s.TimeLimit)
	case s.TimeLimit != "":
		fmt.Fprintf(b, "  And a time limit that covers the slowest of that: #SBATCH --time=%s\n", s.TimeLimit)
	}
	b.WriteString("\n")
}

// writeMemory says what the script's GPU memory figure proves, in the
// words its kind allows: a peak or an allocated peak is what the jobs
// used; an out-of-memory message's figure is a lower bound of the need; a
// caching or preallocating framework's peak is an upper bound; with no
// figure, the runs that completed on the slice prove it fits.
func writeMemory(b *strings.Builder, s Script) {
	margin := ""
	if s.SeenMiB > 0 && s.NeedMiB > s.SeenMiB*1.01 {
		// The one margin a figure gets beyond the slice's free share: its
		// runs were of an earlier version of the script.
		margin = fmt.Sprintf(", %s with a margin for the script's edits since", memory.FormatMiB(s.NeedMiB))
	}
	switch s.MemoryKind {
	case "":
		fmt.Fprintf(b, "  GPU memory: not measured, but they %s", s.Fits)
	case memory.NeedOOM:
		fmt.Fprintf(b, "  GPU memory: they need at least %s (an out-of-memory message's figure)", memory.FormatMiB(s.NeedMiB))
	case memory.NeedCeiling:
		with := ""
		if margin != "" {
			with = ", with a margin for the script's edits since"
		}
		fmt.Fprintf(b, "  GPU memory: they need at most %s (measured by %s: the peak %s held, more than the jobs use%s)",
			memory.FormatMiB(s.NeedMiB), s.MeasuredBy, s.HeldBy, with)
	default:
		fmt.Fprintf(b, "  GPU memory: they used at most %s (measured by %s)%s", memory.FormatMiB(s.SeenMiB), s.MeasuredBy, margin)
	}
	fmt.Fprintf(b, "; %s has %s.\n", s.Recommended, memory.FormatMiB(s.UsableMiB))
}

// writeSession tells of a user's sessions of one name as recommend
// --session does: what to choose in OnDemand's form or ask salloc for,
// never a script's #SBATCH lines, which a session has none of; priced per
// hour held, with no time to expect (a session lasts as long as its user
// holds it, on any slice).
func writeSession(b *strings.Builder, s Script) {
	fmt.Fprintf(b, "- sessions named “%s”: %s on %s; %s would do.\n", s.Name, textutil.Plural(s.Jobs, "session"), strings.Join(s.RanOn, ", "),
		s.Recommended)
	writeMemory(b, s)
	fmt.Fprintf(b, "  SU: %s spent; about %s on %s for the same hours held.\n", catalog.FormatSU(s.SUSpent), catalog.FormatSU(s.SUThere),
		s.Recommended)
	if s.Change != "" {
		fmt.Fprintf(b, "  Next time: %s.\n", s.Change)
	} else {
		fmt.Fprintf(b, "  Your newest session already asks for %s: keep asking for it.\n", s.Recommended)
	}
	b.WriteString("\n")
}

// approxTime writes an estimate of a runtime as sbatch's --time reads it:
// to the minute, since seconds would claim a precision it does not have;
// under ten minutes to the second, since a minute would make a run of a
// few seconds 00:00:00, on both sides.
func approxTime(seconds float64) string {
	if seconds < 10*60 {
		return slurm.FormatSeconds(max(seconds, 1))
	}
	return slurm.FormatSeconds(math.Round(seconds/60) * 60)
}

// recommendCommands are the recommend commands the notice suggests: on
// the first script whose path is known (else a placeholder), and
// --session on each session's name. A notice of scripts to measure alone
// suggests none: each of those names its own command.
func recommendCommands(scripts []Script) string {
	if len(scripts) == 0 {
		return ""
	}
	var cmds []string
	script := ""
	for _, s := range scripts {
		switch {
		case s.Session:
			if cmd := "migadvisor recommend --session " + slurm.ShellWord(s.Name); !slices.Contains(cmds, cmd) {
				cmds = append(cmds, cmd)
			}
		case script == "" && s.File() != "":
			script = "migadvisor recommend " + slurm.ShellWord(s.File())
		}
	}
	if !slices.ContainsFunc(scripts, func(s Script) bool { return !s.Session }) {
		return "To see the evidence and what to choose, run recommend on a login node:\n\n    " + strings.Join(cmds, "\n    ") + "\n\n"
	}
	if script == "" {
		script = "migadvisor recommend path/to/your/job.sh"
	}
	cmds = append([]string{script}, cmds...)
	return "To see the evidence and the exact lines to change, run recommend on the script, on a login node:\n\n    " +
		strings.Join(cmds, "\n    ") + "\n\n"
}

// whatTold is what a notice tells of: scripts, sessions, or both.
func whatTold(scripts []Script) string {
	sessions := slices.ContainsFunc(scripts, func(s Script) bool { return s.Session })
	other := slices.ContainsFunc(scripts, func(s Script) bool { return !s.Session })
	switch {
	case sessions && other:
		return "scripts and sessions"
	case sessions:
		return "sessions"
	}
	return "scripts"
}

// periodWords is the report's period as a sentence opener.
func periodWords(rep *Report) string {
	p := rep.Period()
	return strings.ToUpper(p[:1]) + p[1:]
}

// ledgerKey is a user's script as the ledger knows it: its fingerprint,
// else what groups jobs by name (name, CPUs, memory, partition); a
// session's name alone, as its jobs are grouped.
func ledgerKey(user string, s Script) string {
	switch {
	case s.Session:
		return user + " session:" + s.Name
	case s.Fingerprint != "":
		return user + " " + s.Fingerprint
	}
	return fmt.Sprintf("%s name:%s/%d/%g/%s", user, s.Name, s.CPUs, s.MemMiB, s.Partition)
}

// ledger remembers when each user was last told of each script.
type ledger struct {
	Version int                  `json:"version"`
	Sent    map[string]time.Time `json:"sent"` // ledgerKey → when
}

const ledgerVersion = 1

func readLedger(path string) (*ledger, error) {
	led := &ledger{Version: ledgerVersion, Sent: map[string]time.Time{}}
	data, err := os.ReadFile(path)
	if errors.Is(err, os.ErrNotExist) {
		return led, nil
	}
	if err != nil {
		return nil, fmt.Errorf("read the notice ledger: %w", err)
	}
	if err := decodeLedger(path, data, led); err != nil {
		return nil, err
	}
	if led.Sent == nil {
		led.Sent = map[string]time.Time{}
	}
	return led, nil
}

// record notes a sent notice and saves the ledger at once: a run cut
// short after a send does not send it again.
func (l *ledger) record(path string, n Notice, now time.Time) error {
	for _, k := range n.Scripts {
		l.Sent[k] = now
	}
	if err := l.save(path); err != nil {
		return fmt.Errorf("the notice to %s was sent but not recorded: %w", n.User, err)
	}
	return nil
}

func (l *ledger) save(path string) error {
	data, err := encodeLedger(l)
	if err != nil {
		return err
	}
	if err := atomicfile.Write(path, data, 0o600); err != nil {
		return fmt.Errorf("write the notice ledger: %w", err)
	}
	return nil
}
