package slurm

import (
	"errors"
	"io"
	"math"
	"os"
	"reflect"
	"strings"
	"testing"
	"time"
)

func readAllJobs(t *testing.T, input string) ([]*AcctJob, *SacctReader) {
	t.Helper()
	r, err := NewSacctReader(strings.NewReader(input))
	if err != nil {
		t.Fatalf("NewSacctReader: %v", err)
	}
	var jobs []*AcctJob
	for {
		j, err := r.Next()
		if errors.Is(err, io.EOF) {
			return jobs, r
		}
		if err != nil {
			t.Fatalf("Next: %v", err)
		}
		jobs = append(jobs, j)
	}
}

func byKey(jobs []*AcctJob) map[string]*AcctJob {
	m := map[string]*AcctJob{}
	for _, j := range jobs {
		m[j.Key] = j
	}
	return m
}

func fixture(t *testing.T, name string) string {
	t.Helper()
	b, err := os.ReadFile("../testdata/sacct/" + name)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

func near(a, b float64) bool { return math.Abs(a-b) < 0.01 }

// The dump of the dev cluster's outcome jobs (scripts in testdata/joboutput/devcluster).
func TestSacctDevClusterOutcomes(t *testing.T) {
	jobs, r := readAllJobs(t, fixture(t, "devcluster-22.05.psv"))
	if len(r.Skipped) != 0 {
		t.Fatalf("skipped %v", r.Skipped)
	}
	m := byKey(jobs)
	if len(m) != len(jobs) {
		t.Fatalf("a job came out twice: %d jobs, %d keys", len(jobs), len(m))
	}
	type want struct {
		id, state, by, gpu, name string
		code, sig                int
		elapsed                  time.Duration
		rss, reqMem              float64
		cpus, steps              int
	}
	cases := map[string]want{
		"1":  {id: "1", state: "OUT_OF_MEMORY", gpu: "a100_10g", name: "j.sh", code: 0, sig: 125, elapsed: 2 * time.Second, rss: 221652.0 / 1024, reqMem: 300, cpus: 1, steps: 2},
		"2":  {id: "2", state: "COMPLETED", gpu: "a100_10g", name: "fx-complete", code: 0, sig: 0, elapsed: 7 * time.Second, rss: 205548.0 / 1024, reqMem: 300, cpus: 1, steps: 2},
		"3":  {id: "3", state: "FAILED", gpu: "a100_20g", name: "fx-fail3", code: 3, sig: 0, elapsed: 7 * time.Second, rss: 392.0 / 1024, reqMem: 64, cpus: 1, steps: 2},
		"6":  {id: "6", state: "TIMEOUT", gpu: "a100", name: "fx-timeout", code: 0, sig: 0, elapsed: 79 * time.Second, rss: 388.0 / 1024, reqMem: 64, cpus: 1, steps: 2},
		"7":  {id: "7", state: "CANCELLED", by: "0", gpu: "a100_20g", name: "fx-cancel", code: 0, sig: 0, elapsed: 10 * time.Second, rss: 392.0 / 1024, reqMem: 64, cpus: 1, steps: 2},
		"9":  {id: "9+0", state: "CANCELLED", by: "0", name: "fx-het", elapsed: 0, rss: Unknown, reqMem: 64, cpus: 1},
		"10": {id: "9+1", state: "CANCELLED", by: "0", name: "fx-het", elapsed: 0, rss: Unknown, reqMem: 64, cpus: 2},
		"11": {id: "11", state: "COMPLETED", name: "fx-steps", elapsed: 8 * time.Second, rss: 307668.0 / 1024, reqMem: 600, cpus: 2, steps: 4},
		"12": {id: "12", state: "CANCELLED", by: "0", gpu: "a100", name: "fx-pending", rss: Unknown, reqMem: 64, cpus: 1},
		"13": {id: "8_1", state: "COMPLETED", name: "fx array|odd", elapsed: 6 * time.Second, rss: 388.0 / 1024, reqMem: 64, cpus: 1, steps: 2},
		"8":  {id: "8_3", state: "COMPLETED", name: "fx array|odd", elapsed: 6 * time.Second, rss: 396.0 / 1024, reqMem: 64, cpus: 1, steps: 2},
	}
	for key, w := range cases {
		j := m[key]
		if j == nil {
			t.Errorf("job %s missing", key)
			continue
		}
		if j.ID != w.id || j.State != w.state || j.CancelledBy != w.by || j.GPUType != w.gpu || j.Name != w.name {
			t.Errorf("job %s: id %q state %q by %q gpu %q name %q; want %q %q %q %q %q",
				key, j.ID, j.State, j.CancelledBy, j.GPUType, j.Name, w.id, w.state, w.by, w.gpu, w.name)
		}
		if w.state != "CANCELLED" || w.steps > 0 {
			if j.ExitCode != w.code || j.ExitSignal != w.sig {
				t.Errorf("job %s: exit %d:%d, want %d:%d", key, j.ExitCode, j.ExitSignal, w.code, w.sig)
			}
		}
		if j.Elapsed != w.elapsed || !near(j.MaxRSSMiB, w.rss) || !near(j.ReqMemMiB, w.reqMem) || j.CPUs != w.cpus || j.Steps != w.steps {
			t.Errorf("job %s: elapsed %v rss %.3f reqmem %.1f cpus %d steps %d; want %v %.3f %.1f %d %d",
				key, j.Elapsed, j.MaxRSSMiB, j.ReqMemMiB, j.CPUs, j.Steps, w.elapsed, w.rss, w.reqMem, w.cpus, w.steps)
		}
		if !j.Terminal() || j.Stub() || j.Cluster != "migdev" {
			t.Errorf("job %s: terminal %v stub %v cluster %q", key, j.Terminal(), j.Stub(), j.Cluster)
		}
	}
	if j := m["13"]; j.ArrayJob != "8" || m["10"].ArrayJob != "9" {
		t.Errorf("array job of 8_1 = %q, of 9+1 = %q", j.ArrayJob, m["10"].ArrayJob)
	}
	if j := m["12"]; !j.Start.IsZero() || j.NodeList != "None assigned" || j.GPUCount != 1 {
		t.Errorf("pending-cancelled job: start %v nodes %q gpus %d (its GPU comes from ReqTRES)", j.Start, j.NodeList, j.GPUCount)
	}
	if j := m["6"]; j.TimeLimit.Duration != time.Minute || j.End.Sub(j.Start) != 79*time.Second {
		t.Errorf("timeout job: limit %v, start %v end %v", j.TimeLimit, j.Start, j.End)
	}
}

// The same jobs read alike with migadvisor's own delimiter.
func TestSacctUnitSeparatorMatchesPipe(t *testing.T) {
	pipe, _ := readAllJobs(t, fixture(t, "devcluster-22.05.psv"))
	us, r := readAllJobs(t, fixture(t, "devcluster-22.05-unitsep.psv"))
	if len(r.Skipped) != 0 || len(us) != len(pipe) {
		t.Fatalf("%d jobs (%v skipped), want %d", len(us), r.Skipped, len(pipe))
	}
	for i := range pipe {
		if !reflect.DeepEqual(pipe[i], us[i]) {
			t.Errorf("job %s differs:\n|:  %+v\nUS: %+v", pipe[i].Key, pipe[i], us[i])
		}
	}
}

// Fields are mapped by the header: any order, any subset.
func TestSacctHeaderMapping(t *testing.T) {
	full := fixture(t, "devcluster-22.05.psv")
	lines := strings.Split(strings.TrimSpace(full), "\n")
	header := strings.Split(lines[0], "|")
	// Keep a shuffled subset, JobName moved off the end.
	keep := []string{"State", "JobName", "MaxRSS", "JobID", "ElapsedRaw", "AllocTRES", "NTasks", "ExitCode"}
	idx := map[string]int{}
	for i, h := range header {
		idx[h] = i
	}
	var b strings.Builder
	b.WriteString(strings.Join(keep, "|") + "\n")
	for _, l := range lines[1:] {
		f := strings.Split(l, "|")
		if len(f) != len(header) {
			continue // the name with a "|" in it cannot be re-cut by this simple test
		}
		var out []string
		for _, k := range keep {
			out = append(out, f[idx[k]])
		}
		b.WriteString(strings.Join(out, "|") + "\n")
	}
	jobs, r := readAllJobs(t, b.String())
	if len(r.Skipped) != 0 {
		t.Fatalf("skipped %v", r.Skipped)
	}
	m := map[string]*AcctJob{}
	for _, j := range jobs {
		m[j.ID] = j
	}
	if j := m["11"]; j == nil || !near(j.MaxRSSMiB, 307668.0/1024) || j.Name != "fx-steps" || j.Elapsed != 8*time.Second {
		t.Fatalf("job 11 from the subset: %+v", j)
	}
	if j := m["1"]; j.State != "OUT_OF_MEMORY" || j.ExitSignal != 125 || j.GPUType != "a100_10g" {
		t.Errorf("job 1 from the subset: %+v", j)
	}
	if j := m["1"]; j.Cluster != "" || j.ReqMemMiB != 300 {
		t.Errorf("missing columns: cluster %q; ReqMem should fall back to AllocTRES mem=300M, got %v", j.Cluster, j.ReqMemMiB)
	}
	// No AllocCPUS or NNodes: AllocTRES's cpu= and node= give them, so the job can be priced.
	if j := m["1"]; j.CPUs != 1 || j.Nodes != 1 {
		t.Errorf("CPUs and nodes from AllocTRES: %d CPUs, %d nodes", j.CPUs, j.Nodes)
	}
}

func TestSacctStubRecord(t *testing.T) {
	jobs, _ := readAllJobs(t, fixture(t, "devcluster-stub.psv"))
	// ReqMem is "16?" there; the allocation's mem= TRES stands in for it.
	if len(jobs) != 1 || !jobs[0].Stub() || !jobs[0].Terminal() || jobs[0].ReqMemMiB != 64 {
		t.Fatalf("stub record: %+v", jobs[0])
	}
}

func TestSacctDamagedInput(t *testing.T) {
	full := fixture(t, "devcluster-22.05.psv")
	lines := strings.Split(full, "\n")
	// Line 8 (job 3's first line) cut short, as a dump copied off a full disk would be.
	lines[7] = lines[7][:40]
	jobs, r := readAllJobs(t, strings.Join(lines, "\n"))
	if len(r.Skipped) != 1 || r.Skipped[0].Line != 8 {
		t.Fatalf("skipped %v, want line 8", r.Skipped)
	}
	m := byKey(jobs)
	if m["2"] == nil || m["4"] == nil || m["11"] == nil {
		t.Fatalf("the records around the damage were lost: %v", len(jobs))
	}
	if j := m["3"]; j == nil || j.HasJobLine {
		t.Errorf("job 3's steps should remain without its job line: %+v", j)
	}
}

func TestSacctNoHeader(t *testing.T) {
	_, err := NewSacctReader(strings.NewReader("2|2|migdev|root\n"))
	var le *LineError
	if !errors.As(err, &le) || le.Line != 1 || !strings.Contains(err.Error(), "--parsable2") {
		t.Fatalf("err = %v", err)
	}
	if _, err := NewSacctReader(strings.NewReader("")); err == nil {
		t.Fatal("empty input accepted")
	}
}

func TestSacctNewlineInJobName(t *testing.T) {
	in := "JobID|JobName|State\n5|first\nsecond|COMPLETED\n6|ok|FAILED\n" +
		"JobIDRaw|State|JobName\n" // a stray header is a bad record, not a crash
	jobs, _ := readAllJobs(t, in)
	if len(jobs) < 2 || jobs[0].Name != "first\nsecond" || jobs[0].State != "COMPLETED" || jobs[1].Name != "ok" {
		t.Fatalf("jobs %+v", jobs)
	}
	last := "JobIDRaw|State|JobName\n7|RUNNING|multi\nline\nname\n8|PENDING|x\n"
	jobs, _ = readAllJobs(t, last)
	if len(jobs) != 2 || jobs[0].Name != "multi\nline\nname" || jobs[1].Key != "8" {
		t.Fatalf("trailing name: %+v", jobs)
	}
}

// Formats the dev cluster does not produce, from the Slurm versions and
// settings that do (prior-art notes §3c).
func TestSacctFieldFormats(t *testing.T) {
	in := strings.Join([]string{
		"JobIDRaw|JobID|State|ExitCode|Elapsed|Timelimit|NNodes|AllocCPUS|NTasks|ReqMem|MaxRSS|AllocTRES|ReqTRES|TRESUsageInMax|Start|JobName",
		"100|100|COMPLETED|0:0|1-02:03:04|Partition_Limit|1|4||4000Mc||cpu=4,gres/gpu=1,gres/gpu:a100_40g=1|||2026-01-02T03:04:05|old-per-cpu",
		"100.0|100.0|COMPLETED|0:0|00:10:00||1|4|4||1.50G|||gres/gpumem=6144M,gres/gpuutil=87,mem=1.50G|2026-01-02T03:04:05|step",
		"101|101|PENDING|0:0|00:00:00|UNLIMITED|2|8||16000Mn|||gres/gpu:a100_10g=2,gres/gpu=2||Unknown|old-per-node",
		"102|102_[1-5%2]|PENDING|0:0|00:00:00|59:00|1|1||0n|||||None|pending-array",
		"103|103|RUNNING|0:0|05:30|INVALID|1|1||2T|||||1767225600|epoch",
		"103.batch|103.batch|RUNNING|0:0|05:30||1|1|1||1P||||1767225600|batch",
	}, "\n")
	jobs, r := readAllJobs(t, in)
	if len(r.Skipped) != 0 {
		t.Fatalf("skipped %v", r.Skipped)
	}
	m := byKey(jobs)
	if j := m["100"]; j.ReqMemMiB != 16000 || !j.PartitionLimit || j.Elapsed != 26*time.Hour+3*time.Minute+4*time.Second ||
		j.GPUType != "a100_40g" || j.GPUCount != 1 || !near(j.MaxRSSMiB, 1.5*1024*4) || j.GPUMemMiB != 6144 || j.GPUUtil != 87 {
		t.Errorf("job 100: %+v", j)
	}
	if j := m["101"]; j.ReqMemMiB != 32000 || !j.TimeLimit.Unlimited || j.GPUType != "a100_10g" || j.GPUCount != 2 || !j.Start.IsZero() || j.Terminal() {
		t.Errorf("job 101: %+v", j)
	}
	if j := m["102"]; j.ID != "102_[1-5%2]" || j.ArrayJob != "102" || j.ReqMemMiB != 0 || j.TimeLimit.Duration != 59*time.Minute {
		t.Errorf("job 102: %+v", j)
	}
	if j := m["103"]; j.ReqMemMiB != 2*1024*1024 || j.MaxRSSMiB != 1024*1024*1024 || j.Start.Unix() != 1767225600 || j.Elapsed != 330*time.Second {
		t.Errorf("job 103: %+v", j)
	}
}

func TestSacctBadValueSkipsLine(t *testing.T) {
	in := "JobIDRaw|State|ElapsedRaw|ExitCode\n1|COMPLETED|x|0:0\n2|COMPLETED|5|0:0\n3|FAILED|5|1\n"
	jobs, r := readAllJobs(t, in)
	if len(r.Skipped) != 1 || r.Skipped[0].Line != 2 || !strings.Contains(r.Skipped[0].Error(), "Elapsed") {
		t.Fatalf("skipped %v", r.Skipped)
	}
	if len(jobs) != 2 || jobs[1].ExitCode != 1 || jobs[1].ExitSignal != 0 {
		t.Fatalf("jobs %+v", jobs)
	}
}

func TestParseParsable(t *testing.T) {
	for in, want := range map[string]JobRef{"123\n": {ID: "123"}, "77;wulver\n": {ID: "77", Cluster: "wulver"}} {
		got, err := ParseParsable(in)
		if err != nil || got != want {
			t.Errorf("ParseParsable(%q) = %+v, %v", in, got, err)
		}
	}
	if _, err := ParseParsable("Submitted batch job 5\n"); err == nil {
		t.Error("prose accepted as a job id")
	}
}

func TestParseOneliner(t *testing.T) {
	kv := parseOneliner("JobId=6 JobName=a b WorkDir=/tmp/my dir StdOut=/tmp/my dir/slurm-6.out Power=")
	if kv["JobName"] != "a b" || kv["WorkDir"] != "/tmp/my dir" || kv["StdOut"] != "/tmp/my dir/slurm-6.out" || kv["JobId"] != "6" {
		t.Fatalf("%q", kv)
	}
}

func TestShownJobReadsSubmitTime(t *testing.T) {
	j := shownJobOf(parseOneliner("JobId=6 SubmitTime=2026-11-20T12:00:05 WorkDir=/w StdOut=/w/o StdErr=/w/e"))
	want := time.Date(2026, 11, 20, 12, 0, 5, 0, time.Local)
	if !j.Submitted.Equal(want) || j.Stdout != "/w/o" || j.Stderr != "/w/e" || j.WorkDir != "/w" {
		t.Fatalf("%+v", j)
	}
	if j := shownJobOf(parseOneliner("JobId=6 SubmitTime=Unknown")); !j.Submitted.IsZero() {
		t.Errorf("SubmitTime=Unknown read as %v", j.Submitted)
	}
}

func TestSacctReaderHasField(t *testing.T) {
	sr, err := NewSacctReader(strings.NewReader("\n JobIDRaw|cluster|State\n"))
	if err != nil {
		t.Fatal(err)
	}
	if !sr.HasField("Cluster") || !sr.HasField("jobidraw") || sr.HasField("JobName") || sr.HasField("Bogus") {
		t.Errorf("fields of the header misread")
	}
}

func TestSacctQueryArgs(t *testing.T) {
	since := time.Date(2026, 11, 1, 8, 0, 0, 0, time.Local)
	got := strings.Join(SacctQuery{Users: []string{"ab12", "cd34"}, Since: since, Clusters: []string{"wulver", "lochness"}}.Args(), " ")
	for _, want := range []string{"--parsable2", "--delimiter=\x1f", "--format=JobIDRaw,", ",JobName", "--user=ab12,cd34",
		"--starttime=2026-11-01T08:00:00", "--clusters=wulver,lochness"} {
		if !strings.Contains(got, want) {
			t.Errorf("args %q lack %q", got, want)
		}
	}
	jobs := strings.Join(SacctQuery{Jobs: []string{"4", "5"}, AllUsers: true}.Args(), " ")
	if !strings.Contains(jobs, "--jobs=4,5") || !strings.Contains(jobs, "--allusers") || strings.Contains(jobs, "--starttime") {
		t.Errorf("job query %q", jobs)
	}
}

// A dump in the fields jobstats asks sacct for (its own tests' rows:
// epoch times, no Elapsed column) times each job that has ended by End −
// Start; one still running, or with an End before its Start, has no time.
// Where the dump has an Elapsed column, its value is the time, empty or
// not.
func TestSacctElapsedFromStartAndEnd(t *testing.T) {
	summary, err := os.ReadFile("testdata/jobstats/a100-full.txt")
	if err != nil {
		t.Fatal(err)
	}
	in := strings.Join([]string{
		"JobIDRaw|Start|End|Cluster|AllocTRES|AdminComment|User|Account|State|NNodes|NCPUS|ReqMem|QOS|Partition|TimelimitRaw|JobName",
		"10920563|1000000000|1000050400|della|billing=8,cpu=8,gres/gpu:nvidia_a100-sxm4-80gb=1,gres/gpu=1,mem=64G,node=1|" +
			strings.TrimSpace(string(summary)) + "|aturing|physics|COMPLETED|1|8|64G|gpu-short|gpu|960|train",
		"10920564|2026-01-02T03:04:05|2026-01-02T04:04:06|della|billing=4,cpu=4,mem=8G,node=1||aturing|physics|COMPLETED|1|4|8G|day|common|120|iso",
		"10920565|1000000000|Unknown|della|billing=4,cpu=4,mem=8G,node=1||aturing|physics|RUNNING|1|4|8G|day|common|1440|running",
		"10920566|1000000000|999999000|della|billing=4,cpu=4,mem=8G,node=1||aturing|physics|COMPLETED|1|4|8G|day|common|1440|backwards",
	}, "\n")
	jobs, r := readAllJobs(t, in)
	if len(r.Skipped) != 0 || len(jobs) != 4 {
		t.Fatalf("%d jobs, skipped %v", len(jobs), r.Skipped)
	}
	m := byKey(jobs)
	for key, want := range map[string]time.Duration{
		"10920563": m["10920563"].End.Sub(m["10920563"].Start), "10920564": time.Hour + time.Second,
		"10920565": Unknown, "10920566": Unknown,
	} {
		if got := m[key].Elapsed; got != want {
			t.Errorf("job %s: elapsed %v, want %v", key, got, want)
		}
	}
	if j := m["10920563"]; j.Elapsed != 14*time.Hour || j.CPUs != 8 || j.GPUType != "nvidia_a100-sxm4-80gb" || j.Jobstats == nil || len(j.Jobstats.GPUs) != 1 {
		t.Errorf("the 14-hour GPU job: %+v", j)
	}

	withColumn := "JobIDRaw|Start|End|Elapsed|State|JobName\n1|1000000000|1000003600||COMPLETED|x\n"
	if jobs, _ := readAllJobs(t, withColumn); jobs[0].Elapsed != Unknown {
		t.Errorf("an empty Elapsed read as %v", jobs[0].Elapsed)
	}
}
