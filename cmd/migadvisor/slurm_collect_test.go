//go:build slurm

// Collecting on the dev cluster's real Slurm: an incremental window, a
// collect while others submit, a dump without its cluster.

package main

import (
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/migadvisor/migadvisor/advisor/app/collect"
	"github.com/migadvisor/migadvisor/advisor/app/joblist"
	"github.com/migadvisor/migadvisor/slurm"
)

// TestSlurmIncrementalCollectOfAnOddName: a site-wide collect reads the
// last day once, then each incremental one reads from where the last left
// off: the job submitted in between (named with quotes, $(), backticks, a
// pipe and unicode, through Slurm's own sbatch) and little else. The name
// comes back from sacct as slurmdbd keeps it, and nothing evaluates it.
func TestSlurmIncrementalCollectOfAnOddName(t *testing.T) {
	requireCluster(t)
	isolate(t)
	// The jobs earlier tests left (cancelled ones still settling in
	// slurmdbd) would be read by the incremental collects as the changes
	// they are: this test counts its own job's alone. Seen once in a dozen
	// runs: "a collect with nothing new read 6 jobs", 5 of them cancelled
	// by the test before in the same seconds.
	for deadline := time.Now().Add(2 * time.Minute); len(queued(t)) > 0; time.Sleep(time.Second) {
		if time.Now().After(deadline) {
			t.Fatalf("jobs still queued: %v", queued(t))
		}
	}
	time.Sleep(5 * time.Second) // slurmdbd records the last ends
	work := t.TempDir()
	t.Chdir(work)
	t.Setenv("MIGADVISOR_DB", filepath.Join(work, "site.db"))
	collected := func(args ...string) collect.Summary {
		t.Helper()
		var rep collect.Summary
		out := mustRun(t, append([]string{"collect", "--all-users", "--overlap", "0s", "--json"}, args...)...)
		if err := json.Unmarshal([]byte(out), &rep); err != nil || rep.Window == nil {
			t.Fatalf("collect: %v\n%s", err, out)
		}
		return rep
	}
	first := collected("--since", "1d")
	if first.Window.FromWatermark || first.Window.Watermark.IsZero() {
		t.Fatalf("first collect: %+v", first.Window)
	}
	name := `odd "name" it's $(touch PWNED1) ` + "`touch PWNED2`" + ` | ☃`
	job := writeScript(t, work, "odd.sh", "#!/bin/bash\n#SBATCH -J "+slurm.QuoteValue(name)+
		"\n#SBATCH --gres=gpu:a100_10g:1\n#SBATCH --mem=64M\n#SBATCH -t 1\necho done\n")
	out, err := exec.Command("sbatch", "--parsable", job).Output()
	if err != nil {
		t.Fatal(err)
	}
	id := strings.TrimSpace(string(out))
	mustRun(t, "wait", id, "--timeout", "1m")
	prev := first
	var found *joblist.JobEntry
	for try := 0; try < 20 && found == nil; try++ { // slurmdbd may still hold a placeholder
		rep := collected()
		if !rep.Window.FromWatermark || !rep.Window.Since.Equal(prev.Window.Watermark) {
			t.Fatalf("collect %d started at %v (from the watermark: %v), want %v", try, rep.Window.Since, rep.Window.FromWatermark, prev.Window.Watermark)
		}
		if rep.Read >= first.Read {
			t.Errorf("an incremental collect read %d jobs, the whole day %d", rep.Read, first.Read)
		}
		prev = rep
		var hist []joblist.JobEntry
		json.Unmarshal([]byte(mustRun(t, "history", "--json", "--limit", "0")), &hist)
		for i := range hist {
			if hist[i].JobID == id && hist[i].State == "COMPLETED" && hist[i].Name != "allocation" {
				found = &hist[i]
			}
		}
		time.Sleep(time.Second)
	}
	// slurmdbd stores a double quote in a job name as a backtick (Slurm
	// 22.05's accounting does this to every name); the rest is kept.
	if want := strings.ReplaceAll(name, `"`, "`"); found == nil || found.Name != want {
		t.Fatalf("job %s in the history: %s; want the name %q", id, dump(found), want)
	}
	if quiet := collected(); quiet.New != 0 || quiet.Read > 1 {
		// Jobs of earlier tests that slurmdbd still settles, or that ended
		// in the watermark's second, are in the window as sacct itself
		// has it (seen in one run of fifteen: 4 jobs read, 0 new): the
		// collect reads those and no more, and nothing new.
		inWindow := sacctWindow(t, quiet.Window.Since)
		if quiet.New != 0 || quiet.Read > len(inWindow) {
			t.Errorf("a collect with nothing new read %d jobs, %d new; sacct has %d in its window since %v: %v",
				quiet.Read, quiet.New, len(inWindow), quiet.Window.Since, inWindow)
		}
	}
	if matches, _ := filepath.Glob(filepath.Join(work, "PWNED*")); len(matches) > 0 {
		t.Errorf("something evaluated the job name: %v", matches)
	}
}

