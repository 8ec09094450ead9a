package main

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"reflect"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/migadvisor/migadvisor/advisor/app/collect"
	"github.com/migadvisor/migadvisor/advisor/base/history"
	"github.com/migadvisor/migadvisor/bench"
	"github.com/migadvisor/migadvisor/slurm"
	"github.com/migadvisor/migadvisor/slurm/slurmtest"
)

// trackFailures links the dev cluster's failed jobs (testdata/joboutput/
// devcluster-failures) to their scripts, with the output paths scontrol gave.
func trackFailures(t *testing.T, db string) {
	t.Helper()
	dir, err := filepath.Abs("../../testdata/joboutput/devcluster-failures")
	if err != nil {
		t.Fatal(err)
	}
	st, err := history.Open(context.Background(), db)
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	var subs []history.Submission
	for id, script := range map[string]string{"1": "nocmd.sh", "2": "nodir.sh", "3": "hostoom.sh", "4": "timeout.sh"} {
		out := filepath.Join(dir, "slurm-"+id+".out")
		if id == "2" {
			out = "/nonexistent/dir/2.out"
		}
		subs = append(subs, history.Submission{Cluster: "migdev", JobID: id, Fingerprint: "fp" + id, Source: filepath.Join(dir, script),
			Script: filepath.Join(dir, script), Profile: "1g.10gb", Stdout: out, Submitted: time.Unix(1_795_000_000, 0)})
	}
	if err := st.RecordSubmissions(context.Background(), subs); err != nil {
		t.Fatal(err)
	}
}

// What wait and status print (why each job ended as it did, the profile
// accounting gives, the recent jobs or --all, a sweep's, an id Slurm never
// had, nothing to wait for) is TestGolden's (testdata/wait, testdata/status).

// A ladder probe stops at the first rung whose job failed in a way a larger
// profile would not change (here a command not found), instead of
// submitting the same failure on every profile.
func TestProbeLadderStopsOnAFailureOfTheScript(t *testing.T) {
	isolate(t)
	work := t.TempDir()
	t.Setenv("MIGADVISOR_DB", filepath.Join(work, "history.db"))
	outputs, err := filepath.Abs("../../testdata/joboutput/devcluster-failures")
	if err != nil {
		t.Fatal(err)
	}
	dump := readFile(t, "../../testdata/sacct/devcluster-failures.psv")
	// Every submission is job 1 of the dump: FAILED 127:0.
	fake := slurmtest.New().Prints("sbatch", "1;migdev\n").Prints("squeue", "").Prints("sacct", dumpOf(dump, "1")).
		On("scontrol", func(c slurm.Call) slurmtest.Reply {
			if strings.Join(c.Args, " ") == "show config" {
				return slurmtest.Reply{Stdout: "ClusterName = migdev\n"}
			}
			return slurmtest.Reply{Stdout: "JobId=1 JobName=x StdOut=" + outputs + "/slurm-1.out StdErr=" + outputs + "/slurm-1.out\n"}
		})
	t.Chdir(work)
	script := writeTestScript(t, work, "nocmd.sh", "#!/bin/bash\n#SBATCH --gres=gpu:a100_10g:1\n#SBATCH --mem=64M\n#SBATCH --time=00:02:00\ntrainer --epochs 2\n")

	_, errOut, _ := migadvisorWith(t, fake, "recommend", "--probe", "--ladder", "--no-monitor", script)
	if calls := fake.Calls("sbatch"); len(calls) != 1 || !strings.HasSuffix(calls[0].Args[len(calls[0].Args)-1], "1g.10gb.sh") {
		t.Errorf("sbatch ran %d times, want once, on 1g.10gb: %+v", len(calls), calls)
	}
	want := "migadvisor: probe stopped at 1g.10gb, since a larger profile would fail the same way: job 1 failed because a command was not found (exit 127): slurm-1.out names it; load its module or fix PATH in the script\n"
	if !strings.Contains(errOut, want) {
		t.Errorf("stderr:\n%s\nwant the line\n%s", errOut, want)
	}
}

