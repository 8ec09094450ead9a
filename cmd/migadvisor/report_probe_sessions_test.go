//go:build !noreport

package main

import (
	"encoding/csv"
	"encoding/json"
	"fmt"
	"os"
	"os/user"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/migadvisor/migadvisor/slurm"
	"github.com/migadvisor/migadvisor/slurm/slurmtest"
)

// acctJob is one job of a site's accounting as these tests write it: one
// GPU of gres type gpu, 4 CPUs and 16G in partition gpu, submitted on
// November day at hour and held for seconds, its working directory dir;
// output, when given, is what it printed (dir/slurm-ID.out); script, when
// given, what slurmdbd stored of it (sacct --batch-script).
type acctJob struct {
	id, user, name, gpu, state string
	day, hour, seconds         int
	output, script             string
}

// siteAccounting is the jobs' sacct dump, and a Slurm of cluster migdev
// whose slurmdbd answers sacct --batch-script with the scripts it stored
// (and NONE for the others, as for a salloc session).
func siteAccounting(t *testing.T, dir string, jobs []acctJob) (dump string, fake *slurmtest.Fake) {
	t.Helper()
	var b strings.Builder
	b.WriteString("JobIDRaw|JobID|Cluster|User|Account|Partition|QOS|State|ExitCode|Submit|Start|End|ElapsedRaw|TimelimitRaw|AllocCPUS|ReqMem|AllocTRES|WorkDir|AdminComment|JobName\n")
	stored := map[string]string{}
	for _, j := range jobs {
		submit := time.Date(2026, 11, j.day, j.hour, 0, 0, 0, time.Local)
		start := submit.Add(time.Minute)
		end := start.Add(time.Duration(j.seconds) * time.Second)
		const at = "2006-01-02T15:04:05"
		fmt.Fprintf(&b, "%s|%s|migdev|%s|abc123|gpu|standard|%s|0:0|%s|%s|%s|%d|180|4|16G|cpu=4,gres/gpu:%s=1,gres/gpu=1,mem=16G,node=1|%s||%s\n",
			j.id, j.id, j.user, j.state, submit.Format(at), start.Format(at), end.Format(at), j.seconds, j.gpu, dir, j.name)
		if j.output != "" {
			if err := os.WriteFile(filepath.Join(dir, "slurm-"+j.id+".out"), []byte(j.output), 0o644); err != nil {
				t.Fatal(err)
			}
		}
		if j.script != "" {
			stored[j.id] = j.script
		}
	}
	dump = filepath.Join(dir, fmt.Sprintf("sacct-%d.psv", len(jobs)))
	if err := os.WriteFile(dump, []byte(b.String()), 0o644); err != nil {
		t.Fatal(err)
	}
	fake = slurmtest.New().Cluster("migdev").Prints("squeue", "").On("sacct", func(c slurm.Call) slurmtest.Reply {
		i := slices.Index(c.Args, "-j")
		if !slices.Contains(c.Args, "--batch-script") || i < 0 || i+1 >= len(c.Args) {
			return slurmtest.Reply{Stdout: b.String()}
		}
		var out strings.Builder
		for _, id := range strings.Split(c.Args[i+1], ",") {
			fmt.Fprintf(&out, "Batch Script for %s\n%s\n", id, strings.Repeat("-", 80))
			if s, ok := stored[id]; ok {
				out.WriteString(s + "\n")
			} else {
				out.WriteString("NONE\n\n")
			}
		}
		return slurmtest.Reply{Stdout: out.String()}
	})
	return dump, fake
}

// monitorLine is what the monitor prints at a job's end: peakMiB on the
// profile's slice of usableMiB.
func monitorLine(peakMiB, totalMiB int, profile string) string {
	return fmt.Sprintf("MIGADVISOR_GPU peak_mib=%d used_peak_mib=%d total_mib=%d samples=8 scope=tree profile=%s util=mean:20,max:40 device=NVIDIA A100-SXM4-80GB\n",
		peakMiB, peakMiB, totalMiB, profile)
}

