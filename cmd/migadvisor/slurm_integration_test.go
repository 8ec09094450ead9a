//go:build slurm

// Integration tests against a real Slurm: run by `make test` after
// scripts/dev-cluster.sh up (or `make test-slurm`). They submit real jobs to
// the dev cluster and read real sacct.
package main

import (
	"encoding/json"
	"fmt"
	"math"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/migadvisor/migadvisor/advisor/app/collect"
	"github.com/migadvisor/migadvisor/advisor/app/joblist"
	"github.com/migadvisor/migadvisor/advisor/app/report"
	"github.com/migadvisor/migadvisor/bench"
)

// outcomeScript behaves differently on each profile of a sweep: its job name
// ends with the profile.
const outcomeScript = `#!/bin/bash
#SBATCH --job-name=outcomes
#SBATCH --partition=gpu
#SBATCH --gres=gpu:a100_10g:1
#SBATCH --mem=200M
#SBATCH --time=00:05:00
#SBATCH --output=%x.%j.out
echo "job $SLURM_JOB_ID on GPU $CUDA_VISIBLE_DEVICES"
case "$SLURM_JOB_NAME" in
*-1g.10gb)
	sleep 6
	echo "torch.OutOfMemoryError: CUDA out of memory. Tried to allocate 2.00 GiB. GPU 0 has a total capacity of 9.50 GiB of which 1.20 GiB is free. Including non-PyTorch memory, this process has 8.30 GiB memory in use. Of the allocated memory 7.90 GiB is allocated by PyTorch, and 120.00 MiB is reserved by PyTorch but unallocated." >&2
	exit 1 ;;
*-2g.20gb)
	sleep 6
	exit 3 ;;
*-3g.40gb)
	# Grow past --mem over a few seconds, so the cgroup (or the poller) sees it.
	perl -e 'my @a; for (1..60) { push @a, "x" x (8*1024*1024); select(undef, undef, undef, 0.2) }'
	echo "still here" ;;
*)
	perl -e '$x = "a" x (80*1024*1024); sleep 6'
	echo "MIGADVISOR_WORK 1234 samples"
	echo "MIGADVISOR_METRIC accuracy 97.5" ;;
esac
`

const timeoutScript = `#!/bin/bash
#SBATCH --job-name=slow
#SBATCH --gres=gpu:a100_10g:1
#SBATCH --mem=64M
#SBATCH --time=1
sleep 300
`

func requireCluster(t *testing.T) {
	t.Helper()
	out, err := exec.Command("scontrol", "ping").CombinedOutput()
	if err != nil || !strings.Contains(string(out), "UP") {
		t.Fatalf("no Slurm controller (%v: %s); start it with: sudo scripts/dev-cluster.sh up", err, out)
	}
}

// chdir moves the test into dir until it ends (testing.T.Chdir needs Go 1.24).

func cgroupMemory(t *testing.T) bool {
	out, _ := exec.Command("scontrol", "show", "config").Output()
	return strings.Contains(string(out), "task/cgroup")
}

// slurmWorkDir is a real-Slurm test's working directory, made the current
// one (sbatch runs from it), with a fresh history in it and the lean
// monitor for the jobs' variants.
func slurmWorkDir(t *testing.T) string {
	t.Helper()
	requireCluster(t)
	isolate(t)
	work := t.TempDir()
	t.Setenv("MIGADVISOR_MONITOR_BIN", monitorBinary(t))
	t.Setenv("MIGADVISOR_DB", filepath.Join(work, "history.db"))
	t.Chdir(work)
	return work
}

func writeScript(t *testing.T, dir, name, text string) string {
	t.Helper()
	p := filepath.Join(dir, name)
	if err := os.WriteFile(p, []byte(text), 0o755); err != nil {
		t.Fatal(err)
	}
	return p
}

func mustRun(t *testing.T, args ...string) string {
	t.Helper()
	out, errOut, code := migadvisor(t, args...)
	if code != 0 {
		t.Fatalf("migadvisor %s: exit %d\n%s%s", strings.Join(args, " "), code, out, errOut)
	}
	return out
}

// monitorBinary is the migadvisor the variants run as their monitor: the
// test binary cannot be, so one is built (or MIGADVISOR_MONITOR_BIN named).
func monitorBinary(t *testing.T) string {
	t.Helper()
	if bin := os.Getenv("MIGADVISOR_MONITOR_BIN"); bin != "" {
		return bin
	}
	return migadvisorBinary(t)
}

