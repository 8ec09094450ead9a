//go:build slurm

package main

import (
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/migadvisor/migadvisor/advisor/app/index"
	"github.com/migadvisor/migadvisor/advisor/app/joblist"
	"github.com/migadvisor/migadvisor/advisor/app/wrapper"
	"github.com/migadvisor/migadvisor/advisor/base/history"
	"github.com/migadvisor/migadvisor/slurm"
)

// cliFilter is migadvisor installed with make install into a prefix of its
// own, and a private copy of the cluster's slurm.conf that enables Slurm's
// cli_filter/lua with the installed cli_filter.lua beside it: a client run
// with SLURM_CONF=conf uses it, and the cluster stays as it is.
type cliFilter struct {
	prefix, conf string
}

// installCliFilter runs make install into a temporary prefix (the lean
// wrapper binary for each of the binaries: the filter runs only
// migadvisor-sbatch) and writes the private slurm.conf with lua, the
// cli_filter.lua beside it ("" for the installed one).
func installCliFilter(t *testing.T, lua string) cliFilter {
	t.Helper()
	bin := sbatchBinary(t)
	prefix := filepath.Join(t.TempDir(), "opt")
	cmd := exec.Command("make", "-s", "-C", filepath.Join(packageDir, "../.."), "install", "PREFIX="+prefix,
		"BIN="+bin, "LEAN="+bin, "WRAPPER="+bin)
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("make install: %v\n%s", err, out)
	}
	installed := mustRead(t, filepath.Join(prefix, "share/migadvisor/cli_filter.lua"))
	if !strings.Contains(installed, "local PREFIX = [==["+prefix+"]==]") || strings.Contains(installed, "@PREFIX@") {
		t.Fatalf("the installed cli_filter.lua does not know its prefix %s", prefix)
	}
	if lua == "" {
		lua = installed
	}
	return cliFilter{prefix: prefix, conf: filterConf(t, lua)}
}

// filterConf is a private slurm.conf that enables cli_filter/lua, with lua
// as its cli_filter.lua.
func filterConf(t *testing.T, lua string) string {
	t.Helper()
	dir := t.TempDir()
	var conf []string
	for _, line := range strings.Split(mustRead(t, "/etc/slurm/slurm.conf"), "\n") {
		if !strings.HasPrefix(strings.ToLower(line), "clifilterplugins") {
			conf = append(conf, line)
		}
	}
	conf = append(conf, "CliFilterPlugins=cli_filter/lua", "")
	if err := os.WriteFile(filepath.Join(dir, "slurm.conf"), []byte(strings.Join(conf, "\n")), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, "cli_filter.lua"), []byte(lua), 0o644); err != nil {
		t.Fatal(err)
	}
	return filepath.Join(dir, "slurm.conf")
}

// sbatch runs Slurm's sbatch with the filter, and env added to the test's
// environment; out is its stdout and stderr as one stream, in order.
func (c cliFilter) sbatch(t *testing.T, env []string, args ...string) (out string, err error) {
	t.Helper()
	cmd := exec.Command("sbatch", args...)
	cmd.Env = append(append(os.Environ(), "SLURM_CONF="+c.conf), env...)
	b, err := cmd.CombinedOutput()
	return string(b), err
}

var submittedLine = regexp.MustCompile(`(?m)^Submitted batch job (\d+)\n\z`)

// spooled are the records in the history's spool, by job id.
func spooled(t *testing.T, db string) map[string][]history.Submission {
	t.Helper()
	files, _ := filepath.Glob(filepath.Join(db+".spool", "*.json"))
	subs := map[string][]history.Submission{}
	for _, file := range files {
		var sub history.Submission
		if err := json.Unmarshal([]byte(mustRead(t, file)), &sub); err != nil {
			t.Fatalf("%s: %v", file, err)
		}
		subs[sub.JobID] = append(subs[sub.JobID], sub)
	}
	return subs
}

// waitSpooled waits for n records in the spool: post_submit writes them in
// the background.
func waitSpooled(t *testing.T, db string, n int) map[string][]history.Submission {
	t.Helper()
	for deadline := time.Now().Add(10 * time.Second); ; time.Sleep(50 * time.Millisecond) {
		files, _ := filepath.Glob(filepath.Join(db+".spool", "*.json"))
		if len(files) >= n || time.Now().After(deadline) {
			return spooled(t, db)
		}
	}
}

