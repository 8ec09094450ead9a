//go:build !noreport

package main

// argv → options: each command's flags and arguments bound to its options
// by its xxxOptionsFrom, as its Action binds them, and the command lines no
// work can be done with refused as usage errors before any. What the
// options then print is TestGolden's (options → output).

import (
	"os"
	"path/filepath"
	"reflect"
	"testing"
	"time"

	"github.com/urfave/cli/v2"

	"github.com/migadvisor/migadvisor/advisor/base/history"
	"github.com/migadvisor/migadvisor/catalog"
)

// binding is a command line and the options it binds (their Global
// aside: --db's environment, the test's), or the usage error it is.
type binding[O any] struct {
	args []string
	want O
	err  string
}

// checkBindings binds each case's args with the command's own flags; pin
// clears what the flags do not decide (the clock, the user who runs the
// tests) before the options are compared.
func checkBindings[O any](t *testing.T, cmd func() *cli.Command, from func(*cli.Context) (O, error), pin func(*O), cases []binding[O]) {
	t.Helper()
	for _, c := range cases {
		got, err := optionsOf(t, cmd(), from, c.args...)
		if c.err != "" {
			if _, usage := err.(usageError); !usage || err.Error() != c.err {
				t.Errorf("%s %q: error %v, want the usage error %q", cmd().Name, c.args, err, c.err)
			}
			continue
		}
		if pin != nil {
			pin(&got)
		}
		if err != nil || !reflect.DeepEqual(got, c.want) {
			t.Errorf("%s %q:\n got %+v, %v\nwant %+v", cmd().Name, c.args, got, err, c.want)
		}
	}
}

// bindingGlobal is what every command's Global binds to in these tests.
func bindingGlobal(t *testing.T) globalFlags {
	t.Helper()
	isolate(t)
	t.Setenv("MIGADVISOR_DB", "/h/history.db")
	t.Setenv("MIGADVISOR_CLUSTER", "")
	t.Setenv("MIGADVISOR_SLURM_BIN", "")
	return globalFlags{DB: "/h/history.db"}
}

func ptr[T any](v T) *T { return &v }

func TestSUFlagsBindTheOptions(t *testing.T) {
	g := bindingGlobal(t)
	checkBindings(t, suCommand, suOptionsFrom, nil, []binding[suOptions]{
		{args: []string{"job.sh"}, want: suOptions{Global: g, Script: "job.sh"}},
		{args: []string{"--profile", "2g.20gb", "--cpus", "4", "--mem", "4G", "--hours", "0.5", "--json"},
			want: suOptions{Global: g, JSON: true, Over: catalog.Overrides{Profile: ptr("2g.20gb"), CPUs: ptr(4), MemMiB: ptr(4096.0), Hours: ptr(0.5)}}},
		{args: []string{"--gpus", "2", "--time", "1-00:00:00", "--qos", "low", "--partition", "gpu", "--exclusive", "job.sh"},
			want: suOptions{Global: g, Script: "job.sh", Over: catalog.Overrides{GPUs: ptr(2), Hours: ptr(24.0), QoS: ptr("low"), Partition: ptr("gpu"), Exclusive: ptr(true)}}},
		{args: []string{"a.sh", "b.sh"}, err: "su takes at most one JOB.sh"},
		{args: []string{"--hours", "1", "--time", "1:00:00"}, err: "give --hours or --time, not both"},
		{args: []string{"--hours", "-1"}, err: "--hours is a run time, a finite number ≥ 0, not -1"},
		{args: []string{"--time", "UNLIMITED"}, err: `--time "UNLIMITED" is not a finite Slurm time`},
	})
}