// reportOut is what these tests read of report --json: a type of their
// own, so that they read what the JSON says, not what savings' types hold.
type reportOut struct {
	Total struct {
		Jobs    int `json:"jobs"`
		Smaller int `json:"smaller_jobs"`
	} `json:"total"`
	Scripts []struct {
		User        string   `json:"user"`
		Name        string   `json:"job_name"`
		Path        string   `json:"script"`
		Jobs        int      `json:"jobs"`
		JobIDs      []string `json:"job_ids"`
		Recommended string   `json:"recommended"`
		Basis       string   `json:"basis"`
		Session     bool     `json:"session"`
		MemoryKind  string   `json:"gpu_mem_kind"`
		SUSpent     float64  `json:"su_spent"`
		SUThere     float64  `json:"su_there"`
	} `json:"scripts"`
	Measurements struct {
		Jobs int `json:"jobs"`
	} `json:"measurements"`
	Unjudged []struct {
		Reason string `json:"reason"`
		Jobs   int    `json:"jobs"`
	} `json:"unjudged"`
}

// readReport is report --month 2026-11 --json with args.
func readReport(t *testing.T, fake *slurmtest.Fake, args ...string) reportOut {
	t.Helper()
	var rep reportOut
	text := mustRunWith(t, fake, append([]string{"report", "--month", "2026-11", "--json"}, args...)...)
	if err := json.Unmarshal([]byte(text), &rep); err != nil {
		t.Fatalf("report --json: %v\n%s", err, text)
	}
	return rep
}

// probedScript is issue 40's first case, as a new admin tried it on the
// dev cluster: alice ran mytrain.sh on the whole GPU three times, then
// the probe she was told to run (its four variants, as sweep writes them:
// slurmdbd stored their scripts with the sweep's monitor block, and the
// monitor saw 2.9 GiB on each), every job a few seconds long; a
// site-wide collect links them all to the script's fingerprint through
// slurmdbd's copies. It returns the jobs, for a later collect to add to,
// and alice's script.
func probedScript(t *testing.T, dir string) (jobs []acctJob, own string) {
	t.Helper()
	t.Setenv("MIGADVISOR_SITE", reportSite(t, ""))
	script := filepath.Join(dir, "mytrain.sh")
	own = "#!/bin/bash\n#SBATCH --job-name=mytrain\n#SBATCH --partition=gpu\n#SBATCH --gres=gpu:a100:1\n#SBATCH --cpus-per-task=4\n" +
		"#SBATCH --mem=16G\n#SBATCH --time=10\nsleep 4\n"
	if err := os.WriteFile(script, []byte(own), 0o644); err != nil {
		t.Fatal(err)
	}
	// The variants as sweep writes them, recorded in alice's own history.
	t.Setenv("MIGADVISOR_DB", filepath.Join(dir, "alice.db"))
	mustRunCLI(t, "sweep", script, "--out", filepath.Join(dir, "probe"))
	t.Setenv("MIGADVISOR_DB", filepath.Join(dir, "site.db"))
	variant := func(profile string) string {
		data, err := os.ReadFile(filepath.Join(dir, "probe", profile+".sh"))
		if err != nil {
			t.Fatal(err)
		}
		if !slurm.IsSweepVariant(data) {
			t.Fatalf("%s.sh carries no sweep block:\n%s", profile, data)
		}
		return string(data)
	}
	jobs = []acctJob{
		{"161", "alice", "mytrain", "a100", "COMPLETED", 2, 10, 4, "", own},
		{"162", "alice", "mytrain", "a100", "COMPLETED", 3, 10, 4, "", own},
		{"163", "alice", "mytrain", "a100", "COMPLETED", 4, 10, 4, "", own},
	}
	for i, v := range []struct {
		profile, gpu    string
		seconds, totals int
	}{{"1g.10gb", "a100_10g", 6, 9728}, {"2g.20gb", "a100_20g", 5, 19968}, {"3g.40gb", "a100_40g", 4, 40192}, {"full", "a100", 4, 81559}} {
		jobs = append(jobs, acctJob{fmt.Sprint(170 + i), "alice", "mytrain-" + v.profile, v.gpu, "COMPLETED", 5, 10, v.seconds,
			monitorLine(2900, v.totals, v.profile), variant(v.profile)})
	}
	return jobs, own
}