// leftBehind are the processes still running the installed filter's binary.
func leftBehind(c cliFilter) []string {
	bin := filepath.Join(c.prefix, "libexec/migadvisor/migadvisor-sbatch")
	procs, _ := filepath.Glob("/proc/[0-9]*/exe")
	var left []string
	for _, p := range procs {
		if exe, err := os.Readlink(p); err == nil && exe == bin {
			left = append(left, p)
		}
	}
	return left
}

// The cli_filter on the dev cluster's own sbatch: the first submission
// passes silently and is recorded with its job id, which collect links
// exactly; once the history has its run, the advice is on stderr before
// "Submitted batch job"; with MIGADVISOR_APPLY=1 the one job submitted
// asks for the advised slice. Inside a job, for an srun of no GPU, and for
// --test-only's record, it does nothing.
func TestSlurmCliFilter(t *testing.T) {
	requireCluster(t)
	isolate(t)
	work := t.TempDir()
	db := filepath.Join(work, "history.db")
	t.Setenv("MIGADVISOR_DB", db)
	t.Setenv("SLURM_JOB_ID", "")
	os.Unsetenv("SLURM_JOB_ID")
	t.Chdir(work)
	filter := installCliFilter(t, "")
	name := fmt.Sprintf("clifilter%d", time.Now().UnixNano())
	job := writeScript(t, work, "wrapped.sh", uniqueRun(strings.Replace(wrappedScript, "--job-name=wrapped", "--job-name="+name, 1)))
	var ids []string
	t.Cleanup(func() { exec.Command("scancel", ids...).Run() })
	submit := func(env []string, args ...string) (id, said string) {
		t.Helper()
		out, err := filter.sbatch(t, env, args...)
		m := submittedLine.FindStringSubmatchIndex(out)
		if err != nil || m == nil {
			t.Fatalf("sbatch %q: %v\n%s", args, err, out)
		}
		id = out[m[2]:m[3]]
		ids = append(ids, id)
		return id, out[:m[0]] // all it said before "Submitted batch job"
	}

	first, said := submit(nil, job)
	if said != "" {
		t.Errorf("first submission, no history: %q", said)
	}
	if subs := waitSpooled(t, db, 1); len(subs) != 1 || len(subs[first]) != 1 || subs[first][0].Source != job || subs[first][0].JobName != "" {
		t.Fatalf("the record of job %s: %s", first, dump(subs))
	}
	mustRun(t, "wait", first, "--timeout", "1m")
	mustRun(t, "collect")
	var hist []joblist.JobEntry
	if err := json.Unmarshal([]byte(mustRun(t, "history", job, "--json")), &hist); err != nil || len(hist) != 1 || hist[0].JobID != first {
		t.Fatalf("history of %s (job %s): %v %s", job, first, err, dump(hist))
	}
	checkJob(t, hist[0], "full", "COMPLETED", 0, 0)

	advised, said := submit(nil, job)
	use := regexp.MustCompile(`^migadvisor: this script allocated at most 1\.5 GiB of GPU memory in 1 run on a full A100; .*` +
		`Next time, submit with --gres=(gpu:a100_\d+g:1), or with MIGADVISOR_APPLY=1 in the environment to have it changed for you\.\n$`).FindStringSubmatch(said)
	if use == nil {
		t.Fatalf("advice before 'Submitted batch job': %q", said)
	}
	applied, said := submit([]string{"MIGADVISOR_APPLY=1"}, job)
	if !strings.HasSuffix(said, "migadvisor: submitting on "+map[string]string{"gpu:a100_10g:1": "1g.10gb", "gpu:a100_20g:1": "2g.20gb", "gpu:a100_40g:1": "3g.40gb"}[use[1]]+
		": --gres=gpu:a100:1 -> --gres="+use[1]+"\n") {
		t.Errorf("with consent: %q", said)
	}
	if out, err := exec.Command("scontrol", "show", "job", applied).Output(); err != nil || !strings.Contains(string(out), "gres:"+use[1]) {
		t.Errorf("the applied job asks for %s? %v\n%s", use[1], err, out)
	}
	// One submission a sbatch: the name's three jobs, no more.
	for deadline := time.Now().Add(30 * time.Second); ; time.Sleep(500 * time.Millisecond) {
		out, _ := exec.Command("sacct", "-X", "-n", "-P", "-o", "JobID", "--name", name, "-S", "now-1hour").Output()
		got := strings.Fields(string(out))
		slices.Sort(got)
		if want := slices.Sorted(slices.Values(ids)); slices.Equal(got, want) {
			break
		} else if len(got) > len(want) || time.Now().After(deadline) {
			t.Fatalf("jobs named %s: %v, want %v", name, got, want)
		}
	}
	subs := waitSpooled(t, db, 2)
	if len(subs) != 2 || len(subs[advised]) != 1 || subs[advised][0].Profile != "full" || len(subs[applied]) != 1 || subs[applied][0].Profile != map[string]string{"gpu:a100_10g:1": "1g.10gb", "gpu:a100_20g:1": "2g.20gb", "gpu:a100_40g:1": "3g.40gb"}[use[1]] {
		t.Errorf("records %s, want jobs %s and %s", dump(subs), advised, applied)
	}
	mustRun(t, "collect")
	var tracked []struct {
		JobID string `json:"job_id"`
	}
	err := json.Unmarshal([]byte(mustRun(t, "status", "--json")), &tracked)
	var got []string
	for _, j := range tracked {
		got = append(got, j.JobID)
	}
	slices.Sort(got)
	if want := slices.Sorted(slices.Values(ids)); err != nil || !slices.Equal(got, want) {
		t.Errorf("status tracks %v (%v), want %v", got, err, want)
	}

	// --test-only: the advice, no record; inside a job, for an srun of no
	// GPU, with MIGADVISOR_DISABLE=1: nothing at all.
	if out, err := filter.sbatch(t, nil, "--test-only", job); err != nil || !strings.HasPrefix(out, "migadvisor: this script allocated") {
		t.Errorf("--test-only: %v %q", err, out)
	}
	for _, env := range [][]string{{"SLURM_JOB_ID=" + first}, {"MIGADVISOR_DISABLE=1"}} {
		if out, err := filter.sbatch(t, env, "--test-only", job); err != nil || strings.Contains(out, "migadvisor") {
			t.Errorf("%s: %v %q", env, err, out)
		}
	}
	cmd := exec.Command("srun", "-n1", "--mem=16M", "-t", "1", "true")
	cmd.Env = append(os.Environ(), "SLURM_CONF="+filter.conf)
	if out, err := cmd.CombinedOutput(); err != nil || strings.Contains(string(out), "migadvisor") {
		t.Errorf("srun: %v %q", err, out)
	}
	time.Sleep(time.Second)
	if subs := spooled(t, db); len(subs) != 0 { // collect took the two
		t.Errorf("records of --test-only, srun or a job's sbatch: %s", dump(subs))
	}
	if left := leftBehind(filter); len(left) != 0 {
		t.Errorf("processes left behind: %v", left)
	}
}