func TestSlurmSweepSubmitWaitCollect(t *testing.T) {
	work := slurmWorkDir(t)
	job := writeScript(t, work, "job.sh", outcomeScript)
	slow := writeScript(t, work, "slow.sh", timeoutScript)

	// The time-limit job first: it takes 65-95 s, the others run meanwhile.
	mustRun(t, "sweep", slow, "--out", "slow", "--profiles", "1g.10gb", "--submit")
	out := mustRun(t, "sweep", job, "--out", "sweep", "--submit", "--json")
	var sw struct{ Variants map[string]bench.Variant }
	if err := json.Unmarshal([]byte(out), &sw); err != nil {
		t.Fatal(err)
	}
	ids := map[string]string{}
	for p, v := range sw.Variants {
		if v.JobID == "" || v.Cluster != "migdev" {
			t.Fatalf("variant %s: job %q cluster %q", p, v.JobID, v.Cluster)
		}
		ids[p] = v.JobID
	}
	recorded, err := bench.ReadSweep(filepath.Join(work, "sweep"))
	if err != nil || recorded.Variants["full"].JobID != ids["full"] {
		t.Fatalf("sweep.json does not hold the job ids: %v %+v", err, recorded)
	}

	var status []jobStatus
	if err := json.Unmarshal([]byte(mustRun(t, "status", "--json")), &status); err != nil || len(status) != 5 {
		t.Fatalf("status: %v %+v", err, status)
	}

	mustRun(t, "wait", "--sweep", "sweep", "--timeout", "3m")
	mustRun(t, "wait", "--sweep", "slow", "--timeout", "3m")
	collected := mustRun(t, "collect")
	t.Logf("collect:\n%s", collected)

	var hist []joblist.JobEntry
	if err := json.Unmarshal([]byte(mustRun(t, "history", "--json")), &hist); err != nil {
		t.Fatal(err)
	}
	byProfile := map[string]joblist.JobEntry{}
	for _, h := range hist {
		byProfile[strings.TrimPrefix(h.Name, "outcomes-")] = h
	}
	if len(hist) != 5 {
		t.Fatalf("history has %d jobs, want 5: %+v", len(hist), hist)
	}
	full := byProfile["full"]
	checkJob(t, full, "full", "COMPLETED", 0, 0)
	if full.OOM != nil || *full.MaxRSSMiB < 70 || *full.Work != 1234 || *full.WorkUnit != "samples" || full.Metrics["accuracy"] != 97.5 ||
		full.GPUMemPeakMiB != nil || *full.ElapsedS < 6 || *full.CPUs != 1 || *full.ReqMemMiB != 200 {
		t.Errorf("full: %s", dump(full))
	}
	// SU: (max(1 CPU, 200M/4G) + 16 × 80/80) × elapsed hours.
	if want := 17 * float64(*full.ElapsedS) / 3600; math.Abs(*full.SU-want) > 1e-4 {
		t.Errorf("full SU %v, want %v", *full.SU, want)
	}
	small := byProfile["1g.10gb"]
	checkJob(t, small, "1g.10gb", "FAILED", 1, 0)
	if small.OOM == nil || *small.OOM != "gpu" || small.GPUNeedMiB == nil || math.Abs(*small.GPUNeedMiB-10.3*1024) > 1 {
		t.Errorf("1g.10gb (GPU OOM): %s", dump(small))
	}
	checkJob(t, byProfile["2g.20gb"], "2g.20gb", "FAILED", 3, 0)
	if byProfile["2g.20gb"].OOM != nil {
		t.Errorf("exit 3 read as an OOM: %s", dump(byProfile["2g.20gb"]))
	}
	host := byProfile["3g.40gb"]
	if host.OOM == nil || *host.OOM != "host" {
		t.Errorf("3g.40gb (over --mem): %s", dump(host))
	}
	if cgroupMemory(t) {
		checkJob(t, host, "3g.40gb", "OUT_OF_MEMORY", 0, 125)
	}
	slowJob := byProfile["slow-1g.10gb"]
	checkJob(t, slowJob, "1g.10gb", "TIMEOUT", 0, 0)
	if !slowJob.TimeLimitHit || *slowJob.ElapsedS < 60 || *slowJob.TimeLimitMin != 1 {
		t.Errorf("timeout: %s", dump(slowJob))
	}

	// Every variant ran under the monitor: no NVML here, so one warning line
	// in its output, a summary beside it, and the job's own exit status.
	for profile, want := range map[string]int{"full": 0, "1g.10gb": 1, "2g.20gb": 3} {
		h := byProfile[profile]
		data, _ := os.ReadFile(*h.Output)
		if !strings.Contains(string(data), "migadvisor monitor: no GPU memory measured: NVML unavailable") {
			t.Errorf("%s did not run under the monitor:\n%s", profile, data)
		}
		var sum struct {
			ExitStatus int      `json:"exit_status"`
			Command    []string `json:"command"`
		}
		raw, err := os.ReadFile(filepath.Join(filepath.Dir(*h.Output), "migadvisor-"+h.JobKey+".json"))
		if err == nil {
			err = json.Unmarshal(raw, &sum)
		}
		if err != nil || sum.ExitStatus != want || len(sum.Command) != 2 || sum.Command[0] != "/bin/bash" || !strings.HasSuffix(sum.Command[1], "slurm_script") {
			t.Errorf("%s: monitor summary %v %+v, want exit status %d", profile, err, sum, want)
		}
	}

	// The advice from these real runs: the GPU OOM rules 1g.10gb out, the
	// host OOM on 3g.40gb asks for more --mem, full was measured.
	var rec struct {
		Recommended *string
		Mem         string
		Profiles    []struct {
			Profile       string   `json:"profile"`
			OOMRisk       string   `json:"oom_risk"`
			OOMObserved   bool     `json:"oom_observed"`
			RuntimeSource string   `json:"runtime_source"`
			RuntimeS      *float64 `json:"runtime_s"`
		}
	}
	recOut := mustRun(t, "recommend", job, "--json")
	if err := json.Unmarshal([]byte(recOut), &rec); err != nil {
		t.Fatal(err)
	}
	if rec.Recommended == nil || *rec.Recommended == "1g.10gb" || rec.Mem == "" || len(rec.Profiles) != 4 {
		t.Errorf("recommend: %s", recOut)
	}
	if p := rec.Profiles[0]; p.Profile != "1g.10gb" || p.OOMRisk != "high" || !p.OOMObserved {
		t.Errorf("1g.10gb: %+v", p)
	}
	if p := rec.Profiles[3]; p.Profile != "full" || p.RuntimeSource != "measured" || *p.RuntimeS != float64(*full.ElapsedS) {
		t.Errorf("full: %+v", p)
	}

	// Collecting the same jobs again changes nothing.
	mustRun(t, "collect", "--since", "1d")
	var rep collect.Summary
	if err := json.Unmarshal([]byte(mustRun(t, "collect", "--since", "1d", "--json")), &rep); err != nil ||
		rep.New != 0 || rep.Updated != 0 || rep.Unchanged < 5 || rep.Outputs.Scanned != 0 || len(rep.Skipped) != 0 {
		t.Errorf("collect again: %v %+v", err, rep)
	}
}

