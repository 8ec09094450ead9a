package advisor

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/migadvisor/migadvisor/advisor/base/history"
	"github.com/migadvisor/migadvisor/advisor/base/history/historytest"
	"github.com/migadvisor/migadvisor/advisor/base/lint"
	"github.com/migadvisor/migadvisor/catalog"
	"github.com/migadvisor/migadvisor/catalog/catalogtest"
	"github.com/migadvisor/migadvisor/slurm"
)

func openReadOnly(ctx context.Context, path string) (*history.Store, error) {
	return history.OpenWith(ctx, path, history.Options{ReadOnly: true})
}

var readOnly = HistoryOpeners{Own: openReadOnly, SiteWide: openReadOnly}

// siteWith is Wulver with its site-wide history at db ("": none).
func siteWith(t *testing.T, db string) *catalog.Site {
	t.Helper()
	site, err := catalog.Builtin("wulver")
	if err != nil {
		t.Fatal(err)
	}
	site.History.SiteDB = db
	return site
}

// One rule for which histories advice reads: the user's (none when it does
// not exist yet), and the site's unless it is the same file, or every job
// is wanted; an unreadable site history leaves the user's, with a warning.
func TestHistories(t *testing.T) {
	ctx := context.Background()
	own := historytest.FromDump(t, siteWith(t, ""), trainDump).Path()
	shared := historytest.FromDump(t, siteWith(t, ""), trainDump).Path()
	missing := filepath.Join(t.TempDir(), "none.db")
	cases := []struct {
		name     string
		req      HistoriesRequest
		own      bool
		siteWide int
		warning  string
	}{
		{"own and the site's", HistoriesRequest{UserDB: own, Site: siteWith(t, shared)}, true, 1, ""},
		{"no site history", HistoriesRequest{UserDB: own, Site: siteWith(t, "")}, true, 0, ""},
		{"the site's is the user's", HistoriesRequest{UserDB: own, Site: siteWith(t, own)}, true, 0, ""},
		{"every job", HistoriesRequest{UserDB: own, Site: siteWith(t, shared), AllJobs: true}, true, 0, ""},
		{"no history of the user's yet", HistoriesRequest{UserDB: missing, Site: siteWith(t, shared)}, false, 1, ""},
		{"no user history named", HistoriesRequest{Site: siteWith(t, shared)}, false, 1, ""},
		{"the site's unreadable", HistoriesRequest{UserDB: own, Site: siteWith(t, missing)}, true, 0,
			"the site-wide history is not readable, so only yours is used: "},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			hs, err := Histories(ctx, tc.req, readOnly)
			if err != nil {
				t.Fatal(err)
			}
			defer hs.Close()
			if (hs.Own != nil) != tc.own || len(hs.SiteWide) != tc.siteWide || !strings.HasPrefix(hs.Warning, tc.warning) || (tc.warning == "") != (hs.Warning == "") {
				t.Errorf("own %v, %d site-wide, warning %q", hs.Own != nil, len(hs.SiteWide), hs.Warning)
			}
		})
	}
	// The user's history failing is the command's failure: nothing to advise from.
	broken := HistoryOpeners{Own: func(context.Context, string) (*history.Store, error) { return nil, errors.New("disk on fire") },
		SiteWide: openReadOnly}
	if _, err := Histories(ctx, HistoriesRequest{UserDB: own, Site: siteWith(t, shared)}, broken); err == nil || err.Error() != "disk on fire" {
		t.Errorf("a broken user history: %v", err)
	}
	notYet := HistoryOpeners{Own: func(context.Context, string) (*history.Store, error) { return nil, fs.ErrNotExist }, SiteWide: openReadOnly}
	if hs, err := Histories(ctx, HistoriesRequest{UserDB: own}, notYet); err != nil || hs.Own != nil {
		t.Errorf("a user history not created yet: %+v, %v", hs, err)
	}
}

// fakeStarts is the scheduler's answer to `sbatch --test-only`: a start
// time per profile, then err.
type fakeStarts struct {
	starts map[string]time.Time
	err    error
	dir    string // where it was asked to submit from
}

func (f *fakeStarts) StartEstimates(_ context.Context, _ *catalog.Site, _ *slurm.Script, dir string) (map[string]time.Time, error) {
	f.dir = dir
	return f.starts, f.err
}