// Every value crosses /bin/sh as one word: migadvisor.quote of the
// installed cli_filter.lua, in sbatch's own Lua, with hostile values; and a
// script in a directory named like an attack, with such a job name, is
// recorded as it is, its job by id.
func TestSlurmCliFilterQuoting(t *testing.T) {
	requireCluster(t)
	isolate(t)
	work := t.TempDir()
	db := filepath.Join(work, "history.db")
	t.Setenv("MIGADVISOR_DB", db)
	os.Unsetenv("SLURM_JOB_ID")
	t.Chdir(work)
	filter := installCliFilter(t, "")
	values := []string{"plain", "a b", "it's", "'", "''", "$(touch pwned)", "`touch pwned`", `"; touch pwned; "`,
		"line1\nline2\n", `back\slash`, "$HOME", "*", "-n", "", "tab\there", "é ünï", "]==]", "x'\"'$(touch pwned)'"}
	// The harness: the installed file, then a pre_submit that prints each
	// value through sh into a file of its own.
	var lua strings.Builder
	fmt.Fprintf(&lua, "dofile(%s)\nlocal values = {\n", luaString(filepath.Join(filter.prefix, "share/migadvisor/cli_filter.lua")))
	for _, v := range values {
		fmt.Fprintf(&lua, "\t%s,\n", luaString(v))
	}
	fmt.Fprintf(&lua, `}
function slurm_cli_pre_submit(options, offset)
	for i, v in ipairs(values) do
		os.execute("printf '%%s' " .. migadvisor.quote(v) .. " > " .. migadvisor.quote(%s .. "/out" .. i))
	end
	local f = io.open(%s .. "/nul", "w")
	f:write(tostring(migadvisor.quote("a\0b")))
	f:close()
	return slurm.SUCCESS
end
`, luaString(work), luaString(work))
	harness := cliFilter{prefix: filter.prefix, conf: filterConf(t, lua.String())}
	job := writeScript(t, work, "q.sh", "#!/bin/bash\n#SBATCH --mem=16M\n#SBATCH -t 1\ntrue\n")
	if out, err := harness.sbatch(t, nil, "--test-only", job); err != nil {
		t.Fatalf("sbatch: %v\n%s", err, out)
	}
	for i, v := range values {
		if got, err := os.ReadFile(filepath.Join(work, fmt.Sprintf("out%d", i+1))); err != nil || string(got) != v {
			t.Errorf("quote(%q) came through sh as %q, %v", v, got, err)
		}
	}
	if got := mustRead(t, filepath.Join(work, "nul")); got != "nil" {
		t.Errorf("quote of a NUL byte: %q", got)
	}

	dir := filepath.Join(work, "it's $(touch pwned) `touch pwned` dir")
	os.Mkdir(dir, 0o755)
	job = writeScript(t, dir, "job \"x\".sh", "#!/bin/bash\n#SBATCH --mem=16M\n#SBATCH -t 1\n#SBATCH -o /dev/null\ntrue\n")
	out, err := filter.sbatch(t, nil, "-H", "-J", `it's "$(touch pwned)"`, job)
	m := submittedLine.FindStringSubmatch(out)
	if err != nil || m == nil || strings.Contains(out, "migadvisor") {
		t.Fatalf("sbatch: %v\n%s", err, out)
	}
	t.Cleanup(func() { exec.Command("scancel", m[1]).Run() })
	if subs := waitSpooled(t, db, 1); len(subs) != 1 || len(subs[m[1]]) != 1 || subs[m[1]][0].Source != job {
		t.Errorf("the record of job %s: %s", m[1], dump(subs))
	}
	if matches, _ := filepath.Glob(filepath.Join(work, "*pwned*")); len(matches) != 1 { // the directory itself
		t.Errorf("sh ran a value: %v", matches)
	}
	if _, err := os.Stat(filepath.Join(packageDir, "pwned")); err == nil {
		t.Error("sh ran a value")
	}
}