func checkJob(t *testing.T, h joblist.JobEntry, profile, state string, code, signal int64) {
	t.Helper()
	if h.Profile == nil || *h.Profile != profile || h.State != state || h.ExitCode == nil || *h.ExitCode != code || *h.ExitSignal != signal ||
		h.Cluster != "migdev" || h.Placeholder || h.Output == nil {
		t.Errorf("want %s %s %d:%d; got %s", profile, state, code, signal, dump(h))
	}
}

func dump(v any) string {
	b, _ := json.Marshal(v)
	return string(b)
}

// A job submitted outside migadvisor, linked with track, and a short job whose
// first accounting record is slurmdbd's placeholder.
func TestSlurmTrackShortJob(t *testing.T) {
	requireCluster(t)
	isolate(t)
	work := t.TempDir()
	t.Setenv("MIGADVISOR_DB", filepath.Join(work, "history.db"))
	t.Chdir(work)
	script := writeScript(t, work, "quick.sh", "#!/bin/bash\n#SBATCH --gres=gpu:a100_20g:1\n#SBATCH --mem=64M -t 2\necho MIGADVISOR_WORK 7 steps\n")
	out, err := exec.Command("sbatch", "--parsable", script).Output()
	if err != nil {
		t.Fatal(err)
	}
	id := strings.TrimSpace(string(out))
	mustRun(t, "track", "--workload", "quick", script, id)
	start := time.Now()
	mustRun(t, "wait", id, "--timeout", "1m")
	var hist []joblist.JobEntry
	if err := json.Unmarshal([]byte(mustRun(t, "history", script, "--json")), &hist); err != nil || len(hist) != 1 {
		t.Fatalf("history: %v %s", err, dump(hist))
	}
	h := hist[0]
	checkJob(t, h, "2g.20gb", "COMPLETED", 0, 0)
	if h.Name != "quick.sh" || *h.Work != 7 || *h.Workload != "quick" || h.RequestedProfile != nil {
		t.Errorf("tracked job (after %v): %s", time.Since(start), dump(h))
	}
}