// TestSlurmConcurrentSubmitCollectRecommend: 22 processes at once on one
// history that does not exist yet, against the real cluster: 8 sbatch
// wrappers submitting real jobs through Slurm's sbatch, 6 site-wide
// collects running real sacct, 6 recommends and 2 histories. None fails or
// shows a locked database, and every submission is in the history, linked
// to its job.
func TestSlurmConcurrentSubmitCollectRecommend(t *testing.T) {
	requireCluster(t)
	isolate(t)
	work := t.TempDir()
	t.Chdir(work)
	db := filepath.Join(work, "state", "history.db")
	t.Setenv("MIGADVISOR_DB", db)
	t.Setenv("MIGADVISOR_SBATCH", "") // the wrappers find Slurm's sbatch on PATH
	job := writeScript(t, work, "tiny.sh", uniqueRun("#!/bin/bash\n#SBATCH --mem=64M\n#SBATCH -t 1\n#SBATCH --output=%x.%j.out\n"))
	var procs []*process
	for range 8 {
		procs = append(procs, &process{args: []string{"sbatch", job}})
	}
	for range 6 {
		procs = append(procs, &process{args: []string{"collect", "--all-users", "--since", "10m", "--scripts=false", "--json"}})
	}
	for range 6 {
		procs = append(procs, &process{args: []string{"recommend", job, "--json"}})
	}
	for range 2 {
		procs = append(procs, &process{args: []string{"history", "--json"}})
	}
	runTogether(t, migadvisorBinary(t), work, procs)
	var ids []string
	for _, p := range procs {
		if id, ok := strings.CutPrefix(p.stdout.String(), "Submitted batch job "); ok {
			ids = append(ids, strings.TrimSpace(id))
		}
	}
	if len(ids) != 8 {
		t.Fatalf("%d of 8 wrappers submitted", len(ids))
	}
	mustRun(t, append([]string{"wait", "--timeout", "2m"}, ids...)...) // wait collects their records
	linked := 0
	for _, tr := range trackedJobs(t, db) {
		if tr.Script == job && tr.Ended() && tr.Jobs[0].State == "COMPLETED" {
			linked++
		}
	}
	if linked != 8 {
		t.Errorf("%d of the 8 submissions are in the history with their completed job: %s", linked, dump(trackedJobs(t, db)))
	}
}

// sacctNoCluster is a user's own dump of a job's accounting, saved without
// the Cluster column.
const sacctNoCluster = "JobIDRaw,JobID,User,Account,Partition,QOS,State,ExitCode,Submit,Start,End,ElapsedRaw,TimelimitRaw," +
	"NNodes,AllocCPUS,NTasks,ReqMem,MaxRSS,AllocTRES,ReqTRES,NodeList,WorkDir,JobName"