// luaString is s as a Lua 5.1 string literal: every byte a decimal escape.
func luaString(s string) string {
	var b strings.Builder
	b.WriteByte('"')
	for i := 0; i < len(s); i++ {
		fmt.Fprintf(&b, "\\%d", s[i])
	}
	b.WriteByte('"')
	return b.String()
}

// Loops submitting at once, each its own script of one job name from one
// directory (what name and time cannot tell apart): every job has its
// record, with its own script, collect links each to it, and no filter
// process is left. MIGADVISOR_TEST_CLIFILTER_EACH sets the submissions a
// loop (default 25; 100 by hand).
func TestSlurmCliFilterConcurrent(t *testing.T) {
	requireCluster(t)
	isolate(t)
	work := t.TempDir()
	db := filepath.Join(work, "history.db")
	t.Setenv("MIGADVISOR_DB", db)
	os.Unsetenv("SLURM_JOB_ID")
	t.Chdir(work)
	filter := installCliFilter(t, "")
	const loops = 4
	each := 25
	if n, err := strconv.Atoi(os.Getenv("MIGADVISOR_TEST_CLIFILTER_EACH")); err == nil && n > 0 {
		each = n
	}
	name := fmt.Sprintf("cfloop%d", time.Now().UnixNano())
	var scripts []string
	for i := range loops {
		scripts = append(scripts, writeScript(t, work, fmt.Sprintf("loop%d.sh", i),
			fmt.Sprintf("#!/bin/bash\n#SBATCH -J %s\n#SBATCH --mem=16M\n#SBATCH -c 1\n#SBATCH -t 1\n#SBATCH -o /dev/null\necho loop %d\n", name, i)))
	}
	var mu sync.Mutex
	ids := map[string]string{} // job id: its script
	var all []string
	t.Cleanup(func() { exec.Command("scancel", all...).Run() })
	var wg sync.WaitGroup
	errs := make(chan error, loops)
	for _, script := range scripts {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for range each {
				out, err := filter.sbatch(t, nil, script)
				m := submittedLine.FindStringSubmatch(out)
				if err != nil || m == nil {
					errs <- fmt.Errorf("sbatch %s: %v %q", script, err, out)
					return
				}
				mu.Lock()
				ids[m[1]] = script
				all = append(all, m[1])
				mu.Unlock()
			}
		}()
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Fatal(err)
	}
	subs := waitSpooled(t, db, loops*each)
	fingerprints := map[string]string{}
	for _, s := range scripts {
		fingerprints[s] = mustFingerprint(t, s)
	}
	for id, script := range ids {
		if r := subs[id]; len(r) != 1 || r[0].Source != script || r[0].Fingerprint != fingerprints[script] {
			t.Errorf("job %s of %s: records %s", id, filepath.Base(script), dump(r))
		}
	}
	if len(subs) != len(ids) {
		t.Errorf("%d records' job ids for %d jobs", len(subs), len(ids))
	}
	time.Sleep(3 * time.Second) // filter-record's hard limit is 2.5 s
	if left := leftBehind(filter); len(left) != 0 {
		t.Errorf("processes left behind: %v", left)
	}
	// collect links each job to its own script.
	for deadline := time.Now().Add(3 * time.Minute); ; time.Sleep(time.Second) {
		out, _ := exec.Command("squeue", "-h", "-o", "%i", "-n", name).Output()
		if strings.TrimSpace(string(out)) == "" {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("jobs still queued: %s", out)
		}
	}
	for deadline := time.Now().Add(time.Minute); ; time.Sleep(2 * time.Second) {
		mustRun(t, "collect")
		linked := 0
		bad := false
		for _, script := range scripts {
			var hist []joblist.JobEntry
			if err := json.Unmarshal([]byte(mustRun(t, "history", script, "--json", "--limit", "0")), &hist); err != nil {
				t.Fatal(err)
			}
			for _, h := range hist {
				if h.Earlier || ids[h.JobID] != script {
					t.Errorf("%s: job %s (earlier %v) is %s's", filepath.Base(script), h.JobID, h.Earlier, filepath.Base(ids[h.JobID]))
					bad = true
				}
			}
			linked += len(hist)
		}
		if bad || linked == len(ids) {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("%d of %d jobs linked", linked, len(ids))
		}
	}
	st, err := history.OpenWith(t.Context(), db, history.Options{ReadOnly: true})
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	if n, err := st.PendingCount(t.Context(), time.Time{}); err != nil || n != 0 {
		t.Errorf("%d records still wait for their jobs, %v", n, err)
	}
}