// collectSiteWide is the admin's collect of the jobs' accounting, with
// slurmdbd's scripts and the outputs in dir; it returns the Slurm that
// answered, for the commands that follow.
func collectSiteWide(t *testing.T, dir string, jobs []acctJob) *slurmtest.Fake {
	t.Helper()
	dump, fake := siteAccounting(t, dir, jobs)
	mustRunWith(t, fake, "collect", "--sacct-file", dump, "--all-users", "--outputs", dir)
	return fake
}

// notices is report --notify --dry-run's notices alone (after the
// report's own text), with args.
func notices(t *testing.T, fake *slurmtest.Fake, args ...string) string {
	t.Helper()
	out := mustRunWith(t, fake, append([]string{"report", "--month", "2026-11", "--notify-dir", t.TempDir(), "--dry-run"}, args...)...)
	_, body, ok := strings.Cut(out, "--- Subject: ")
	if !ok {
		t.Fatalf("no notice:\n%s", out)
	}
	return body
}

// A probe's variants measured the script, as its user was told to: they
// are evidence for 1g.10gb, never jobs that asked for too much (issue 40:
// "10 GPU jobs of yours asked for a bigger GPU" of the probe itself), in
// the report, its totals or the notice.
func TestReportCountsAProbesVariantsAsMeasurements(t *testing.T) {
	isolate(t)
	dir := t.TempDir()
	jobs, _ := probedScript(t, dir)
	fake := collectSiteWide(t, dir, jobs)
	rep := readReport(t, fake, "--min-su-saved", "0")
	if len(rep.Scripts) != 1 {
		t.Fatalf("rows: %+v", rep.Scripts)
	}
	row := rep.Scripts[0]
	if row.Jobs != 3 || strings.Join(row.JobIDs, " ") != "163 162 161" || row.Recommended != "1g.10gb" || rep.Total.Smaller != 3 ||
		rep.Measurements.Jobs != 4 || rep.Total.Jobs != 7 {
		t.Errorf("the probe's variants are counted as jobs on too big a slice: %+v; smaller %d of %d jobs, %d measurements",
			row, rep.Total.Smaller, rep.Total.Jobs, rep.Measurements.Jobs)
	}
	text := mustRunWith(t, fake, "report", "--month", "2026-11", "--min-su-saved", "0")
	if !strings.Contains(text, "\nprobes' and sweeps' variants: 4 jobs, ") {
		t.Errorf("the report does not say the variants were measurements:\n%s", text)
	}
	if body := notices(t, fake, "--min-su-saved", "0"); !strings.Contains(body, "In November 2026 ("+novemberZone()+"), 3 GPU jobs of yours") {
		t.Errorf("the notice counts the probe's variants:\n%s", body)
	}
}

// A row is named by the name its jobs bear, the same after the next
// collect (issue 40: "jobs named mytrain-1g.10gb" over jobs none of which
// bears it, "mytrain" after the next collect brought a newer run).
func TestReportNamesARowAfterItsJobs(t *testing.T) {
	isolate(t)
	dir := t.TempDir()
	jobs, own := probedScript(t, dir)
	fake := collectSiteWide(t, dir, jobs)
	rep := readReport(t, fake, "--min-su-saved", "0")
	if len(rep.Scripts) != 1 || rep.Scripts[0].Name != "mytrain" {
		t.Errorf("the row is not named mytrain: %+v", rep.Scripts)
	}
	text := mustRunWith(t, fake, "report", "--month", "2026-11", "--min-su-saved", "0")
	body := notices(t, fake, "--min-su-saved", "0")
	if strings.Contains(text, "mytrain-") || strings.Contains(body, "mytrain-") || !strings.Contains(body, "- jobs named “mytrain” with 4 CPUs") {
		t.Errorf("the report or the notice names the row after a variant:\n%s\n%s", text, body)
	}

	jobs = append(jobs, acctJob{"180", "alice", "mytrain", "a100", "COMPLETED", 6, 10, 4, "", own})
	fake = collectSiteWide(t, dir, jobs)
	if rep := readReport(t, fake, "--min-su-saved", "0"); len(rep.Scripts) != 1 || rep.Scripts[0].Name != "mytrain" {
		t.Errorf("after the next collect: %+v", rep.Scripts)
	}
}