// A probe that stops waiting on --timeout or a failing squeue says, as
// Ctrl-C does, that its jobs were submitted and run on, charged, and how
// to take them up; it counts one job as one.
func TestProbeThatStopsWaitingSaysItsJobsRunOn(t *testing.T) {
	isolate(t)
	work := t.TempDir()
	t.Setenv("MIGADVISOR_DB", filepath.Join(work, "history.db"))
	t.Chdir(work)
	script := writeTestScript(t, work, "job.sh", "#!/bin/bash\n#SBATCH --gres=gpu:a100_10g:1\n#SBATCH --mem=64M\n#SBATCH --time=00:02:00\ntrainer\n")
	pending := slurmtest.New().Cluster("migdev").Prints("sbatch", "4242;migdev\n").Prints("squeue", "4242|4242|PENDING|gres/gpu:a100_10g:1|None\n")
	failing := slurmtest.New().Cluster("migdev").Prints("sbatch", "4242;migdev\n").Fails("squeue", "slurm_load_jobs error: Unable to contact slurm controller\n", 1)
	for name, fake := range map[string]*slurmtest.Fake{"timeout": pending, "squeue-failing": failing} {
		dir := filepath.Join(work, name)
		_, errOut, code := migadvisorWith(t, fake, "recommend", "--probe", "--no-monitor", "--profiles", "1g.10gb", "--out", dir, "--timeout", "1ms", script)
		for _, want := range []string{"submitted", "still run", "charged", "migadvisor wait --sweep " + dir, "migadvisor recommend " + script} {
			if code != exitFailure || !strings.Contains(errOut, want) {
				t.Errorf("%s: exit %d, stderr lacks %q:\n%s", name, code, want, errOut)
			}
		}
		if strings.Contains(errOut, "1 jobs") {
			t.Errorf("%s: %q", name, errOut)
		}
	}
}

func writeTestScript(t *testing.T, dir, name, text string) string {
	t.Helper()
	p := filepath.Join(dir, name)
	if err := os.WriteFile(p, []byte(text), 0o755); err != nil {
		t.Fatal(err)
	}
	return p
}

// A tracked id Slurm has never seen (mistyped) is said to be so by track,
// collect, status and wait, instead of waiting for a record that will never
// come.
func TestAnIDSlurmNeverSawIsSaid(t *testing.T) {
	isolate(t)
	t.Setenv("MIGADVISOR_DB", filepath.Join(t.TempDir(), "history.db"))
	fake := slurmByID(t, "../../testdata/sacct/devcluster-22.05.psv")
	script := writeTestScript(t, t.TempDir(), "job.sh", "#!/bin/bash\n#SBATCH --gres=gpu:1\npython train.py\n")
	const said = "Slurm has no job 99999: was the id mistyped?"
	_, errOut, code := migadvisorWith(t, fake, "track", script, "2", "99999")
	if want := "migadvisor: job 2 is not in the history yet: run 'migadvisor collect' after it ends\nmigadvisor: " + said + "\n"; code != 0 || errOut != want {
		t.Errorf("track: exit %d\n%q\nwant\n%q", code, errOut, want)
	}
	out := mustRunWith(t, fake, "collect")
	if !strings.Contains(out, "accounting (sacct): 1 job: 1 new") || !strings.Contains(out, "\n"+said+"\n") {
		t.Errorf("collect:\n%s", out)
	}
	var rep collect.Summary
	if err := json.Unmarshal([]byte(mustRunWith(t, fake, "collect", "--json")), &rep); err != nil || strings.Join(rep.UnknownToSlurm, " ") != "99999" {
		t.Errorf("collect --json: %+v %v", rep.UnknownToSlurm, err)
	}

	out = mustRunWith(t, fake, "status", "--all")
	if !strings.Contains(out, "\n99999   -        not in Slurm  job.sh") || !strings.HasSuffix(out, said+"\n") {
		t.Errorf("status:\n%s", out)
	}
	var rows []jobStatus
	if err := json.Unmarshal([]byte(mustRunWith(t, fake, "status", "99999", "--json")), &rows); err != nil || len(rows) != 1 ||
		rows[0].State != "not in Slurm" || rows[0].Explanation != said {
		t.Errorf("status --json: %+v %v", rows, err)
	}

	start := time.Now()
	out, errOut, code = migadvisorWith(t, fake, "wait", "--timeout", "20s")
	if code != 0 || errOut != "migadvisor: "+said+"\n" || !strings.Contains(out, "99999   -        not in Slurm  "+said) {
		t.Errorf("wait: exit %d\n%s%s", code, out, errOut)
	}
	if d := time.Since(start); d > 10*time.Second {
		t.Errorf("wait took %s for a job Slurm does not have", d)
	}
}