func mustFingerprint(t *testing.T, path string) string {
	t.Helper()
	script, err := slurm.ReadScript(path)
	if err != nil {
		t.Fatal(err)
	}
	return script.Fingerprint()
}

// The filter's cost: sbatch --test-only of a script with advice, with an
// empty cli_filter.lua, with migadvisor's (its cache answers: the common
// case), the same with the cache full (filterCacheEntries answers, the
// script's the last the Lua reads), and with migadvisor's with its cache
// removed first (filter-advise answers, and caches), interleaved round by
// round. It logs min, median, p95 and max of each and of the pairs'
// differences (MIGADVISOR_TEST_CLIFILTER_PAIRS pairs, default 30; make
// bench-clifilter runs 200; docs/performance.md has the figures); then
// what a refresh of the user's index adds to a collect where the cache is
// full, made anew (wrapper.RefreshIndex against index.Refresh alone).
func TestSlurmCliFilterCost(t *testing.T) {
	requireCluster(t)
	isolate(t)
	work := t.TempDir()
	db := filepath.Join(work, "history.db")
	t.Setenv("MIGADVISOR_DB", db)
	os.Unsetenv("SLURM_JOB_ID")
	ours := installCliFilter(t, "")
	empty := cliFilter{conf: filterConf(t, "function slurm_cli_setup_defaults(o, e) return slurm.SUCCESS end\n"+
		"function slurm_cli_pre_submit(o, p) return slurm.SUCCESS end\n"+
		"function slurm_cli_post_submit(o, j, s) return slurm.SUCCESS end\n")}
	text := "#!/bin/bash\n#SBATCH -p gpu\n#SBATCH --gres=gpu:a100:1\n#SBATCH --time=5\npython train.py\n"
	job := writeScript(t, work, "job.sh", text)
	historyWithJob2(t, db, job) // and its advice index
	t.Chdir(work)
	cache := index.FilterCachePath(db)
	if out, _ := ours.sbatch(t, nil, "--test-only", job); !strings.Contains(out, "migadvisor: ") || readCache(t, cache) == "" {
		t.Fatalf("no advice to measure, or none cached: %q", out)
	}
	single := readCache(t, cache)
	for i := 1; i < cacheEntries; i++ { // copies of the script: the same advice
		copied := writeScript(t, work, fmt.Sprintf("job%02d.sh", i), text)
		if out, _ := ours.sbatch(t, nil, "--test-only", copied); !strings.Contains(out, "migadvisor: ") {
			t.Fatalf("no advice for copy %d: %q", i, out)
		}
	}
	full := readCache(t, cache)
	scripts := strings.SplitAfterN(single, "\n", 2)[1] // its entry, and the end
	if n := len(cacheEntry.FindAllString(full, -1)); n != cacheEntries || !strings.HasSuffix(full, scripts) {
		t.Fatalf("a full cache of %d entries, the script's not the last", n)
	}
	pairs := 30
	if n, err := strconv.Atoi(os.Getenv("MIGADVISOR_TEST_CLIFILTER_PAIRS")); err == nil && n > 0 {
		pairs = n
	}
	timed := func(c cliFilter, cached string) time.Duration {
		os.Remove(cache)
		if cached != "" {
			os.WriteFile(cache, []byte(cached), 0o600)
		}
		start := time.Now()
		if out, err := c.sbatch(t, nil, "--test-only", job); err != nil {
			t.Fatalf("sbatch: %v %s", err, out)
		}
		return time.Since(start)
	}
	// Each round the four in turn, in an order rotated round by round.
	var e, o, d, of, df, m, dm []time.Duration
	for i := range pairs {
		var a, b, bf, miss time.Duration
		runs := []func(){
			func() { a = timed(empty, "") },
			func() { b = timed(ours, single) },
			func() { bf = timed(ours, full) },
			func() { miss = timed(ours, "") },
		}
		for k := range runs {
			runs[(i+k)%len(runs)]()
		}
		e, o, d, of, df = append(e, a), append(o, b), append(d, b-a), append(of, bf), append(df, bf-a)
		m, dm = append(m, miss), append(dm, miss-a)
	}
	t.Logf("%d pairs of sbatch --test-only:\n  empty cli_filter.lua:       %s\n  migadvisor's (cache hit):   %s\n"+
		"  paired difference:          %s\n  hit, %d entries (%d bytes): %s\n  paired difference:          %s\n"+
		"  migadvisor's (cache miss):  %s\n  paired difference:          %s",
		pairs, durationSpread(e), durationSpread(o), durationSpread(d), cacheEntries, len(full), durationSpread(of), durationSpread(df),
		durationSpread(m), durationSpread(dm))
	for _, xs := range [][]time.Duration{d, df} {
		slices.Sort(xs)
		if xs[len(xs)/2] > 10*time.Millisecond { // under 1 ms measured by hand; CI's machines are shared
			t.Errorf("the filter adds %v p50", xs[len(xs)/2])
		}
	}
	refreshCost(t, db, full)
}

