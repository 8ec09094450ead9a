//go:build !noreport

package main

import (
	"encoding/json"
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/migadvisor/migadvisor/advisor/app/savings"
	"github.com/migadvisor/migadvisor/advisor/app/sitereplay"
	"github.com/migadvisor/migadvisor/catalog"
)

var (
	siteReplaySeeds  = flag.Int("site-replay-seeds", 3, "site replay: how many generated months to score (seeds 1..N)")
	siteReplayKeep   = flag.String("site-replay-keep", "", "site replay: keep each month's files and history under this directory")
	siteReplayUpdate = flag.Bool("site-replay-update", false, "site replay: write the first month's tables into "+siteReplayDoc)
)

// siteReplayDoc shows the first month's tables, which TestSiteReplay
// checks against a fresh run.
const siteReplayDoc = "../../docs/how-it-works/site-replay.md"

// replayResult is one generated month scored: the report's advice and the
// rules', with what the month allows and the scripts left to measure.
type replayResult struct {
	scores   []sitereplay.Score
	classes  []sitereplay.ClassRow
	possible sitereplay.Possible
	cover    sitereplay.Coverage
	left     []sitereplay.Left
	measured []string // each script to measure, as its probe would find it
}

// replayMonth runs the admin's plain flow on a generated month (collect
// its accounting and output files into a site history, then report --json
// on the month) and scores the report's advice and the three rules on the
// month's truth.
func replayMonth(t *testing.T, opts sitereplay.Options) replayResult {
	t.Helper()
	isolate(t)
	dir := t.TempDir()
	if *siteReplayKeep != "" {
		dir = filepath.Join(*siteReplayKeep, fmt.Sprintf("seed%d-tres%v-scripts%v", opts.Seed, opts.GPUTRES, !opts.ScriptsFrom.IsZero()))
		os.RemoveAll(dir)
	}
	m := sitereplay.Generate(opts)
	files, err := m.Write(dir)
	if err != nil {
		t.Fatal(err)
	}
	t.Setenv("MIGADVISOR_DB", filepath.Join(dir, "site.db"))
	args := []string{"collect", "--sacct-file", files.Dump, "--outputs", files.Outputs}
	if files.Scripts != "" {
		args = append(args, "--scripts-file", files.Scripts)
	}
	if _, errOut, code := migadvisor(t, args...); code != 0 {
		t.Fatalf("collect: exit %d: %s", code, errOut)
	}
	from, until := m.Period()
	out, errOut, code := migadvisor(t, "report", "--json", "--since", from.Format("2006-01-02"), "--until", until.Format("2006-01-02"))
	if code != 0 {
		t.Fatalf("report: exit %d: %s", code, errOut)
	}
	var rep struct {
		savings.Report
		ToMeasure []struct {
			User    string   `json:"user"`
			Name    string   `json:"job_name"`
			Profile string   `json:"profile"`
			JobIDs  []string `json:"job_ids"`
			SU      float64  `json:"su_possible"`
		} `json:"to_measure"`
	}
	if err := json.Unmarshal([]byte(out), &rep); err != nil {
		t.Fatalf("report --json: %v\n%s", err, out)
	}
	site, err := catalog.Builtin("wulver")
	if err != nil {
		t.Fatal(err)
	}
	sc := sitereplay.Scorer{Site: site, Month: m}
	advice := reportAdvice(t, m, rep.Scripts)
	res := replayResult{scores: []sitereplay.Score{sc.Score("migadvisor report", advice)}}
	all := []map[int]string{advice}
	for _, r := range sitereplay.Rules {
		a := r.Advice(m)
		all = append(all, a)
		res.scores = append(res.scores, sc.Score(r.Name+" (→ "+r.Target+")", a))
	}
	res.classes = sc.ByClass(all)
	_, res.possible = sc.Allows()
	var measure []sitereplay.UserJob
	for _, s := range rep.ToMeasure {
		measure = append(measure, sitereplay.UserJob{User: s.User, Name: s.Name})
	}
	res.cover = sc.Cover(advice, measure)
	for _, m := range rep.ToMeasure {
		res.measured = append(res.measured, probeFinds(sc, m.User, m.Name, m.Profile, m.JobIDs, m.SU))
	}
	res.left = sc.Uncovered(advice, measure)
	return res
}

// probeFinds says what measuring a listed script on its profile would
// find, by the month's truth: what its jobs would save there against
// where they ran, or how many would not fit. It tells a real next step
// from padding; the coverage score does not look at it.
func probeFinds(sc sitereplay.Scorer, user, name, profile string, ids []string, possible float64) string {
	try := map[int]string{}
	for _, id := range ids {
		if n, err := strconv.Atoi(id); err == nil {
			try[n] = profile
		}
	}
	s := sc.Score("", try)
	return fmt.Sprintf("%s %s → %s: %.0f SU possible; truly saves %.0f there against where they ran, %d of %d jobs would not fit",
		user, name, profile, possible, s.Saved, s.Killed, len(try))
}

// reportAdvice is the profile the report sends each job of its listed
// scripts to, by the ids it lists. A row whose ids are not all its jobs,
// or name a job the month does not hold, fails the test: the score must
// see every job it counts.
func reportAdvice(t *testing.T, m *sitereplay.Month, scripts []savings.Script) map[int]string {
	t.Helper()
	byID := map[int]*sitereplay.Job{}
	for _, j := range m.Jobs {
		byID[j.ID] = j
	}
	out := map[int]string{}
	for _, s := range scripts {
		if len(s.JobIDs) != s.Jobs {
			t.Fatalf("the report's row of %s %s lists %d ids of its %d jobs", s.User, s.Name, len(s.JobIDs), s.Jobs)
		}
		for _, id := range s.JobIDs {
			n, err := strconv.Atoi(id)
			if err != nil || byID[n] == nil {
				t.Fatalf("the report lists job %q of %s %s, which the month does not hold", id, s.User, s.Name)
			}
			out[n] = s.Recommended
		}
	}
	return out
}

