//go:build slurm

package main

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/migadvisor/migadvisor/advisor/app/index"
)

// salloc runs Slurm's salloc (or srun: cmd) with the filter and env added
// to the test's environment: its stdout and stderr as one stream, and the
// id of the job it made ("" for none).
func (c cliFilter) session(t *testing.T, env []string, cmd string, args ...string) (out, id string) {
	t.Helper()
	run := exec.Command(cmd, args...)
	run.Env = append(append(os.Environ(), "SLURM_CONF="+c.conf), env...)
	b, err := run.CombinedOutput()
	if err != nil {
		t.Fatalf("%s %q: %v\n%s", cmd, args, err, b)
	}
	if m := regexp.MustCompile(`(?m)^(?:salloc: Granted job allocation|srun: job) (\d+)`).FindSubmatch(b); m != nil {
		id = string(m[1])
		t.Cleanup(func() { exec.Command("scancel", id).Run() })
	}
	return string(b), id
}

// pastSessions submits n sessions named name on a whole A100 (sbatch
// --wrap, as OnDemand submits its own, without the filter), each given
// jobstats' summary of 2.6 to 2.9 GiB in use while it runs, waits for
// them and collects them into the user's history and advice index.
func pastSessions(t *testing.T, db, name string, n int) {
	t.Helper()
	var ids []string
	for i := range n {
		out, err := exec.Command("sbatch", "--parsable", "-J", name, "--gres=gpu:a100:1", "--mem=64M", "-t", "2", "--wrap", "sleep 4").Output()
		if err != nil {
			t.Fatal(err)
		}
		id := strings.TrimSpace(string(out))
		ids = append(ids, id)
		t.Cleanup(func() { exec.Command("scancel", id).Run() })
		waitRunning(t, id)
		used := []float64{2600, 2969.6, 2700}[i%3]
		if out, err := exec.Command("scontrol", "update", "jobid="+id, "AdminComment="+jobstatsField(t, used, 81920, 20)).CombinedOutput(); err != nil {
			t.Fatalf("scontrol update %s: %v: %s", id, err, out)
		}
	}
	mustRun(t, append([]string{"wait", "--timeout", "1m"}, ids...)...)
	for try := 0; ; try++ {
		mustRun(t, "collect")
		r, err := index.Open(index.OwnPath(db))
		if err != nil {
			t.Fatal(err)
		}
		kept, _, err := r.Sessions(currentUser(t), name)
		r.Close()
		measured := 0
		for _, s := range kept.Sessions {
			if s.JobstatsMiB != nil {
				measured++
			}
		}
		if err == nil && measured == n {
			return
		}
		if try == 5 {
			t.Fatalf("the index keeps %+v (%v) of %d sessions named %s", kept, err, n, name)
		}
		time.Sleep(2 * time.Second) // slurmdbd's placeholder of a short job, until the real record is there
	}
}

// currentUser is who runs the test, as Slurm's accounting names them.
func currentUser(t *testing.T) string {
	t.Helper()
	out, err := exec.Command("id", "-un").Output()
	if err != nil {
		t.Fatal(err)
	}
	return strings.TrimSpace(string(out))
}

// requested is what a job asked for and its name, as accounting has them
// ("ReqTRES|JobName"), once slurmdbd has more than its placeholder.
func requested(t *testing.T, id string) string {
	t.Helper()
	for deadline := time.Now().Add(30 * time.Second); ; time.Sleep(500 * time.Millisecond) {
		out, _ := exec.Command("sacct", "-X", "-n", "-P", "-o", "ReqTRES,JobName", "-j", id).Output()
		if line := strings.TrimSpace(string(out)); strings.Contains(line, "cpu=") || time.Now().After(deadline) {
			return line
		}
	}
}