// refreshCost logs what making the filter's cache (full, as written)
// anew adds to a refresh of the user's index of the history at db, round
// by round against a refresh alone, and checks it answered every entry.
func refreshCost(t *testing.T, db, full string) {
	t.Helper()
	cache := index.FilterCachePath(db)
	var alone, remade, added []time.Duration
	for range 20 {
		os.WriteFile(cache, []byte(full), 0o600)
		stale := time.Now().Add(time.Second)
		os.Chtimes(db, stale, stale)
		start := time.Now()
		if wrote, err := wrapper.RefreshIndex(t.Context(), db); !wrote || err != nil {
			t.Fatalf("refresh: %v %v", wrote, err)
		}
		r := time.Since(start)
		if n := len(cacheEntry.FindAllString(readCache(t, cache), -1)); n != cacheEntries {
			t.Fatalf("the cache made anew holds %d entries, want %d", n, cacheEntries)
		}
		stale = stale.Add(time.Second)
		os.Chtimes(db, stale, stale)
		start = time.Now()
		if wrote, err := index.Refresh(t.Context(), db); !wrote || err != nil {
			t.Fatalf("refresh: %v %v", wrote, err)
		}
		a := time.Since(start)
		alone, remade, added = append(alone, a), append(remade, r), append(added, r-a)
	}
	t.Logf("refresh of the user's index, 20 rounds:\n  alone:                      %s\n  with the cache made anew:   %s\n"+
		"  paired difference:          %s", durationSpread(alone), durationSpread(remade), durationSpread(added))
}