// ladderScript runs out of GPU memory on 1g.10gb and completes elsewhere.
const ladderScript = `#!/bin/bash
#SBATCH --job-name=ladder
#SBATCH --gres=gpu:a100_40g:1
#SBATCH --mem=64M
#SBATCH --time=00:02:00
case "$SLURM_JOB_NAME" in
*-1g.10gb)
	echo "torch.OutOfMemoryError: CUDA out of memory. Tried to allocate 2.00 GiB." >&2
	exit 1 ;;
esac
sleep 2
echo "MIGADVISOR_WORK 100 steps"
`

// recommend --probe --ladder: 1g.10gb runs out of memory, 2g.20gb completes,
// and the ladder stops there; the advice is measured on 2g.20gb.
func TestSlurmRecommendProbeLadder(t *testing.T) {
	work := slurmWorkDir(t)
	job := writeScript(t, work, "ladder.sh", ladderScript)
	out := mustRun(t, "recommend", "--probe", "--ladder", "--out", "probe", "--timeout", "3m", "--json", job)
	var rec struct {
		Recommended *string
		Basis       string
	}
	if err := json.Unmarshal([]byte(out), &rec); err != nil {
		t.Fatalf("%v: %s", err, out)
	}
	if rec.Recommended == nil || *rec.Recommended != "2g.20gb" || rec.Basis != "measured" {
		t.Errorf("recommend: %s", out)
	}
	rungs, _ := filepath.Glob(filepath.Join(work, "probe", "*", bench.SweepFileName))
	if len(rungs) != 2 {
		t.Errorf("the ladder ran %d rungs, want 2 (1g.10gb, 2g.20gb): %v", len(rungs), rungs)
	}
	var hist []joblist.JobEntry
	if err := json.Unmarshal([]byte(mustRun(t, "history", job, "--json")), &hist); err != nil || len(hist) != 2 {
		t.Fatalf("history: %v %s", err, dump(hist))
	}
	// Turnaround asks the real scheduler (sbatch --test-only) when each variant would start.
	out = mustRun(t, "recommend", "--objective", "turnaround", "--json", job)
	var turn struct {
		Notes    []string
		Profiles []struct {
			Wait *float64 `json:"queue_wait_s"`
		}
	}
	if err := json.Unmarshal([]byte(out), &turn); err != nil || !strings.Contains(strings.Join(turn.Notes, "\n"), "sbatch --test-only estimates") {
		t.Errorf("turnaround: %v %s", err, out)
	}
	for _, p := range turn.Profiles {
		if p.Wait == nil {
			t.Errorf("a profile without a start estimate: %s", out)
		}
	}
}

// wrappedScript asks for a whole A100 and reports an allocated peak of
// 1.5 GiB, which any slice holds.
const wrappedScript = `#!/bin/bash
#SBATCH --job-name=wrapped
#SBATCH --partition=gpu
#SBATCH --gres=gpu:a100:1
#SBATCH --mem=64M
#SBATCH --time=00:02:00
#SBATCH --output=%x.%j.out
sleep 2
echo "MIGADVISOR_METRIC peak_allocated_mib 1536"
echo "MIGADVISOR_WORK 100 steps"
`