// Interactive sessions through the installed cli_filter on the dev
// cluster's real Slurm: after three sessions named like this one peaked at
// 2.9 GiB on a whole A100, salloc -J on a whole A100 prints the advice
// before its allocation, and with MIGADVISOR_APPLY=1 the job asks for the
// slice; the same request again is answered by the filter's cache alone;
// srun that makes a job is advised alike, by the name sacct gives it; a
// name without sessions, a request of the slice already, MIGADVISOR_DISABLE
// and salloc or srun inside a job (the steps) hear nothing. No record of a session goes to the spool.
func TestSlurmCliFilterSession(t *testing.T) {
	work := slurmWorkDir(t)
	db := filepath.Join(work, "history.db")
	os.Unsetenv("SLURM_JOB_ID")
	filter := installCliFilter(t, "")
	name := fmt.Sprintf("cfsession%d", time.Now().UnixNano())
	pastSessions(t, db, name, 3)
	alloc := []string{"-J", name, "--gres=gpu:a100:1", "--mem=64M", "-t", "1"}
	advice := "migadvisor: your last 3 sessions named " + name + " peaked at 2.9 GiB: 1g.10gb is enough, 3 SU/h instead of 17"
	lines := func(out string) []string { return regexp.MustCompile(`(?m)^migadvisor: .*$`).FindAllString(out, -1) }

	// The step srun runs inside the allocation passes the filter too: it says nothing.
	out, id := filter.session(t, nil, "salloc", append(alloc, "srun", "true")...)
	t.Logf("salloc %s:\n%s", strings.Join(alloc, " "), out)
	want := advice + "; next time ask with --gres=gpu:a100_10g:1, or set MIGADVISOR_APPLY=1 to have it changed for you\n"
	if !strings.HasPrefix(out, want) || len(lines(out)) != 1 || id == "" {
		t.Errorf("salloc: %q, want it to begin %q", out, want)
	}
	if got := requested(t, id); !strings.Contains(got, "gres/gpu:a100=1") {
		t.Errorf("job %s asked for %s", id, got)
	}

	out, id = filter.session(t, []string{"MIGADVISOR_APPLY=1"}, "salloc", append(alloc, "true")...)
	t.Logf("MIGADVISOR_APPLY=1 salloc %s:\n%s", strings.Join(alloc, " "), out)
	if !strings.HasPrefix(out, advice+".\nmigadvisor: submitting on 1g.10gb: --gres=gpu:a100:1 -> --gres=gpu:a100_10g:1\n") {
		t.Errorf("with consent: %q", out)
	}
	if got := requested(t, id); !strings.Contains(got, "gres/gpu:a100_10g=1") || strings.Contains(got, "gres/gpu:a100=1") {
		t.Errorf("applied: job %s asked for %s", id, got)
	}

	// The cache answers the same request again, with the binary gone.
	bin := filepath.Join(filter.prefix, "libexec/migadvisor/migadvisor-sbatch")
	if err := os.Rename(bin, bin+".away"); err != nil {
		t.Fatal(err)
	}
	out, id = filter.session(t, []string{"MIGADVISOR_APPLY=1"}, "salloc", append(alloc, "true")...)
	os.Rename(bin+".away", bin)
	if !strings.HasPrefix(out, advice+".\nmigadvisor: submitting on 1g.10gb: --gres=gpu:a100:1 -> --gres=gpu:a100_10g:1\n") {
		t.Errorf("from the cache: %q", out)
	}
	if got := requested(t, id); !strings.Contains(got, "gres/gpu:a100_10g=1") {
		t.Errorf("applied from the cache: job %s asked for %s", id, got)
	}

	// srun without -J: its job is named after its program, as the filter reads it.
	prog := writeScript(t, work, name, "#!/bin/sh\ntrue\n")
	out, id = filter.session(t, nil, "srun", "--gres=gpu:a100:1", "--mem=64M", "-t", "1", prog)
	if !strings.HasPrefix(out, advice+"; next time ask with --gres=gpu:a100_10g:1") || len(lines(out)) != 1 {
		t.Errorf("srun: %q", out)
	}
	if got := requested(t, id); !strings.HasSuffix(got, "|"+name) {
		t.Errorf("srun's job %s: %s, want the name %s", id, got, name)
	}
	// salloc without -J: sacct's name for it is the filter's.
	if _, id := filter.session(t, nil, "salloc", "--mem=64M", "-t", "1", "true"); !strings.HasSuffix(requested(t, id), "|interactive") {
		t.Errorf("salloc without -J: job %s is %s", id, requested(t, id))
	}

	for _, c := range []struct {
		what string
		env  []string
		args []string
	}{
		{"a name without sessions", nil, []string{"-J", name + "x", "--gres=gpu:a100:1", "--mem=64M", "-t", "1", "true"}},
		{"the slice already", []string{"MIGADVISOR_APPLY=1"}, []string{"-J", name, "--gres=gpu:a100_10g:1", "--mem=64M", "-t", "1", "true"}},
		{"disabled", []string{"MIGADVISOR_DISABLE=1"}, append(alloc, "true")},
		{"inside a job", []string{"SLURM_JOB_ID=" + id}, append(alloc, "true")},
	} {
		if out, _ := filter.session(t, c.env, "salloc", c.args...); strings.Contains(out, "migadvisor") {
			t.Errorf("%s: %q", c.what, out)
		}
	}
	if files, _ := filepath.Glob(filepath.Join(db+".spool", "*.json")); len(files) != 0 {
		t.Errorf("records of sessions: %v", files)
	}
	if left := leftBehind(filter); len(left) != 0 {
		t.Errorf("processes left behind: %v", left)
	}
}