// cacheEntries is the most answers the filter's cache keeps
// (advisor/app/wrapper's filterCacheEntries); cacheEntry is one's first line.
const cacheEntries = 32

var cacheEntry = regexp.MustCompile(`(?m)^entry \d+ \d+ \d+ \d+ \d+ \d+$`)

// durationSpread is min, median, p95 and max of xs.
func durationSpread(xs []time.Duration) string {
	s := slices.Clone(xs)
	slices.Sort(s)
	ms := func(x time.Duration) float64 { return float64(x.Microseconds()) / 1000 }
	return fmt.Sprintf("min %5.2f ms, median %5.2f ms, p95 %5.2f ms, max %5.2f ms",
		ms(s[0]), ms(s[len(s)/2]), ms(s[(len(s)*95-1)/100]), ms(s[len(s)-1]))
}

// readCache is the filter's cache, "" where there is none.
func readCache(t *testing.T, path string) string {
	t.Helper()
	data, err := os.ReadFile(path)
	if err != nil && !os.IsNotExist(err) {
		t.Fatal(err)
	}
	return string(data)
}

// The filter's cache: the submission filter-advise answered is answered
// the next time in sbatch's Lua alone (its binary gone, and no line about
// it), with the same advice, and the record of that job, which the Lua
// writes into the spool, is linked by collect to it exactly; a script
// edited in place and a --gres on the command line miss (the binary gone:
// its one line). The collect that rewrote the user's index answered the
// cache's submissions again: the next is answered from the cache, the
// binary still gone, with the advice of the new index, the one
// filter-advise gives now, and recorded.
func TestSlurmCliFilterCache(t *testing.T) {
	requireCluster(t)
	isolate(t)
	work := t.TempDir()
	db := filepath.Join(work, "history.db")
	t.Setenv("MIGADVISOR_DB", db)
	os.Unsetenv("SLURM_JOB_ID")
	filter := installCliFilter(t, "")
	name := fmt.Sprintf("cfcache%d", time.Now().UnixNano())
	text := uniqueRun(strings.Replace(wrappedScript, "--job-name=wrapped", "--job-name="+name, 1))
	job := writeScript(t, work, "cached.sh", text)
	historyWithJob2(t, db, job) // advice: job 2 completed on 1g.10gb
	t.Chdir(work)
	var ids []string
	t.Cleanup(func() { exec.Command("scancel", ids...).Run() })
	submit := func(args ...string) (id, said string) {
		t.Helper()
		out, err := filter.sbatch(t, nil, args...)
		m := submittedLine.FindStringSubmatchIndex(out)
		if err != nil || m == nil {
			t.Fatalf("sbatch %q: %v\n%s", args, err, out)
		}
		id = out[m[2]:m[3]]
		ids = append(ids, id)
		return id, out[:m[0]]
	}
	cache := index.FilterCachePath(db)

	missed, advice := submit(job)
	if !strings.HasPrefix(advice, "migadvisor: this script completed on 1g.10gb") || !strings.Contains(readCache(t, cache), advice) {
		t.Fatalf("advice %q, cached %q", advice, readCache(t, cache))
	}
	bin := filepath.Join(filter.prefix, "libexec/migadvisor/migadvisor-sbatch")
	if err := os.Rename(bin, bin+".away"); err != nil {
		t.Fatal(err)
	}
	defer os.Rename(bin+".away", bin)
	noAnswer := "migadvisor: no advice this time: " + bin + " is not installed\n"

	hit, said := submit(job)
	if said != advice {
		t.Errorf("from the cache %q, want %q", said, advice)
	}
	subs := spooled(t, db)
	files, _ := filepath.Glob(filepath.Join(db+".spool", "*-"+hit+".json"))
	if len(subs[hit]) != 1 || subs[hit][0].Source != job || len(subs[missed]) != 1 || len(files) != 1 ||
		!regexp.MustCompile(`^\d{10}000000000-`+hit+`\.json$`).MatchString(filepath.Base(files[0])) {
		t.Fatalf("records of jobs %s and %s: %s, files %v", missed, hit, dump(subs), files)
	}

	if err := os.WriteFile(job, []byte(strings.Replace(text, "sleep 2", "sleep 3", 1)), 0o755); err != nil {
		t.Fatal(err)
	}
	if _, said := submit(job); said != noAnswer {
		t.Errorf("edited in place: %q", said)
	}
	if err := os.WriteFile(job, []byte(text), 0o755); err != nil {
		t.Fatal(err)
	}
	if _, said := submit("--gres=gpu:a100_10g:1", job); said != noAnswer {
		t.Errorf("--gres on the command line: %q", said)
	}
	if _, said := submit(job); said != advice {
		t.Errorf("as before, from the cache: %q", said)
	}

	mustRun(t, "wait", hit, "--timeout", "1m")
	mustRun(t, "collect")
	var hist []joblist.JobEntry
	if err := json.Unmarshal([]byte(mustRun(t, "history", job, "--json", "--limit", "0")), &hist); err != nil {
		t.Fatal(err)
	}
	linked := map[string]bool{}
	for _, h := range hist {
		linked[h.JobID] = true
	}
	if !linked[hit] || !linked[missed] {
		t.Errorf("history of %s: %s, want jobs %s (cached) and %s", job, dump(hist), hit, missed)
	}
	remade, said := submit(job)
	if said == noAnswer || said == advice || !strings.HasPrefix(said, "migadvisor: this script ") {
		t.Errorf("after the index was refreshed: %q (before it: %q)", said, advice)
	}
	if subs := waitSpooled(t, db, 1); len(subs[remade]) != 1 || subs[remade][0].Source != job {
		t.Errorf("the record of job %s: %s", remade, dump(subs))
	}
	if err := os.Rename(bin+".away", bin); err != nil {
		t.Fatal(err)
	}
	os.Remove(cache)
	if _, asked := submit(job); asked != said {
		t.Errorf("filter-advise answers %q, the cache made anew %q", asked, said)
	}
}