// Where only slurmdbd's copy of a script is known, neither the JSON, the
// CSV nor the text shows the history's own address for it
// (sacct:migdev/163): the script column is empty.
func TestReportNeverShowsTheHistorysAddressOfAScript(t *testing.T) {
	isolate(t)
	dir := t.TempDir()
	jobs, _ := probedScript(t, dir)
	fake := collectSiteWide(t, dir, jobs)
	if rep := readReport(t, fake, "--min-su-saved", "0"); len(rep.Scripts) != 1 || rep.Scripts[0].Path != "" {
		t.Errorf("--json's script: %+v", rep.Scripts)
	}
	text := mustRunWith(t, fake, "report", "--month", "2026-11", "--min-su-saved", "0", "--csv")
	rows, err := csv.NewReader(strings.NewReader(text)).ReadAll()
	if err != nil || len(rows) != 2 || rows[0][2] != "script" || rows[1][2] != "" {
		t.Errorf("--csv: %v\n%s", err, text)
	}
	for _, args := range [][]string{{"--csv"}, {"--json"}, {}} {
		if text := mustRunWith(t, fake, append([]string{"report", "--month", "2026-11", "--min-su-saved", "0"}, args...)...); strings.Contains(text, "sacct:") {
			t.Errorf("report %v shows a sacct: address:\n%s", args, text)
		}
	}
}

// A notice gives a run of a few seconds in seconds, not as 00:00:00 on
// both sides (issue 40: "expect about 00:00:00").
func TestNoticeGivesShortRunsInSeconds(t *testing.T) {
	isolate(t)
	dir := t.TempDir()
	jobs, _ := probedScript(t, dir)
	fake := collectSiteWide(t, dir, jobs)
	body := notices(t, fake, "--min-su-saved", "0")
	if !strings.Contains(body, "Time: a run took about 00:00:04 on full; expect about 00:00:06 on 1g.10gb") || strings.Contains(body, "00:00:00") {
		t.Errorf("the notice's times:\n%s", body)
	}
}