// adviseFixture is a user (alice) with a history holding one completed
// run of a full-A100 script on 1g.10gb, submitted on day.
func adviseFixture(t *testing.T, day time.Time) AdviseRequest {
	t.Helper()
	site := siteWith(t, "")
	at := day.UTC().Format("2006-01-02T15:04:05")
	dump := "JobIDRaw|JobID|Cluster|User|State|ExitCode|Submit|Start|End|ElapsedRaw|NNodes|AllocCPUS|ReqMem|AllocTRES|JobName\n" +
		"11|11|migdev|alice|COMPLETED|0:0|" + at + "|" + at + "|" + at + "|60|1|4|16G|cpu=4,gres/gpu:a100_10g=1,gres/gpu=1,mem=16G,node=1|train.sh\n"
	st := historytest.FromDump(t, site, dump)
	path := filepath.Join(t.TempDir(), "train.sh")
	s := catalogtest.WriteScript(t, path, "#!/bin/bash\n#SBATCH -p gpu\n#SBATCH --gres=gpu:a100:1\n#SBATCH --time=5\n#SBATCH --cpus-per-task=4 --mem=16G\npython train.py\n")
	sub := history.Submission{Cluster: "migdev", JobID: "11", Fingerprint: s.Fingerprint(), Source: path, Script: path, Submitted: day}
	if err := st.RecordSubmissions(context.Background(), []history.Submission{sub}); err != nil {
		t.Fatal(err)
	}
	return AdviseRequest{Path: path, Script: s, Site: site, UserDB: st.Path(), User: "alice", Now: time.Now(),
		Options: Options{Objective: ObjectiveSU}, SubmitDir: t.TempDir()}
}

// The saving a month is at the user's rate of runs in the 30 days up to
// today: a script last run 60 days ago has none (it had one when the days
// counted back from its newest run).
func TestAdviseCountsTheMonthlyRateBackFromToday(t *testing.T) {
	ctx := context.Background()
	for _, tc := range []struct {
		ago     int
		monthly bool
	}{{1, true}, {60, false}} {
		req := adviseFixture(t, time.Now().AddDate(0, 0, -tc.ago))
		rec, err := Advise(ctx, req, AdviseDeps{Open: readOnly})
		if err != nil {
			t.Fatal(err)
		}
		ch := rec.Change
		if rec.Recommended == nil || ch == nil || ch.SUPerRun == nil || *ch.SUPerRun <= 0 {
			t.Fatalf("run %d days ago: recommended %v, change %+v", tc.ago, rec.Recommended, ch)
		}
		if (ch.SUPerMonth != nil) != tc.monthly || (ch.RunsPerMonth == 1) != tc.monthly {
			t.Errorf("run %d days ago: %d runs a month, saving %v", tc.ago, ch.RunsPerMonth, ch.SUPerMonth)
		}
	}
}

// For the turnaround objective the scheduler's start estimates replace the
// history's queue waits, counted from Now, and a note says which were used.
func TestAdviseAsksTheSchedulerForTurnaround(t *testing.T) {
	ctx := context.Background()
	req := adviseFixture(t, time.Now())
	req.Options.Objective = ObjectiveTurnaround
	later := req.Now.Add(2 * time.Hour)
	starts := &fakeStarts{starts: map[string]time.Time{"1g.10gb": later, "2g.20gb": req.Now, "3g.40gb": req.Now, "full": req.Now}}
	rec, err := Advise(ctx, req, AdviseDeps{Open: readOnly, Starts: starts})
	if err != nil {
		t.Fatal(err)
	}
	if w := rec.Profiles[0].QueueWaitS; w == nil || *w != 7200 || starts.dir != req.SubmitDir {
		t.Errorf("1g.10gb's wait %v, asked from %q", w, starts.dir)
	}
	if !strings.Contains(strings.Join(rec.Notes, "\n"), "queue waits: sbatch --test-only estimates of the start time now") {
		t.Errorf("notes %q", rec.Notes)
	}
	starts = &fakeStarts{starts: map[string]time.Time{"1g.10gb": later}, err: errors.New("start estimate for 2g.20gb:\n  sbatch: error: no\n")}
	rec, err = Advise(ctx, req, AdviseDeps{Open: readOnly, Starts: starts})
	want := "queue waits: sbatch --test-only estimates for 1 profile, medians from the history for the rest, where it has them (start estimate for 2g.20gb: sbatch: error: no)"
	if err != nil || !strings.Contains(strings.Join(rec.Notes, "\n"), want) {
		t.Errorf("notes %q, %v", rec.Notes, err)
	}
	// Another objective does not ask.
	req.Options.Objective = ObjectiveSU
	starts = &fakeStarts{err: errors.New("asked")}
	if rec, err = Advise(ctx, req, AdviseDeps{Open: readOnly, Starts: starts}); err != nil || strings.Contains(fmt.Sprint(rec.Notes), "queue waits") {
		t.Errorf("objective su: notes %q, %v", rec.Notes, err)
	}
}