// The report on a generated month of a MIG site, beside the rules sites
// run, scored on the month's truth: whatever else it does, its advice
// kills no job. `make site-replay` prints the tables; the first month's,
// and the summary of three months with and without Slurm's GPU figures,
// are checked against the docs that show them.
func TestSiteReplay(t *testing.T) {
	var first strings.Builder
	var months []sitereplay.MonthScore
	var compact strings.Builder
	// Each month three ways: with Slurm's GPU figures, without them, and
	// with them and the scripts slurmdbd stored from the 15th on
	// (AccountingStoreFlags=job_script set mid-month).
	for _, v := range []struct{ tres, scripts bool }{{true, false}, {false, false}, {true, true}} {
		tres := v.tres
		for seed := 1; seed <= *siteReplaySeeds; seed++ {
			name := fmt.Sprintf("seed%d/gpuTRES=%v", seed, tres)
			opts := sitereplay.Options{Seed: uint64(seed), GPUTRES: tres}
			if v.scripts {
				name += "/scripts"
				opts.ScriptsFrom = sitereplay.DefaultMonth.AddDate(0, 0, 14)
			}
			t.Run(name, func(t *testing.T) {
				res := replayMonth(t, opts)
				var b strings.Builder
				sitereplay.WriteTable(&b, res.scores, res.possible, &res.cover)
				t.Logf("%s\n%s", name, b.String())
				for _, c := range res.classes {
					t.Logf("%-10s jobs %3d allows %7.1f moved %v killed %v net %.0f", c.Class, c.Jobs, c.Allows, c.Moved, c.Killed, c.Saved)
				}
				for _, m := range res.measured {
					t.Logf("to measure: %s", m)
				}
				for _, l := range res.left {
					t.Logf("left: %s %s (%s): %.0f SU", l.User, l.Name, l.Class, l.SU)
				}
				if os.Getenv("MIGADVISOR_SITE_REPLAY_OUT") != "" {
					appendReplay(t, name, b.String())
				}
				month := fmt.Sprintf("%d, with gres/gpumem", seed)
				switch {
				case !tres:
					month = fmt.Sprintf("%d, without", seed)
				case v.scripts:
					month = fmt.Sprintf("%d, with gres/gpumem, scripts from the 15th", seed)
				}
				months = append(months, sitereplay.MonthScore{Name: month, Report: res.scores[0], Rules: res.scores[1:],
					Cover: res.cover, Possible: res.possible})
				if k := res.scores[0].Killed; k != 0 {
					t.Errorf("the report's advice kills %d jobs of the month", k)
				}
				if seed == 1 && tres && !v.scripts {
					sitereplay.WriteCompact(&compact, res.scores, res.possible)
				}
				if seed == 1 {
					words := "with Slurm's gres/gpumem and gres/gpuutil"
					switch {
					case !tres:
						words = "without Slurm's GPU figures (jobstats, output files and the monitor alone)"
					case v.scripts:
						words = "with Slurm's GPU figures and the scripts slurmdbd stored from the 15th on"
					}
					fmt.Fprintf(&first, "The month %s:\n\n%s\n", words, b.String())
				}
			})
		}
	}
	checkDocBlock(t, siteReplayDoc, "site-replay", first.String(), *siteReplayUpdate)
	if *siteReplaySeeds == 3 {
		var b strings.Builder
		sitereplay.WriteSummary(&b, months)
		t.Logf("\n%s", b.String())
		for _, doc := range []string{siteReplayDoc, "../../docs/admin/reports.md"} {
			checkDocBlock(t, doc, "site-replay-summary", b.String(), *siteReplayUpdate)
		}
		checkDocBlock(t, "../../README.md", "site-replay-readme", compact.String(), *siteReplayUpdate)
	}
}

// checkDocBlock checks that the doc holds want between its "<!-- NAME
// begin -->" and "<!-- NAME end -->" lines, or writes it there (update).
func checkDocBlock(t *testing.T, doc, name, want string, update bool) {
	t.Helper()
	data, err := os.ReadFile(doc)
	if err != nil {
		t.Fatal(err)
	}
	begin, end := "<!-- "+name+" begin -->\n", "<!-- "+name+" end -->"
	i, j := strings.Index(string(data), begin), strings.Index(string(data), end)
	if i < 0 || j < i {
		t.Fatalf("%s has no %q … %q block", doc, begin, end)
	}
	got := string(data[i+len(begin) : j])
	if got == want {
		return
	}
	if update {
		out := string(data[:i+len(begin)]) + want + string(data[j:])
		if err := os.WriteFile(doc, []byte(out), 0o644); err != nil {
			t.Fatal(err)
		}
		return
	}
	t.Errorf("%s says:\n%s\na fresh run gives:\n%s\n(go test ./cmd/migadvisor -run TestSiteReplay -site-replay-update writes it)", doc, got, want)
}

func appendReplay(t *testing.T, name, table string) {
	f, err := os.OpenFile(os.Getenv("MIGADVISOR_SITE_REPLAY_OUT"), os.O_APPEND|os.O_CREATE|os.O_WRONLY, 0o644)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	fmt.Fprintf(f, "### %s\n\n%s\n", name, table)
}
