package main

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/migadvisor/migadvisor/advisor/app/collect"
	"github.com/migadvisor/migadvisor/advisor/app/joblist"
	"github.com/migadvisor/migadvisor/advisor/base/history"
	"github.com/migadvisor/migadvisor/slurm"
	"github.com/migadvisor/migadvisor/slurm/slurmtest"
)

// dumpWithoutCluster is the dev cluster's dump saved without the Cluster
// column, as `sacct -o JobIDRaw,JobID,...` without it writes it.
func dumpWithoutCluster(t *testing.T) string {
	t.Helper()
	data, err := os.ReadFile("../../testdata/sacct/devcluster-22.05.psv")
	if err != nil {
		t.Fatal(err)
	}
	var out []string
	col := -1
	for _, line := range strings.Split(strings.TrimRight(string(data), "\n"), "\n") {
		f := strings.Split(line, "|")
		if col < 0 {
			for i, name := range f {
				if name == "Cluster" {
					col = i
				}
			}
		}
		out = append(out, strings.Join(append(f[:col:col], f[col+1:]...), "|"))
	}
	path := filepath.Join(t.TempDir(), "dump.txt")
	if err := os.WriteFile(path, []byte(strings.Join(out, "\n")+"\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	return path
}

func asJSON(v any) string {
	b, _ := json.Marshal(v)
	return string(b)
}

func fingerprintOf(t *testing.T, path string) string {
	t.Helper()
	s, err := slurm.ReadScript(path)
	if err != nil {
		t.Fatal(err)
	}
	return s.Fingerprint()
}

// jobScript writes a script in its own directory and returns its path.
func jobScript(t *testing.T, text string) string {
	t.Helper()
	path := filepath.Join(t.TempDir(), "job.sh")
	if err := os.WriteFile(path, []byte(text), 0o644); err != nil {
		t.Fatal(err)
	}
	return path
}

const completeScript = "#!/bin/bash\n#SBATCH --gres=gpu:a100_10g:1\n#SBATCH --mem=300M -t 5\npython train.py --epochs 2\n"

// recommendRuns is how many runs recommend --json weighs, and its notes.
func recommendRuns(t *testing.T, fake *slurmtest.Fake, script string) (int, []string) {
	t.Helper()
	out, errOut, code := migadvisorWith(t, fake, "recommend", script, "--json")
	if code != 0 {
		t.Fatalf("recommend: exit %d: %s", code, errOut)
	}
	var rec struct {
		Notes    []string
		Profiles []struct{ Runs int }
	}
	if err := json.Unmarshal([]byte(out), &rec); err != nil {
		t.Fatal(err)
	}
	runs := 0
	for _, p := range rec.Profiles {
		runs += p.Runs
	}
	return runs, rec.Notes
}

func historyJSON(t *testing.T, fake *slurmtest.Fake, args ...string) []joblist.JobEntry {
	t.Helper()
	out, errOut, code := migadvisorWith(t, fake, append([]string{"history", "--json"}, args...)...)
	var jobs []joblist.JobEntry
	if err := json.Unmarshal([]byte(out), &jobs); code != 0 || err != nil {
		t.Fatalf("history: exit %d, %v: %s", code, err, errOut)
	}
	return jobs
}

// The plain flow with no cluster named anywhere: a dump without the Cluster
// column, and track, in either order, put the job and its script under one
// name, slurmctld's, and recommend sees the run.
func TestDumpWithoutClusterAndTrackAgree(t *testing.T) {
	for _, order := range [][]string{{"collect", "track"}, {"track", "collect"}} {
		t.Run(strings.Join(order, " then "), func(t *testing.T) {
			isolate(t)
			fake := slurmNaming("migdev")
			t.Setenv("MIGADVISOR_DB", filepath.Join(t.TempDir(), "history.db"))
			dump, script := dumpWithoutCluster(t), jobScript(t, completeScript)
			for _, step := range order {
				args := []string{"collect", "--sacct-file", dump}
				if step == "track" {
					args = []string{"track", script, "2"}
				}
				_, errOut, code := migadvisorWith(t, fake, args...)
				notYet := "migadvisor: job 2 is not in the history yet: run 'migadvisor collect' after it ends\n"
				if want := map[bool]string{true: notYet}[step == "track" && order[0] == "track"]; code != 0 || errOut != want {
					t.Errorf("%s: exit %d, stderr %q, want %q", step, code, errOut, want)
				}
			}
			if runs, notes := recommendRuns(t, fake, script); runs != 1 {
				t.Errorf("recommend weighs %d runs, want 1 (notes %q)", runs, notes)
			}
			jobs := historyJSON(t, fake, script)
			if len(jobs) != 1 || jobs[0].JobID != "2" || jobs[0].Cluster != "migdev" || jobs[0].Earlier || jobs[0].History != "own" {
				t.Errorf("history: %s", asJSON(jobs))
			}
		})
	}
}

// A dump collected before its jobs are tracked: track reads their output
// through the script's --output (relative to the job's WorkDir), so
// recommend weighs the work at once, with no second collect.
func TestTrackReadsTheOutputOfJobsAlreadyCollected(t *testing.T) {
	isolate(t)
	fake := slurmNaming("migdev")
	t.Setenv("MIGADVISOR_DB", filepath.Join(t.TempDir(), "history.db"))
	work := t.TempDir()
	data, err := os.ReadFile(dumpWithoutCluster(t))
	if err != nil {
		t.Fatal(err)
	}
	dump := filepath.Join(t.TempDir(), "dump.txt")
	os.WriteFile(dump, []byte(strings.ReplaceAll(string(data), "|/tmp/fx|", "|"+work+"|")), 0o644)
	os.Mkdir(filepath.Join(work, "logs"), 0o755)
	os.WriteFile(filepath.Join(work, "logs", "fx-complete-2.out"), []byte("epoch 2\nMIGADVISOR_WORK 60000 samples\n"), 0o644)
	script := jobScript(t, "#!/bin/bash\n#SBATCH --gres=gpu:a100_10g:1\n#SBATCH --mem=300M -t 5\n#SBATCH --output=logs/%x-%j.out\npython train.py --epochs 2\n")

	if _, errOut, code := migadvisorWith(t, fake, "collect", "--sacct-file", dump); code != 0 || errOut != "" {
		t.Fatalf("collect: exit %d, %q", code, errOut)
	}
	if _, errOut, code := migadvisorWith(t, fake, "track", script, "2"); code != 0 || errOut != "" {
		t.Fatalf("track: exit %d, %q", code, errOut)
	}
	jobs := historyJSON(t, fake, script)
	if len(jobs) != 1 || jobs[0].Work == nil || *jobs[0].Work != 60000 {
		t.Errorf("history after collect then track: %s", asJSON(jobs))
	}
}

// Where Slurm cannot be asked (a laptop with a dump), every command uses the
// name the history last used, else "local", and says so; a dump with a
// Cluster column keeps its names without a word.
func TestClusterFallbackIsSharedAndSaid(t *testing.T) {
	isolate(t)
	db := filepath.Join(t.TempDir(), "history.db")
	t.Setenv("MIGADVISOR_DB", db)
	dump, script := dumpWithoutCluster(t), jobScript(t, completeScript)

	fake := slurmNaming("")
	_, errOut, code := migadvisorWith(t, fake, "collect", "--sacct-file", dump)
	if want := "migadvisor: scontrol: not found (is Slurm installed and on PATH here?); filing the jobs under cluster \"local\" (name it with --cluster)\n"; code != 0 || errOut != want {
		t.Errorf("collect with no Slurm and no name: exit %d, %q", code, errOut)
	}
	_, errOut, code = migadvisorWith(t, fake, "track", script, "2")
	if code != 0 || !strings.Contains(errOut, `filing the jobs under cluster "local"`) || strings.Contains(errOut, "not in the history") {
		t.Errorf("track: exit %d, %q", code, errOut)
	}
	if runs, _ := recommendRuns(t, fake, script); runs != 1 {
		t.Errorf("recommend weighs %d runs, want 1", runs)
	}

	// Once Slurm (or --cluster) named it, the history keeps the name for the commands that cannot ask.
	fake = slurmNaming("wulver")
	if _, errOut, code := migadvisorWith(t, fake, "collect"); code != 0 || errOut != "" {
		t.Errorf("collect with Slurm: exit %d, %q", code, errOut)
	}
	fake = slurmNaming("")
	_, errOut, code = migadvisorWith(t, fake, "track", script, "99")
	if code != 0 || !strings.Contains(errOut, `filing the jobs under cluster "wulver", the name this history last used (name another with --cluster)`) {
		t.Errorf("track after Slurm named the cluster: exit %d, %q", code, errOut)
	}
	// A dump with its own Cluster column needs no name, nor Slurm: nothing
	// to say. Its jobs are the first dump's, which are filed under its name now.
	if _, errOut, code := migadvisorWith(t, fake, "collect", "--sacct-file", "../../testdata/sacct/devcluster-22.05.psv"); code != 0 || errOut != "" {
		t.Errorf("collect of a dump with a Cluster column: exit %d, %q", code, errOut)
	}
	jobs := historyJSON(t, fake)
	clusters := map[string]int{}
	for _, j := range jobs {
		clusters[j.Cluster]++
	}
	if clusters["migdev"] != 14 || len(clusters) != 1 {
		t.Errorf("clusters %v, want the 14 jobs of both dumps once each, on migdev (the dump's own name)", clusters)
	}
	if runs, _ := recommendRuns(t, fake, script); runs != 1 {
		t.Errorf("recommend weighs %d runs after, want 1", runs)
	}
}

// A history made before the names agreed (jobs from a dump under "local",
// the script's submission under slurmctld's name) links them at once and
// files them together at the next collect; an id that several names hold
// as different jobs is ambiguous, and track says so.
func TestSplitHistoryHealsAndAmbiguityIsSaid(t *testing.T) {
	isolate(t)
	fake := slurmNaming("migdev")
	db := filepath.Join(t.TempDir(), "history.db")
	t.Setenv("MIGADVISOR_DB", db)
	script := jobScript(t, completeScript)
	if _, errOut, code := migadvisorWith(t, fake, "collect", "--sacct-file", dumpWithoutCluster(t), "--cluster", "local"); code != 0 {
		t.Fatalf("collect: %s", errOut)
	}
	st, err := history.Open(context.Background(), db)
	if err != nil {
		t.Fatal(err)
	}
	abs, _ := filepath.Abs(script)
	sub := history.Submission{Cluster: "migdev", JobID: "2", Fingerprint: fingerprintOf(t, script), Source: abs, Script: abs, Submitted: time.Now()}
	if err := st.RecordSubmissions(context.Background(), []history.Submission{sub}); err != nil {
		t.Fatal(err)
	}
	st.Close()
	if runs, _ := recommendRuns(t, fake, script); runs != 1 {
		t.Errorf("recommend on the split history weighs %d runs, want 1", runs)
	}
	if _, errOut, code := migadvisorWith(t, fake, "collect"); code != 0 {
		t.Fatalf("collect: %s", errOut)
	}
	for _, j := range historyJSON(t, fake) {
		if j.JobID == "2" && (j.Fingerprint == nil || *j.Fingerprint != sub.Fingerprint) {
			t.Errorf("after collect, job 2 is not its script's: %s", asJSON(j))
		}
	}

	// Another cluster ran a job 3 too, a day earlier.
	other := filepath.Join(t.TempDir(), "other.psv")
	data, _ := os.ReadFile("../../testdata/sacct/devcluster-22.05.psv")
	os.WriteFile(other, []byte(strings.ReplaceAll(strings.ReplaceAll(string(data), "|migdev|", "|other|"), "2026-11-21T02:12:46", "2026-11-20T02:12:46")), 0o644)
	migadvisorWith(t, fake, "collect", "--sacct-file", other)
	_, errOut, code := migadvisorWith(t, fake, "track", script, "3")
	if want := "migadvisor: job 3 is in the history under clusters local and other, as different jobs: track it again with --cluster and the one it ran on\n"; code != 0 || errOut != want {
		t.Errorf("track of an ambiguous id: exit %d, %q", code, errOut)
	}
	out, _, _ := migadvisorWith(t, fake, "track", script, "3", "4242", "4243", "--json")
	var rep collect.TrackReport
	if err := json.Unmarshal([]byte(out), &rep); err != nil || strings.Join(rep.NotInHistory, " ") != "4242 4243" || len(rep.Ambiguous["3"]) != 2 {
		t.Errorf("track --json: %v %s", err, out)
	}
}

// A script edited after its runs (--epochs 2 to 3) keeps their evidence:
// recommend weighs them as an earlier version's and says so; history shows
// them, marked.
func TestEditedScriptKeepsItsRuns(t *testing.T) {
	isolate(t)
	fake := slurmNaming("migdev")
	t.Setenv("MIGADVISOR_DB", filepath.Join(t.TempDir(), "history.db"))
	script := jobScript(t, completeScript)
	mustRunWith(t, fake, "collect", "--sacct-file", "../../testdata/sacct/devcluster-22.05.psv")
	mustRunWith(t, fake, "track", script, "2")
	if runs, _ := recommendRuns(t, fake, script); runs != 1 {
		t.Fatalf("before the edit: %d runs", runs)
	}
	os.WriteFile(script, []byte(strings.Replace(completeScript, "--epochs 2", "--epochs 3", 1)), 0o644)
	runs, notes := recommendRuns(t, fake, script)
	if runs != 1 || !strings.Contains(strings.Join(notes, "\n"), "no runs of this exact script; 1 run of an earlier version (the same path) is used") {
		t.Errorf("after the edit: %d runs, notes %q", runs, notes)
	}
	jobs := historyJSON(t, fake, script)
	if len(jobs) != 1 || jobs[0].JobID != "2" || !jobs[0].Earlier {
		t.Errorf("history --json: %s", asJSON(jobs))
	}
	out := mustRunWith(t, fake, "history", script)
	if !strings.Contains(out, "\n2 ~ ") || !strings.HasSuffix(out, "\n1 run of an earlier version of this script (marked ~)\n") {
		t.Errorf("history:\n%s", out)
	}
}

// With the site file's site_db, history shows the site's runs of the script
// beside the user's own, each job once, and says which history each came from.
func TestHistoryShowsTheSiteHistory(t *testing.T) {
	isolate(t)
	fake := slurmNaming("migdev")
	work := t.TempDir()
	script := jobScript(t, completeScript)
	siteDB := filepath.Join(work, "site.db")
	historyWithJob2(t, siteDB, script)
	siteFile := filepath.Join(work, "site.toml")
	wulver, err := os.ReadFile("../../catalog/sites/wulver.toml")
	if err != nil {
		t.Fatal(err)
	}
	os.WriteFile(siteFile, append(wulver, "\n[history]\nsite_db = \""+siteDB+"\"\n"...), 0o644)
	t.Setenv("MIGADVISOR_SITE", siteFile)
	t.Setenv("MIGADVISOR_DB", filepath.Join(work, "mine.db"))
	jobs := historyJSON(t, fake, script)
	if len(jobs) != 1 || jobs[0].JobID != "2" || jobs[0].History != "site" {
		t.Fatalf("history of the script: %s", asJSON(jobs))
	}
	// The same job in the user's own history comes once, as theirs.
	mustRunWith(t, fake, "collect", "--sacct-file", "../../testdata/sacct/devcluster-22.05.psv")
	mustRunWith(t, fake, "track", script, "2")
	if jobs := historyJSON(t, fake, script); len(jobs) != 1 || jobs[0].History != "own" {
		t.Errorf("history of the script in both: %s", asJSON(jobs))
	}
	if out := mustRunWith(t, fake, "history", script); strings.Contains(out, "site-wide") {
		t.Errorf("history text:\n%s", out)
	}
}

// The flow a new user took: a dump imported where Slurm could not be asked
// (its jobs filed under "local", their output read from --outputs), the
// jobs tracked with Slurm at hand, then collected from Slurm, which names
// the cluster migdev. Each job is one record, under migdev, with its
// output's evidence: recommend weighs each run once (as many as in a
// history that only ever knew migdev), history lists each job once,
// tracking a job again is not ambiguous, and status lists it once.
func TestAJobCollectedUnderTwoNamesIsOneJob(t *testing.T) {
	isolate(t)
	dump, script := dumpWithoutCluster(t), jobScript(t, completeScript)
	outputs := t.TempDir()
	os.WriteFile(filepath.Join(outputs, "slurm-2.out"), []byte("MIGADVISOR_WORK 1200 samples\n"), 0o644)

	// What a history that only ever knew migdev weighs.
	t.Setenv("MIGADVISOR_DB", filepath.Join(t.TempDir(), "control.db"))
	fake := slurmFromDump(t, "../../testdata/sacct/devcluster-22.05.psv")
	mustRunWith(t, fake, "collect", "--sacct-file", dump)
	mustRunWith(t, fake, "track", script, "2", "3", "11")
	want, _ := recommendRuns(t, fake, script)

	t.Setenv("MIGADVISOR_DB", filepath.Join(t.TempDir(), "history.db"))
	fake = slurmNaming("")
	mustRunWith(t, fake, "collect", "--sacct-file", dump, "--outputs", outputs)
	fake = slurmFromDump(t, "../../testdata/sacct/devcluster-22.05.psv")
	mustRunWith(t, fake, "track", script, "2", "3", "11")
	out := mustRunWith(t, fake, "collect", "--since", "2h")
	if !strings.Contains(out, "14 jobs filed under cluster \"local\" are the same as migdev's: each is one record now, under migdev\n") {
		t.Errorf("collect does not say it filed the jobs together:\n%s", out)
	}
	if runs, notes := recommendRuns(t, fake, script); runs != want {
		t.Errorf("recommend weighs %d runs, want %d (notes %q)", runs, want, notes)
	}
	seen := map[string]int{}
	for _, j := range historyJSON(t, fake) {
		seen[j.JobID]++
		if j.Cluster != "migdev" || seen[j.JobID] > 1 {
			t.Errorf("job %s on %s, listed %d times", j.JobID, j.Cluster, seen[j.JobID])
		}
	}
	jobs := historyJSON(t, fake, script)
	if len(jobs) != 3 || jobs[2].JobID != "2" || jobs[2].Work == nil || *jobs[2].Work != 1200 {
		t.Errorf("history of the script (job 2's work from its output): %s", asJSON(jobs))
	}
	if _, errOut, code := migadvisorWith(t, fake, "track", script, "2"); code != 0 || errOut != "" {
		t.Errorf("tracking job 2 again: exit %d, %q", code, errOut)
	}
	status := mustRunWith(t, fake, "status", "--all")
	if n := strings.Count(status, "\n2 "); n != 1 {
		t.Errorf("status lists job 2 %d times:\n%s", n, status)
	}
	if again := mustRunWith(t, fake, "collect", "--since", "2h"); strings.Contains(again, "filed under") {
		t.Errorf("the second collect files jobs together again:\n%s", again)
	}

	// A job 3 of another cluster, a day earlier, is another job: tracking 3 is ambiguous.
	other := filepath.Join(t.TempDir(), "other.psv")
	data, _ := os.ReadFile("../../testdata/sacct/devcluster-22.05.psv")
	os.WriteFile(other, []byte(strings.ReplaceAll(strings.ReplaceAll(string(data), "|migdev|", "|other|"), "2026-11-21T02:12:46", "2026-11-20T02:12:46")), 0o644)
	mustRunWith(t, fake, "collect", "--sacct-file", other)
	_, errOut, code := migadvisorWith(t, fake, "track", script, "3")
	if want := "migadvisor: job 3 is in the history under clusters migdev and other, as different jobs: it counts as migdev's; if it ran on the other, track it again with --cluster and its name\n"; code != 0 || errOut != want {
		t.Errorf("track of an id two clusters hold as different jobs: exit %d\n%q\nwant\n%q", code, errOut, want)
	}
}

// Where Slurm cannot be asked, jobs of a dump with its Cluster column are
// tracked under "local" and linked where they are; tracking them again
// with another --workload moves them (as track --help says), in the same
// second too: history and the workloads (what docs writes a page for) show
// the new workload only.
func TestTrackAgainWithoutSlurmMovesTheWorkload(t *testing.T) {
	isolate(t)
	fake := slurmNaming("")
	db := filepath.Join(t.TempDir(), "history.db")
	t.Setenv("MIGADVISOR_DB", db)
	script := jobScript(t, completeScript)
	if _, errOut, code := migadvisorWith(t, fake, "collect", "--sacct-file", "../../testdata/sacct/devcluster-22.05.psv"); code != 0 || errOut != "" {
		t.Fatalf("collect: exit %d, %q", code, errOut)
	}
	for _, w := range []string{"md-generic", "gromacs_performance"} {
		_, errOut, code := migadvisorWith(t, fake, "track", "--workload", w, script, "2", "3")
		if code != 0 || !strings.Contains(errOut, `filing the jobs under cluster "local"`) {
			t.Fatalf("track --workload %s: exit %d, %q", w, code, errOut)
		}
	}
	tagged := 0
	for _, j := range historyJSON(t, fake, script) {
		if j.Workload == nil || *j.Workload != "gromacs_performance" || j.Cluster != "migdev" {
			t.Errorf("job %s: %s", j.JobID, asJSON(j))
		}
		tagged++
	}
	if tagged != 2 {
		t.Errorf("%d jobs of the script, want 2", tagged)
	}
	st, err := history.OpenWith(context.Background(), db, history.Options{ReadOnly: true})
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	if ws, err := st.Workloads(context.Background()); err != nil || len(ws) != 1 || ws[0] != (history.WorkloadCount{Workload: "gromacs_performance", Submissions: 2}) {
		t.Errorf("workloads %+v %v", ws, err)
	}
}