// With no runs, the reference benchmark named, else the one the script
// looks like, stands in; a name the site does not have is a PriorError
// that names those it has.
func TestAdviseChoosesThePrior(t *testing.T) {
	ctx := context.Background()
	site := siteWith(t, "")
	path := filepath.Join(t.TempDir(), "md.sh")
	s := catalogtest.WriteScript(t, path, "#!/bin/bash\n#SBATCH --gres=gpu:a100:1\n#SBATCH --time=1:00:00\ngmx mdrun -deffnm md\n")
	req := AdviseRequest{Path: path, Script: s, Site: site, UserDB: filepath.Join(t.TempDir(), "none.db"), Now: time.Now(),
		Options: Options{Objective: ObjectiveSU}}
	rec, err := Advise(ctx, req, AdviseDeps{Open: readOnly})
	if err != nil || rec.Basis != BasisPrior || rec.Prior == nil {
		t.Fatalf("recognised: %+v, %v", rec, err)
	}
	req.Prior = "nope"
	_, err = Advise(ctx, req, AdviseDeps{Open: readOnly})
	var pe *PriorError
	if !errors.As(err, &pe) || pe.Name != "nope" || len(pe.Known) == 0 || !strings.HasPrefix(err.Error(), `"nope" is not a reference benchmark of wulver (`) {
		t.Errorf("unknown prior: %v", err)
	}
}

// The site-wide history unreadable, the advice stands on the user's, and
// Warn hears why; a script error names the script's file.
func TestAdviseWarnsAndGoesOn(t *testing.T) {
	ctx := context.Background()
	req := adviseFixture(t, time.Now())
	req.Site.History.SiteDB = filepath.Join(t.TempDir(), "gone", "site.db")
	var warned []string
	rec, err := Advise(ctx, req, AdviseDeps{Open: readOnly, Warn: func(msg string) { warned = append(warned, msg) }})
	if err != nil || rec.Runs != 1 || len(warned) != 1 || !strings.HasPrefix(warned[0], "the site-wide history is not readable, so only yours is used: ") {
		t.Errorf("runs %v, warned %q, %v", rec, warned, err)
	}
	req.Script = catalogtest.WriteScript(t, req.Path, "#!/bin/bash\n#SBATCH --gres=gpu:v100:1\nrun\n")
	_, err = Advise(ctx, req, AdviseDeps{Open: readOnly})
	var fe *catalog.FileError
	if !errors.As(err, &fe) || fe.File != req.Path {
		t.Errorf("unknown GPU: %v", err)
	}
}

// A script with a late GPU directive: recommend and the wrapper both say
// so in one line, and a probe (which would submit it) gives way to lint.
func TestSubmissionProblemsComeFirstAndStopTheProbe(t *testing.T) {
	script := slurm.Parse("job.sh", []byte("#!/bin/bash\n#SBATCH --mem=4G\necho start\n#SBATCH --gres=gpu:a100_10g:1\npython train.py\n"))
	problems := lint.SubmissionProblems(script, catalogtest.Wulver(t), "job.sh", lint.Options{})
	if len(problems) != 1 || !strings.HasPrefix(problems[0], "job.sh:4: ") || !strings.HasSuffix(problems[0], "(late-directive)") {
		t.Fatalf("problems %q", problems)
	}
	rec := &Recommendation{Notes: []string{"a note"}}
	rec.SetNext(ProbeStep("job.sh", nil, ""))
	rec.AddProblems(problems, "job.sh")
	if rec.NextStep.Kind != NextLint || len(rec.Notes) != 2 || rec.Notes[0] != problems[0] {
		t.Errorf("after the problems: next %+v, notes %q", rec.NextStep, rec.Notes)
	}
	clean := &Recommendation{}
	clean.SetNext(ProbeStep("job.sh", nil, ""))
	if clean.AddProblems(nil, "job.sh"); clean.NextStep.Kind != NextProbe {
		t.Errorf("no problems changed the next step: %+v", clean.NextStep)
	}
}