// wait checks its ids as status and track do (a usage error before Slurm
// is asked), and an id named that Slurm has no job of fails the wait, so
// that 'wait $ID && recommend' stops: it is said once, with no note that
// wait collects a record there is none of.
func TestWaitForAnIDSlurmNeverHadFails(t *testing.T) {
	isolate(t)
	t.Setenv("MIGADVISOR_DB", filepath.Join(t.TempDir(), "history.db"))
	fake := slurmByID(t, devclusterDump)
	_, errOut, code := migadvisorWith(t, fake, "wait", "abc")
	if code != exitUsage || !strings.Contains(errOut, `"abc" is not a job id`) || len(fake.Calls("squeue"))+len(fake.Calls("sacct")) > 0 {
		t.Errorf("wait abc: exit %d, %q", code, errOut)
	}
	for _, ids := range [][]string{{"99999"}, {"2", "99999"}} {
		_, errOut, code = migadvisorWith(t, fake, append([]string{"wait", "--timeout", "20s"}, ids...)...)
		if code != exitFailure || !strings.Contains(errOut, "Slurm has no job 99999") || strings.Contains(errOut, "job 99999 is not tracked") {
			t.Errorf("wait %v: exit %d, %q", ids, code, errOut)
		}
	}
	if !strings.Contains(errOut, "job 2 is not tracked: wait collects its record") {
		t.Errorf("wait 2 99999: %q", errOut)
	}
}

// wait --json prints its JSON on stdout whatever the wait's end: the jobs
// still queued, with their state, when --timeout passes; an id Slurm has
// no job of as status gives it ("no such job"). The exit status is the
// wait's.
func TestWaitJSONAlwaysPrintsItsJSON(t *testing.T) {
	isolate(t)
	t.Setenv("MIGADVISOR_DB", filepath.Join(t.TempDir(), "history.db"))
	queued := slurmtest.New().Cluster("migdev").Prints("squeue", "4242|4242|PENDING|gres/gpu:a100_10g:1|Priority\n")
	out, errOut, code := migadvisorWith(t, queued, "wait", "--timeout", "1ms", "--json", "4242")
	var rows []bench.JobStatus
	if err := json.Unmarshal([]byte(out), &rows); err != nil || code != exitFailure || len(rows) != 1 ||
		rows[0].JobID != "4242" || rows[0].State != "PENDING" || rows[0].Reason != "Priority" || !strings.Contains(errOut, "still queued") {
		t.Errorf("wait --timeout --json: exit %d, %v\n%s%s", code, err, out, errOut)
	}
	out, errOut, code = migadvisorWith(t, slurmByID(t, devclusterDump), "wait", "--json", "99999")
	rows = nil
	if err := json.Unmarshal([]byte(out), &rows); err != nil || code != exitFailure || len(rows) != 1 ||
		rows[0].JobID != "99999" || rows[0].Outcome != bench.OutcomeNoSuchJob {
		t.Errorf("wait --json 99999: exit %d, %v\n%s%s", code, err, out, errOut)
	}
	// With --no-collect, the jobs that left the queue, their records unread.
	out, errOut, code = migadvisorWith(t, slurmtest.New().Cluster("migdev").Prints("squeue", ""), "wait", "--no-collect", "--json", "4242")
	rows = nil
	if err := json.Unmarshal([]byte(out), &rows); err != nil || code != 0 || len(rows) != 1 || rows[0].JobID != "4242" || rows[0].State != bench.StateCollect {
		t.Errorf("wait --no-collect --json: exit %d, %v\n%s%s", code, err, out, errOut)
	}
}