// What the filter adds to a session: srun --test-only (salloc has no
// --test-only) of a session named like past ones, with an empty
// cli_filter.lua, with migadvisor's answering from its cache, and with its
// cache removed first (filter-advise answers), round by round in a rotated
// order. It logs min, median, p95 and max of each and of the pairs'
// differences (MIGADVISOR_TEST_CLIFILTER_PAIRS pairs, default 30).
func TestSlurmCliFilterSessionCost(t *testing.T) {
	work := slurmWorkDir(t)
	db := filepath.Join(work, "history.db")
	os.Unsetenv("SLURM_JOB_ID")
	ours := installCliFilter(t, "")
	empty := cliFilter{conf: filterConf(t, "function slurm_cli_setup_defaults(o, e) return slurm.SUCCESS end\n"+
		"function slurm_cli_pre_submit(o, p) return slurm.SUCCESS end\n"+
		"function slurm_cli_post_submit(o, j, s) return slurm.SUCCESS end\n")}
	name := fmt.Sprintf("cfsessioncost%d", time.Now().UnixNano())
	pastSessions(t, db, name, 1)
	args := []string{"--test-only", "-J", name, "--gres=gpu:a100:1", "--mem=64M", "-t", "1", "true"}
	cache := index.FilterCachePath(db)
	if out, _ := ours.session(t, nil, "srun", args...); !strings.Contains(out, "migadvisor: your last session named") || readCache(t, cache) == "" {
		t.Fatalf("no advice to measure, or none cached: %q", out)
	}
	pairs := 30
	if n, err := strconv.Atoi(os.Getenv("MIGADVISOR_TEST_CLIFILTER_PAIRS")); err == nil && n > 0 {
		pairs = n
	}
	timed := func(c cliFilter) time.Duration {
		start := time.Now()
		c.session(t, nil, "srun", args...)
		return time.Since(start)
	}
	var e, hit, miss, dHit, dMiss []time.Duration
	for i := range pairs {
		var a, h, m time.Duration
		runs := []func(){
			func() { a = timed(empty) },
			func() { h = timed(ours) },
			func() { os.Remove(cache); m = timed(ours) },
		}
		for k := range runs {
			runs[(i+k)%len(runs)]()
		}
		e, hit, miss, dHit, dMiss = append(e, a), append(hit, h), append(miss, m), append(dHit, h-a), append(dMiss, m-a)
	}
	spread := func(xs []time.Duration) string {
		s := slices.Clone(xs)
		slices.Sort(s)
		ms := func(x time.Duration) float64 { return float64(x.Microseconds()) / 1000 }
		return fmt.Sprintf("min %5.2f ms, median %5.2f ms, p95 %5.2f ms, max %5.2f ms",
			ms(s[0]), ms(s[len(s)/2]), ms(s[(len(s)*95-1)/100]), ms(s[len(s)-1]))
	}
	t.Logf("%d rounds of srun --test-only of a session:\n  empty cli_filter.lua:       %s\n  migadvisor's (cache hit):   %s\n"+
		"  paired difference:          %s\n  migadvisor's (cache miss):  %s\n  paired difference:          %s",
		pairs, spread(e), spread(hit), spread(dHit), spread(miss), spread(dMiss))
	slices.Sort(dHit)
	if dHit[len(dHit)/2] > 10*time.Millisecond { // CI's machines are shared
		t.Errorf("the filter adds %v p50 from its cache", dHit[len(dHit)/2])
	}
}