// The plain flow a user types, with no cluster named anywhere: a job
// submitted with Slurm's own sbatch, its accounting saved by sacct without
// the Cluster column, imported with collect --sacct-file and linked with
// track, in either order: recommend weighs the run. Then the script is
// edited, and its run still counts, as an earlier version's.
func TestSlurmDumpWithoutClusterAndTrack(t *testing.T) {
	requireCluster(t)
	isolate(t)
	work := t.TempDir()
	t.Chdir(work)
	script := writeScript(t, work, "quick.sh", uniqueRun("#!/bin/bash\n#SBATCH --gres=gpu:a100_10g:1\n#SBATCH --mem=64M -t 2\necho MIGADVISOR_WORK 7 steps\n"))
	out, err := exec.Command("sbatch", "--parsable", script).Output()
	if err != nil {
		t.Fatal(err)
	}
	id := strings.TrimSpace(string(out))
	mustRun(t, "wait", id, "--no-collect", "--timeout", "1m")
	dumpFile := filepath.Join(work, "dump.txt")
	for try := 0; ; try++ { // slurmdbd may first hold a placeholder for a short job
		out, err = exec.Command("sacct", "-j", id, "--parsable2", "-o", sacctNoCluster).Output()
		// The final record has the job's name; the placeholder's is "allocation".
		if err == nil && strings.Contains(string(out), "|COMPLETED|") && strings.Contains(string(out), "|quick.sh\n") {
			break
		}
		if try == 30 {
			t.Fatalf("no final accounting record of job %s: %v\n%s", id, err, out)
		}
		time.Sleep(time.Second)
	}
	if strings.Contains(strings.SplitN(string(out), "\n", 2)[0], "Cluster") {
		t.Fatalf("the dump has a Cluster column:\n%s", out)
	}
	os.WriteFile(dumpFile, out, 0o644)

	runsOf := func() (int, []string) {
		var rec struct {
			Notes    []string
			Profiles []struct{ Runs int }
		}
		if err := json.Unmarshal([]byte(mustRun(t, "recommend", script, "--json")), &rec); err != nil {
			t.Fatal(err)
		}
		n := 0
		for _, p := range rec.Profiles {
			n += p.Runs
		}
		return n, rec.Notes
	}
	for _, order := range [][]string{{"collect", "track"}, {"track", "collect"}} {
		t.Setenv("MIGADVISOR_DB", filepath.Join(work, order[0]+"-first.db"))
		for _, step := range order {
			args := []string{"collect", "--sacct-file", dumpFile}
			if step == "track" {
				args = []string{"track", script, id}
			}
			_, errOut, code := migadvisor(t, args...)
			want := ""
			if step == "track" && order[0] == "track" {
				want = "migadvisor: job " + id + " is not in the history yet: run 'migadvisor collect' after it ends\n"
			}
			if code != 0 || errOut != want {
				t.Errorf("%v, %s: exit %d, stderr %q, want %q", order, step, code, errOut, want)
			}
		}
		if n, notes := runsOf(); n != 1 {
			t.Errorf("%v: recommend weighs %d runs, want 1; notes %q", order, n, notes)
		}
		var hist []joblist.JobEntry
		if err := json.Unmarshal([]byte(mustRun(t, "history", script, "--json")), &hist); err != nil || len(hist) != 1 ||
			hist[0].JobID != id || hist[0].Cluster != "migdev" || hist[0].State != "COMPLETED" {
			t.Errorf("%v: history %v %s", order, err, dump(hist))
		}
	}

	// Imported where Slurm could not be asked (under "local"), then tracked
	// and collected with Slurm at hand: one job, under migdev, counted once.
	t.Setenv("MIGADVISOR_DB", filepath.Join(work, "no-slurm-first.db"))
	t.Setenv("MIGADVISOR_SLURM_BIN", t.TempDir())
	mustRun(t, "collect", "--sacct-file", dumpFile)
	t.Setenv("MIGADVISOR_SLURM_BIN", "")
	mustRun(t, "track", script, id)
	if out := mustRun(t, "collect", "--since", "2h"); !strings.Contains(out, "1 job filed under cluster \"local\" is the same as migdev's: it is one record now, under migdev\n") {
		t.Errorf("collect after a dump filed under local:\n%s", out)
	}
	if n, notes := runsOf(); n != 1 {
		t.Errorf("after the dump under local and the collect: recommend weighs %d runs, want 1; notes %q", n, notes)
	}
	var all []joblist.JobEntry
	if err := json.Unmarshal([]byte(mustRun(t, "history", "--json")), &all); err != nil {
		t.Fatal(err)
	}
	for _, j := range all {
		if j.JobID == id && j.Cluster != "migdev" {
			t.Errorf("job %s under %s too", id, j.Cluster)
		}
	}

	os.WriteFile(script, []byte(uniqueRun("#!/bin/bash\n#SBATCH --gres=gpu:a100_10g:1\n#SBATCH --mem=64M -t 2\necho MIGADVISOR_WORK 8 steps\n")), 0o755)
	if n, notes := runsOf(); n != 1 || !strings.Contains(strings.Join(notes, "\n"), "1 run of an earlier version (the same path) is used") {
		t.Errorf("after an edit: recommend weighs %d runs; notes %q", n, notes)
	}
}

// sacctWindow is the jobs (allocations) sacct has of every user from
// since on, as a collect's window reads them.
func sacctWindow(t *testing.T, since time.Time) []string {
	t.Helper()
	out, err := exec.Command("sacct", "-a", "-X", "-n", "-P", "-S", since.Local().Format("2006-01-02T15:04:05"), "-o", "JobIDRaw").Output()
	if err != nil {
		t.Fatalf("sacct: %v", err)
	}
	return strings.Fields(string(out))
}