// A job that failed because Slurm could not open its output file (exit
// 0:53) has no output to find: collect does not ask for it.
func TestCollectDoesNotMissTheOutputOfAJobThatCouldWriteNone(t *testing.T) {
	isolate(t)
	t.Setenv("MIGADVISOR_DB", filepath.Join(t.TempDir(), "history.db"))
	dump := readFile(t, "../../testdata/sacct/devcluster-failures.psv")
	// slurmdbd's scripts of jobs 1 (exit 127) and 2 (exit 0:53) send their output to a directory that is not there.
	script := "#!/bin/bash\n#SBATCH -o /nonexistent/dir/%j.out\ntrainer\n"
	scripts := ""
	for _, id := range []string{"1", "2"} {
		scripts += "Batch Script for " + id + "\n" + strings.Repeat("-", 80) + "\n" + script + "\n"
	}
	fake := slurmtest.New().Cluster("migdev").Prints("squeue", "").On("sacct", func(c slurm.Call) slurmtest.Reply {
		if slices.ContainsFunc(c.Args, func(a string) bool { return strings.Contains(a, "--batch-script") }) {
			return slurmtest.Reply{Stdout: scripts}
		}
		return slurmtest.Reply{Stdout: dump}
	})
	out := mustRunWith(t, fake, "collect", "--all-users")
	if !strings.Contains(out, "scripts: 2 jobs linked from slurmdbd") || !strings.Contains(out, "\nno output file found for job 1 (point --outputs at their directory)\n") {
		t.Errorf("collect:\n%s", out)
	}
	// Said once: the next collect counts job 1 (alone) as said before.
	var rep collect.Summary
	if err := json.Unmarshal([]byte(mustRunWith(t, fake, "collect", "--all-users", "--json")), &rep); err != nil ||
		len(rep.Outputs.Missing) != 0 || rep.Outputs.MissingBefore != 1 {
		t.Errorf("collect --json: missing %q, %d said before, %v: want job 1 only, said before", rep.Outputs.Missing, rep.Outputs.MissingBefore, err)
	}
}

// Seen: 'wait 291' for a real job no script is linked to printed only a
// header: it says the job is not tracked, and how to track it.
func TestWaitForAnUntrackedJobSaysSo(t *testing.T) {
	isolate(t)
	db := filepath.Join(t.TempDir(), "history.db")
	t.Setenv("MIGADVISOR_DB", db)
	// Accounting has job 291 too (job 4's record under its id): a job
	// Slurm has, that wait collects.
	dump := readFile(t, "../../testdata/sacct/devcluster-failures.psv")
	var job291 strings.Builder
	for _, line := range strings.SplitAfter(dump, "\n") {
		if strings.HasPrefix(line, "4") {
			job291.WriteString(strings.ReplaceAll(line[:strings.Index(line, "|migdev|")], "4", "291") + line[strings.Index(line, "|migdev|"):])
		}
	}
	fake := slurmtest.New().Cluster("migdev").Prints("squeue", "").Prints("sacct", dump+job291.String())
	trackFailures(t, db)
	_, errOut, code := migadvisorWith(t, fake, "wait", "1", "291")
	if code != 0 || !strings.Contains(errOut, "migadvisor: job 291 is not tracked: wait collects its record, but only 'migadvisor track JOB.sh 291' links it") ||
		strings.Contains(errOut, "job 1 ") {
		t.Errorf("exit %d: %q", code, errOut)
	}
}