// A site-wide history: admins collect every user's jobs, and jobs that were
// never submitted through migadvisor are linked to their scripts from
// slurmdbd's copies (sacct --batch-script), so a user's wrapper, reading the
// site's history beside their own empty one, is advised from them.
func TestSlurmSiteHistoryFromAllUsers(t *testing.T) {
	requireCluster(t)
	isolate(t)
	work := t.TempDir()
	t.Chdir(work)
	siteDB := filepath.Join(work, "site.db")
	job := writeScript(t, work, "wrapped.sh", uniqueRun(wrappedScript))
	start := time.Now().Add(-time.Minute).Format("2006-01-02T15:04:05")
	out, err := exec.Command("sbatch", "--parsable", job).Output() // Slurm's own sbatch: no record anywhere
	if err != nil {
		t.Fatal(err)
	}
	id := strings.TrimSpace(string(out))
	mustRun(t, "wait", id, "--timeout", "1m")
	t.Setenv("MIGADVISOR_DB", siteDB)
	var hist []joblist.JobEntry
	for range 20 { // slurmdbd may still hold a placeholder for a short job
		mustRun(t, "collect", "--all-users", "--since", start, "--outputs", work)
		var all []joblist.JobEntry
		if err := json.Unmarshal([]byte(mustRun(t, "history", job, "--json")), &all); err != nil {
			t.Fatal(err)
		}
		// Earlier tests' jobs of the same name and resources are earlier versions of the script.
		hist = slices.DeleteFunc(all, func(h joblist.JobEntry) bool { return h.Earlier })
		if len(hist) == 1 && hist[0].State == "COMPLETED" {
			break
		}
		time.Sleep(time.Second)
	}
	if len(hist) != 1 || hist[0].JobID != id {
		t.Fatalf("job %s is not linked to its script in the site's history: %s", id, dump(hist))
	}
	// Published for the login nodes: the snapshot and the advice index.
	shared := filepath.Join(work, "shared")
	os.Mkdir(shared, 0o755)
	mustRun(t, "publish", shared)
	site := filepath.Join(work, "site.toml")
	wulver, err := os.ReadFile(filepath.Join(packageDir, "../../catalog/sites/wulver.toml"))
	if err != nil {
		t.Fatal(err)
	}
	os.WriteFile(site, append(wulver, "\n[history]\nsite_db = \""+filepath.Join(shared, "history.db")+"\"\n"...), 0o644)
	t.Setenv("MIGADVISOR_SITE", site)
	t.Setenv("MIGADVISOR_DB", filepath.Join(work, "mine.db"))
	var errOut strings.Builder
	cmd := exec.Command(sbatchBinary(t), "sbatch", "--test-only", job) // as the shim runs it
	cmd.Stderr = &errOut
	cmd.Run()
	if !strings.Contains(errOut.String(), "migadvisor: this script allocated at most 1.5 GiB of GPU memory in 1 run on a full A100; ") {
		t.Errorf("no advice from the site's history: %q", errOut.String())
	}
}

// The reference suite end to end: 'bench run' writes the MNIST workload,
// sweeps it over two profiles, submits real jobs that train (quick, on
// synthetic data, on the dev cluster's CPU with Debian's PyTorch), waits and
// collects; 'docs' then writes the Wulver table, chart and page from them.
func TestSlurmBenchRunThenDocs(t *testing.T) {
	work := slurmWorkDir(t)
	const tag = "pytorch_mnist_simplecnn@synthetic@quick"
	out := mustRun(t, "benchmark", "run", "--workloads", "pytorch_mnist_simplecnn", "--profiles", "1g.10gb,full", "--synthetic", "--quick",
		"--python", "/usr/bin/python3", "--out", "bench", "--poll", "2s", "--timeout", "5m", "--json")
	var jobs []bench.SuiteJob
	if err := json.Unmarshal([]byte(out), &jobs); err != nil || len(jobs) != 2 {
		t.Fatalf("benchmark run: %v\n%s", err, out)
	}
	for _, j := range jobs {
		if j.Workload != tag || j.State != "COMPLETED" {
			b, _ := os.ReadFile(filepath.Join(work, "bench", "pytorch_mnist_simplecnn", fmt.Sprintf("pytorch_mnist_simplecnn-%s.%s.out", j.Profile, j.JobID)))
			t.Fatalf("job %+v\n%s", j, b)
		}
	}
	out = mustRun(t, "docs", "--out", "docs", "--json")
	var docs []report.WrittenSummary
	if err := json.Unmarshal([]byte(out), &docs); err != nil || len(docs) != 1 || docs[0].Workload != tag || docs[0].Table != "pytorch" ||
		strings.Join(docs[0].Profiles, ",") != "1g.10gb,full" || len(docs[0].Files) != 3 {
		t.Fatalf("docs: %v\n%s", err, out)
	}
	csv, err := os.ReadFile(filepath.Join(work, "docs", tag+".csv"))
	if err != nil {
		t.Fatal(err)
	}
	// Every cell filled from the real jobs: training time, accuracy and SU
	// from their output; memory is empty (no GPU, so no allocated peak).
	row := regexp.MustCompile(`(?m)^A100_(80|10)GB,(\d+\.\d\d),(\d+\.\d\d),,(17|3),(\d\.\d{3}),(\d\.\d{5})$`)
	if got := row.FindAllString(string(csv), -1); len(got) != 2 ||
		!strings.HasPrefix(string(csv), "MIG Profile,Training Time (s),Test Accuracy (%),Memory Used (GB),SU Rate (/hr),SU,Cost/Performance\nA100_80GB,") {
		t.Errorf("the CSV:\n%s", csv)
	}
	page, _ := os.ReadFile(filepath.Join(work, "docs", tag+".md"))
	for _, want := range []string{"# MNIST Simple CNN (synthetic, quick)", `pd.read_csv("docs/` + tag + `.csv")`,
		"**Smallest profile that fits: 1g.10gb**", "Software: device cpu; loader DataLoader, 1 worker; python 3.", "torch 1.",
		"The runs reported running on cpu, not on the A100-SXM4-80GB: their times and memory are not that GPU's."} {
		if !strings.Contains(string(page), want) {
			t.Errorf("the page lacks %q:\n%s", want, page)
		}
	}
	if svg, err := os.ReadFile(filepath.Join(work, "docs", tag+".svg")); err != nil || !strings.Contains(string(svg), "<svg") {
		t.Errorf("the chart: %v", err)
	}
}