func TestHistoryFlagsBindTheOptions(t *testing.T) {
	g := bindingGlobal(t)
	me := currentUserName()
	checkBindings(t, historyCommand, historyOptionsFrom, nil, []binding[historyOptions]{
		{args: nil, want: historyOptions{Global: g, Limit: 100, User: me}},
		{args: []string{"--limit", "0", "--json", "job.sh"}, want: historyOptions{Global: g, Script: "job.sh", JSON: true, User: me}},
		{args: []string{"--scripts"}, want: historyOptions{Global: g, Limit: 100, User: me, List: "scripts"}},
		{args: []string{"--sessions", "--limit", "5"}, want: historyOptions{Global: g, Limit: 5, User: me, List: "sessions"}},
		{args: []string{"a.sh", "b.sh"}, err: "history takes at most one JOB.sh"},
		{args: []string{"--scripts", "--sessions"}, err: "--scripts and --sessions are two lists: ask for one"},
		{args: []string{"--sessions", "job.sh"}, err: "--sessions lists every one of yours: it takes no JOB.sh"},
		{args: []string{"--limit", "-1"}, err: "--limit is a number of jobs, 0 for all, not -1"},
	})
}

func TestStatusFlagsBindTheOptions(t *testing.T) {
	g := bindingGlobal(t)
	abs, err := os.Getwd()
	if err != nil {
		t.Fatal(err)
	}
	clock := func(o *statusOptions) {
		if o.now.IsZero() || time.Since(o.now) > time.Minute {
			t.Errorf("status's clock: %v", o.now)
		}
		o.now = time.Time{}
	}
	checkBindings(t, statusCommand, statusOptionsFrom, clock, []binding[statusOptions]{
		{args: nil, want: statusOptions{Global: g, ids: []string{}}},
		{args: []string{"--all", "--json", "--slurm-bin", "/s", "2", "3"},
			want: statusOptions{Global: g, Slurm: slurmFlags{Bin: "/s"}, ids: []string{"2", "3"}, all: true, json: true}},
		{args: []string{"--sweep", "probe-1"}, want: statusOptions{Global: g, ids: []string{}, sweep: "probe-1", sweepAbs: filepath.Join(abs, "probe-1")}},
		{args: []string{"abc"}, err: `status: "abc" is not a job id (use the number sbatch printed; for an array, its first part)`},
	})
}

func TestLintFlagsBindTheOptions(t *testing.T) {
	g := bindingGlobal(t)
	here, err := os.Getwd()
	if err != nil {
		t.Fatal(err)
	}
	checkBindings(t, lintCommand, lintOptionsFrom, nil, []binding[lintOptions]{
		{args: []string{"job.sh"}, want: lintOptions{Global: g, Script: "job.sh", SubmitDir: here}},
		{args: []string{"--json", "job.sh"}, want: lintOptions{Global: g, Script: "job.sh", SubmitDir: here, JSON: true}},
		{args: nil, err: "lint needs JOB.sh"},
		{args: []string{"a.sh", "b.sh"}, err: "lint takes one JOB.sh, not 2 arguments"},
	})
}

func TestCatalogFlagsBindTheOptions(t *testing.T) {
	g := bindingGlobal(t)
	checkBindings(t, catalogCommand, catalogOptionsOf("catalog"), nil, []binding[catalogOptions]{
		{args: nil, want: catalogOptions{Global: g}},
		{args: []string{"--json"}, want: catalogOptions{Global: g, JSON: true}},
		{args: []string{"x"}, err: `catalog takes no arguments, not "x"`},
	})
}

func TestDocsFlagsBindTheOptions(t *testing.T) {
	g := bindingGlobal(t)
	checkBindings(t, docsCommand, docsOptionsFrom, nil, []binding[docsOptions]{
		{args: []string{"--out", "site"}, want: docsOptions{Global: g, Out: "site", CSVDir: "site", Format: "mkdocs"}},
		{args: []string{"--out", "site", "--csv-dir", "tables", "--format", "md", "--workloads", "a,b", "--json"},
			want: docsOptions{Global: g, Out: "site", CSVDir: "tables", Format: "md", Workloads: []string{"a", "b"}, JSON: true}},
		{args: nil, err: "docs needs --out DIR"},
		{args: []string{"site"}, err: "docs takes no arguments (did you mean --out site?)"},
		{args: []string{"--out", "site", "--format", "html"}, err: `--format: "html" is not one of csv, md, mkdocs`},
	})
}