// Ctrl-C while waiting stops the wait, not the jobs: it says so and how to
// wait again, exit status 130.
func TestWaitInterruptedSaysHowToResume(t *testing.T) {
	isolate(t)
	db := filepath.Join(t.TempDir(), "history.db")
	fake := slurmtest.New().Prints("squeue", "4242|4242|RUNNING|gres/gpu:a100_10g:1|None\n")
	dir := filepath.Join(t.TempDir(), "my sweep")
	for _, c := range []struct {
		opt  waitOptions
		want string
	}{
		{waitOptions{ids: []string{"4242"}}, "'migadvisor wait 4242' waits for them again"},
		{waitOptions{sweep: dir}, "'migadvisor wait --sweep '" + dir + "'' waits for them again"},
	} {
		if c.opt.sweep != "" {
			sw := &bench.Sweep{Version: bench.SweepVersion, Profiles: []string{"1g.10gb"}, Variants: map[string]*bench.Variant{"1g.10gb": {Profile: "1g.10gb", File: "1g.10gb.sh", JobID: "4242"}}}
			if err := os.MkdirAll(dir, 0o755); err != nil {
				t.Fatal(err)
			}
			if err := bench.SaveSweep(dir, sw); err != nil {
				t.Fatal(err)
			}
		}
		c.opt.Global, c.opt.Slurm = globalFlags{DB: db}, slurmFlags{Runner: fake}
		c.opt.wait.Poll = time.Second
		ctx, cancel := context.WithCancel(context.Background())
		time.AfterFunc(300*time.Millisecond, cancel) // as Ctrl-C would, while the job runs
		var out, errOut strings.Builder
		err := runWait(ctx, c.opt, outWriters{Out: &out, Err: &errOut})
		cancel()
		if code := exitCode(err, &errOut, "wait"); code != exitInterrupted {
			t.Errorf("%+v: exit %d (%v)", c.opt, code, err)
		}
		if want := "migadvisor: interrupted; the jobs still run in Slurm: " + c.want + "\n"; !strings.HasSuffix(errOut.String(), want) || out.Len() > 0 {
			t.Errorf("stderr %q\nwant %q", errOut.String(), want)
		}
	}
}

// wait's flags and arguments reach its options (argv → options); negative
// durations are usage errors.
func TestWaitFlagsBindTheOptions(t *testing.T) {
	isolate(t)
	t.Setenv("MIGADVISOR_CLUSTER", "")
	t.Setenv("MIGADVISOR_SLURM_BIN", "")
	for _, c := range []struct {
		args []string
		want waitOptions // Global aside
		err  string
	}{
		{nil, waitOptions{wait: bench.WaitOptions{Poll: 15 * time.Second}}, ""},
		{[]string{"--sweep", "my sweep", "--no-collect", "--json"},
			waitOptions{sweep: "my sweep", noCollect: true, json: true, wait: bench.WaitOptions{Poll: 15 * time.Second}}, ""},
		{[]string{"--timeout", "2h", "--poll", "30s", "--outputs", "a", "--outputs", "b", "--cluster", "c", "--slurm-bin", "/s", "1", "2"},
			waitOptions{ids: []string{"1", "2"}, outputs: []string{"a", "b"}, Slurm: slurmFlags{Bin: "/s", Cluster: "c"},
				wait: bench.WaitOptions{Timeout: 2 * time.Hour, Poll: 30 * time.Second}}, ""},
		{[]string{"--timeout=-1s"}, waitOptions{}, "--timeout is a duration such as 2h, not -1s"},
		{[]string{"--poll=-1m"}, waitOptions{}, "--poll is a duration such as 30s, not -1m0s"},
	} {
		got, err := optionsOf(t, waitCommand(), waitOptionsFrom, c.args...)
		if c.err != "" {
			if _, usage := err.(usageError); !usage || err.Error() != c.err {
				t.Errorf("%q: error %v, want the usage error %q", c.args, err, c.err)
			}
			continue
		}
		got.Global = globalFlags{}
		got.ids, got.outputs = append([]string(nil), got.ids...), append([]string(nil), got.outputs...) // none: nil, as wanted
		if err != nil || !reflect.DeepEqual(got, c.want) {
			t.Errorf("%q:\n got %+v, %v\nwant %+v", c.args, got, err, c.want)
		}
	}
}