// An emulation job on the real Slurm, the plain way: sweep --emulate writes
// and submits one whole-GPU job that runs the script's command once per
// profile under migadvisor emulate (a stand-in MPS control: the dev
// cluster's GPUs are fake), and wait and recommend judge each profile by
// its emulated run.
func TestSlurmEmulateInAJob(t *testing.T) {
	fake, err := filepath.Abs("../../bench/emulate/testdata/fake-mps-control") // before slurmWorkDir moves away
	if err != nil {
		t.Fatal(err)
	}
	work := slurmWorkDir(t)
	t.Setenv("MIGADVISOR_MPS_CONTROL", fake) // sbatch passes the environment on
	script := writeScript(t, work, "emu.sh", "#!/bin/bash\n#SBATCH --gres=gpu:a100:1\n#SBATCH --mem=64M -t 1\n"+
		`if [ "$MIGADVISOR_EMULATED_PROFILE" = 1g.10gb ]; then echo "torch.OutOfMemoryError: CUDA out of memory. Tried to allocate 2.00 GiB." >&2; exit 1; fi`+
		"\necho MIGADVISOR_WORK 7 steps\n")
	out := mustRun(t, "sweep", script, "--out", "emu", "--emulate", "--profiles", "1g.10gb,2g.20gb,full", "--submit", "--json")
	var sw struct{ Variants map[string]bench.Variant }
	if err := json.Unmarshal([]byte(out), &sw); err != nil || len(sw.Variants) != 1 || sw.Variants["full"].JobID == "" {
		t.Fatalf("%v: %s", err, out)
	}
	id := sw.Variants["full"].JobID
	mustRun(t, "wait", "--sweep", "emu", "--timeout", "1m")
	if _, err := os.Stat(filepath.Join(work, "migadvisor-emulate-"+id, "emulated.json")); err != nil {
		t.Fatalf("the job left no emulation: %v", err)
	}
	text := mustRun(t, "recommend", script)
	for _, want := range []string{"1g.10gb  1     1 OOM (emulated)", "2g.20gb  1     1 ok (emulated)", "full     1     1 ok (emulated)",
		"no runtime is known on the site's GPU: the runs were emulated on a whole GPU"} {
		if !strings.Contains(text, want) {
			t.Errorf("recommend lacks %q:\n%s", want, text)
		}
	}
	// recommend --probe --emulate does it all in one command.
	again := writeScript(t, work, "emu2.sh", strings.Replace(mustRead(t, script), "echo MIGADVISOR_WORK 7", "echo MIGADVISOR_WORK 8", 1))
	text = mustRun(t, "recommend", "--probe", "--emulate", "--profiles", "1g.10gb,2g.20gb", again)
	if !strings.Contains(text, "1g.10gb  1     1 OOM (emulated)") || !strings.Contains(text, "2g.20gb  1     1 ok (emulated)") {
		t.Errorf("recommend --probe --emulate:\n%s", text)
	}
}

func mustRead(t *testing.T, path string) string {
	t.Helper()
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	return string(data)
}