func TestDoctorFlagsBindTheOptions(t *testing.T) {
	g := bindingGlobal(t)
	checkBindings(t, doctorCommand, doctorOptionsFrom, nil, []binding[doctorOptions]{
		{args: nil, want: doctorOptions{Global: g, MaxAge: 2 * time.Hour}},
		{args: []string{"--max-age", "30m", "--json"}, want: doctorOptions{Global: g, MaxAge: 30 * time.Minute, JSON: true}},
		{args: []string{"--max-age", "0s"}, err: "--max-age is a duration such as 2h, not 0s"},
	})
}

func TestPublishFlagsBindTheOptions(t *testing.T) {
	g := bindingGlobal(t)
	checkBindings(t, publishCommand, publishOptionsFrom, nil, []binding[publishOptions]{
		{args: []string{"/shared"}, want: publishOptions{Global: g, Dir: "/shared"}},
		{args: []string{"--json", "--site-store", "off", "/shared"}, want: publishOptions{Global: g, Dir: "/shared", JSON: true, SiteStore: "off"}},
		{args: nil, err: "publish needs the directory to publish in: migadvisor publish DIR"},
		{args: []string{"a", "b"}, err: "publish takes one directory, not 2 arguments: migadvisor publish DIR"},
	})
}

func TestAccuracyFlagsBindTheOptions(t *testing.T) {
	g := bindingGlobal(t)
	checkBindings(t, accuracyCommand, accuracyOptionsFrom, nil, []binding[accuracyOptions]{
		{args: nil, want: accuracyOptions{Global: g, Tables: []string{}}},
		{args: []string{"--gpu", "A100-40GB", "--json", "lab.csv", "h.csv"}, want: accuracyOptions{Global: g, Tables: []string{"lab.csv", "h.csv"}, GPU: "A100-40GB", JSON: true}},
		{args: []string{"--gpu", "A100-40GB"}, err: "--gpu names the GPU model the tables were measured on: give TABLE.csv"},
	})
}