// Issue 40's sessions, collected site-wide as an admin does: three Open
// OnDemand Jupyter sessions on a whole A100 that the monitor saw peak at
// 2.9 GiB (linked to the script slurmdbd stored, as the app writes one),
// and three salloc sessions with no memory figure, one of them a
// 3-second allocation on 1g.10gb. The report judges them as recommend
// --session does: the Jupyter sessions fit 1g.10gb, priced per hour held,
// and their notice says what to choose in the form, not an #SBATCH line;
// the salloc sessions are not judged (a session's end proves nothing
// without a memory figure), and recommend --session says the same.
func TestReportJudgesSessionsAsRecommendSessionDoes(t *testing.T) {
	isolate(t)
	dir := t.TempDir()
	t.Setenv("MIGADVISOR_SITE", reportSite(t, ""))
	t.Setenv("MIGADVISOR_DB", filepath.Join(dir, "site.db"))
	me, err := user.Current()
	if err != nil {
		t.Fatal(err)
	}
	const jupyter = "sys/dashboard/sys/jupyter"
	app := "#!/bin/bash\n#SBATCH --job-name=" + jupyter + "\ncd \"$HOME/ondemand/data/sys/dashboard/batch_connect/sys/jupyter/output\"\n" +
		"source ./script.sh\n"
	var jobs []acctJob
	for i := range 3 {
		jobs = append(jobs, acctJob{fmt.Sprint(201 + i), me.Username, jupyter, "a100", "TIMEOUT", 10 + i, 9, 7200,
			"[I 09:01:10 ServerApp] Jupyter Server is running\n" + monitorLine(2970, 81559, "full"), app})
	}
	jobs = append(jobs,
		acctJob{"211", me.Username, "interactive", "a100", "COMPLETED", 14, 9, 3600, "", ""},
		acctJob{"212", me.Username, "interactive", "a100", "COMPLETED", 15, 9, 3600, "", ""},
		acctJob{"213", me.Username, "interactive", "a100_10g", "COMPLETED", 16, 9, 3, "", ""})
	fake := collectSiteWide(t, dir, jobs)

	var adv sessionAdvice
	if err := json.Unmarshal([]byte(mustRunWith(t, fake, "recommend", "--session", jupyter, "--json")), &adv); err != nil ||
		adv.Recommended != "1g.10gb" || adv.SUPerHour == nil || adv.AskedSUPerHour == nil {
		t.Fatalf("recommend --session %s: %v %+v", jupyter, err, adv)
	}
	rep := readReport(t, fake)
	if len(rep.Scripts) != 1 {
		t.Fatalf("rows: %+v", rep.Scripts)
	}
	// Held as long on the slice: 3 sessions of 2 hours, at recommend
	// --session's prices per hour.
	row := rep.Scripts[0]
	if row.Name != jupyter || !row.Session || row.Basis != "held" || row.Recommended != adv.Recommended || row.Jobs != 3 ||
		row.MemoryKind != "peak" || row.SUThere != 3*2*(*adv.SUPerHour) || row.SUSpent != 3*2*(*adv.AskedSUPerHour) {
		t.Errorf("the Jupyter sessions' row is not recommend --session's judgement (%s, %v SU/h there, %v as asked): %+v",
			adv.Recommended, *adv.SUPerHour, *adv.AskedSUPerHour, row)
	}
	i := slices.IndexFunc(rep.Unjudged, func(u struct {
		Reason string `json:"reason"`
		Jobs   int    `json:"jobs"`
	}) bool {
		return strings.HasPrefix(u.Reason, "sessions with no GPU memory figure")
	})
	if i < 0 || rep.Unjudged[i].Jobs != 3 {
		t.Errorf("the salloc sessions with no memory figure are not left unjudged for want of one: %+v", rep.Unjudged)
	}
	adv = sessionAdvice{}
	if err := json.Unmarshal([]byte(mustRunWith(t, fake, "recommend", "--session", "interactive", "--json")), &adv); err != nil ||
		adv.Recommended != "" || !strings.Contains(adv.Why, "GPU memory figure") {
		t.Errorf("recommend --session interactive disagrees with the report: %v %+v", err, adv)
	}

	body := notices(t, fake)
	for _, want := range []string{"- sessions named “" + jupyter + "”: 3 sessions on full; 1g.10gb would do.",
		"Next time: choose 1g.10gb in the form of " + jupyter + " in place of full (it asks Slurm for --gres=gpu:a100_10g:1).",
		"migadvisor recommend --session " + jupyter + "\n", "about these sessions again"} {
		if !strings.Contains(body, want) {
			t.Errorf("the notice does not say %q:\n%s", want, body)
		}
	}
	// The sessions not judged are told of only as worth measuring, with the
	// monitor that measures them, never as ones a slice would do.
	judged, measure, _ := strings.Cut(body, "one measurement settles it")
	if strings.Contains(body, "#SBATCH") || strings.Contains(judged, "interactive") ||
		!strings.Contains(measure, "sessions named “interactive”") || !strings.Contains(measure, "migadvisor monitor -- ") {
		t.Errorf("the notice tells of #SBATCH lines for a session, of the sessions not judged as judged, or not how to measure them:\n%s", body)
	}
}