// A login node with both the sbatch shim and the cli_filter advises once:
// the filter stays silent for Slurm's sbatch that the shim runs, in its
// own place beside the wrapper, or, applying the advice, the wrapper runs.
func TestSlurmCliFilterBesideShim(t *testing.T) {
	requireCluster(t)
	isolate(t)
	work := t.TempDir()
	db := filepath.Join(work, "history.db")
	t.Setenv("MIGADVISOR_DB", db)
	os.Unsetenv("SLURM_JOB_ID")
	filter := installCliFilter(t, "")
	job := writeScript(t, work, "job.sh", "#!/bin/bash\n#SBATCH -p gpu\n#SBATCH --gres=gpu:a100:1\n#SBATCH --time=5\npython train.py\n")
	historyWithJob2(t, db, job)
	t.Chdir(work)
	lines := func(out string) []string { return regexp.MustCompile(`(?m)^migadvisor: .*$`).FindAllString(out, -1) }
	if out, err := filter.sbatch(t, nil, "--test-only", job); err != nil || len(lines(out)) != 1 || !strings.Contains(out, "in the environment to have it changed") {
		t.Fatalf("the filter alone: %v %q", err, out)
	}
	cached := readCache(t, index.FilterCachePath(db)) // the filter's answer, alone
	shim := filepath.Join(filter.prefix, "libexec/migadvisor/sbatch")
	for _, c := range []struct {
		env  []string
		want string
	}{
		{nil, "Next time, submit with --gres=gpu:a100_10g:1, or with --mig-apply"},
		{[]string{"MIGADVISOR_APPLY=1"}, "submitting on 1g.10gb"},
	} {
		cmd := exec.Command(shim, "--test-only", job)
		cmd.Env = append(os.Environ(), append(c.env, "SLURM_CONF="+filter.conf)...)
		out, err := cmd.CombinedOutput()
		if got := lines(string(out)); err != nil || strings.Count(string(out), "migadvisor: ") != len(got) ||
			!strings.Contains(string(out), c.want) || strings.Contains(string(out), "in the environment to have it changed") ||
			len(got) != map[bool]int{false: 1, true: 2}[c.env != nil] {
			t.Errorf("the shim %s: %v\n%s", c.env, err, out)
		}
		// A filter that asked would have cached its answer.
		if now := readCache(t, index.FilterCachePath(db)); now != cached {
			t.Errorf("the shim %s: the filter answered too: cache %q", c.env, now)
		}
	}
}