// The period of report and plan: dates in the local zone, --until alone
// the 30 days before it.
func TestReportAndPlanFlagsBindThePeriod(t *testing.T) {
	g := bindingGlobal(t)
	day := func(m time.Month, d int) time.Time { return time.Date(2026, m, d, 0, 0, 0, 0, time.Local) }
	november := history.Period{From: day(11, 1), Before: day(12, 1)}
	var period history.Period
	// The period is compared apart: times are equal, not identical.
	apart := func(p *history.Period) {
		period, *p = *p, history.Period{}
	}
	clock := func(o *reportOptions) {
		apart(&o.Period)
		if time.Since(o.Now) > time.Minute {
			t.Errorf("report's clock: %v", o.Now)
		}
		o.Now = time.Time{}
	}
	for _, c := range []struct {
		args   []string
		want   reportOptions
		period history.Period
	}{
		{[]string{"--since", "2026-11-01", "--until", "2026-12-01"}, reportOptions{Global: g, Format: "md", Ledger: "/h/notices.json"}, november},
		{[]string{"--until", "2026-12-01", "--csv", "--user", "alice", "--min-su-saved", "0", "--min-runs", "3"},
			reportOptions{Global: g, Format: "md", Ledger: "/h/notices.json", CSV: true, User: "alice", MinSUSaved: ptr(0.0), MinRuns: ptr(3)},
			history.Period{From: day(12, 1).AddDate(0, 0, -30), Before: day(12, 1)}},
		{[]string{"--since", "2026-11-01", "--until", "2026-12-01", "--notify-dir", "out", "--dry-run", "--ledger", "l.json"},
			reportOptions{Global: g, Format: "md", Ledger: "l.json", Notify: true, NotifyDir: "out", DryRun: true}, november},
		{[]string{"--since", "2026-11-01", "--until", "2026-12-01", "--page", "docs", "--format", "mkdocs", "--json"},
			reportOptions{Global: g, Format: "mkdocs", Ledger: "/h/notices.json", Page: "docs", JSON: true}, november},
	} {
		checkBindings(t, reportCommand, reportOptionsFrom, clock, []binding[reportOptions]{{args: c.args, want: c.want}})
		if !period.From.Equal(c.period.From) || !period.Before.Equal(c.period.Before) {
			t.Errorf("report %q: period %v, want %v", c.args, period, c.period)
		}
	}
	checkBindings(t, reportCommand, reportOptionsFrom, nil, []binding[reportOptions]{
		{args: []string{"job.sh"}, err: "report takes no arguments: its flags select the jobs (--since, --until, --month, --user)"},
		{args: []string{"--month", "2026-13"}, err: `--month "2026-13": give a month (2026-10) or last`},
		{args: []string{"--month", "last", "--since", "7d"}, err: "--month is the period: give it without --since and --until"},
		{args: []string{"--since", "2026-11-02", "--until", "2026-11-01"}, err: "--since (2026-11-02 00:00:00) must be before --until (2026-11-01 00:00:00)"},
		{args: []string{"--min-runs", "0"}, err: "--min-runs 0: give 1 run or more"},
		{args: []string{"--min-su-saved", "-1"}, err: "--min-su-saved -1: give 0 SU or more"},
		{args: []string{"--json", "--csv"}, err: "--json and --csv both print the report: give one"},
		{args: []string{"--dry-run"}, err: "--dry-run shows the notices --notify would send: give --notify (or --notify-dir) with it"},
		{args: []string{"--format", "mkdocs"}, err: "--format is the --page's format: give --page DIR with it"},
		{args: []string{"--page", "docs", "--format", "csv"}, err: `--format "csv": the page is md or mkdocs`},
		{args: []string{"--page", "docs", "--user", "alice"}, err: "--page writes the site's docs page, of every user's jobs: give it without --user"},
	})

	plan := func(o *planOptions) { apart(&o.Period) }
	checkBindings(t, planCommand, planOptionsFrom, plan, []binding[planOptions]{
		{args: []string{"--since", "2026-11-01", "--until", "2026-12-01"}, want: planOptions{Global: g, PerNode: 4, Top: 3}},
		{args: []string{"--since", "2026-11-01", "--until", "2026-12-01", "--gpus", "8", "--gpus-per-node", "2", "--current", "3g.40gb,3g.40gb",
			"--current", "2:full", "--top", "5", "--json", "--page", "p", "--site-store", "off"},
			want: planOptions{Global: g, GPUs: 8, PerNode: 2, Current: []string{"3g.40gb,3g.40gb", "2:full"}, Top: 5, JSON: true, Page: "p", SiteStore: "off"}},
		{args: []string{"--from-slurm", "--slurm-bin", "/s", "--since", "2026-11-01", "--until", "2026-12-01"},
			want: planOptions{Global: g, Slurm: slurmFlags{Bin: "/s"}, FromSlurm: true, PerNode: 4, Top: 3}},
	})
	if !period.From.Equal(november.From) || !period.Before.Equal(november.Before) {
		t.Errorf("plan: period %v, want %v", period, november)
	}
	checkBindings(t, planCommand, planOptionsFrom, nil, []binding[planOptions]{
		{args: []string{"x"}, err: "plan takes no arguments: its flags select the jobs (--since, --until, --month) and the GPUs (--gpus, --current)"},
		{args: []string{"--current", "full"}, err: "--current and --gpus-per-node describe the GPUs --gpus counts: give --gpus with them"},
		// Seen in review: --gpus -3 used the site file's GPUs without a word.
		{args: []string{"--gpus", "-3"}, err: "--gpus -3: give the site's number of GPUs, 1 or more"},
		{args: []string{"--gpus", "4", "--gpus-per-node", "0"}, err: "--gpus-per-node 0: give the GPUs of one node, 1 or more"},
		{args: []string{"--gpus", "2", "--from-slurm"}, err: "--gpus and --from-slurm both give today's GPUs: give one"},
		{args: []string{"--top", "0"}, err: "--top 0: show 1 layout or more"},
	})
}
