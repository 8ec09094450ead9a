package main

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/migadvisor/migadvisor/advisor/app/savings"
	"github.com/migadvisor/migadvisor/slurm"
	"github.com/migadvisor/migadvisor/slurm/sacctgen"
	"github.com/migadvisor/migadvisor/slurm/slurmtest"
)

// The plain flow: a later dump of the same jobs without their TRES fields
// and State (a narrower sacct -o) keeps the GPU and the state the history
// holds of them, and counts them unchanged.
func TestCollectOfANarrowerDumpKeepsTheJobsGPUAndState(t *testing.T) {
	isolate(t)
	t.Setenv("MIGADVISOR_DB", filepath.Join(t.TempDir(), "history.db"))
	const full = "../../testdata/sacct/devcluster-22.05.psv"
	if _, errOut, code := migadvisor(t, "collect", "--sacct-file", full); code != 0 {
		t.Fatalf("collect of the full dump: exit %d: %s", code, errOut)
	}
	dump, err := os.ReadFile(full)
	if err != nil {
		t.Fatal(err)
	}
	narrow := filepath.Join(t.TempDir(), "narrow.psv")
	fields := sacctgen.WithoutFields(string(dump), "AllocTRES", "ReqTRES", "TRESUsageInMax", "State")
	if err := os.WriteFile(narrow, []byte(fields), 0o644); err != nil {
		t.Fatal(err)
	}
	out, errOut, code := migadvisor(t, "collect", "--sacct-file", narrow)
	if code != 0 || !strings.Contains(out, "14 jobs: 0 new, 0 updated, 14 unchanged") {
		t.Fatalf("collect of the narrower dump: exit %d:\n%s%s", code, out, errOut)
	}
	if strings.Contains(out, "the dump lacks") {
		t.Errorf("the jobs kept what the history held, yet collect says the dump lacks fields:\n%s", out)
	}
	job := historyJobs(t)["1"]
	if job.GPUType != "a100_10g" || job.Profile == nil || *job.Profile != "1g.10gb" || job.State != "OUT_OF_MEMORY" {
		t.Errorf("job 1 after the narrower dump: GPU %q, profile %v, state %q", job.GPUType, job.Profile, job.State)
	}
}

// A dump of the fields collect --help once showed (no End, User, Submit or
// Start) is imported, and collect says once what it lacks and what that
// costs.
func TestCollectSaysWhatADumpLacks(t *testing.T) {
	isolate(t)
	t.Setenv("MIGADVISOR_DB", filepath.Join(t.TempDir(), "history.db"))
	dump, err := os.ReadFile("../../testdata/sacct/devcluster-22.05.psv")
	if err != nil {
		t.Fatal(err)
	}
	narrow := filepath.Join(t.TempDir(), "narrow.psv")
	fields := sacctgen.OnlyFields(string(dump), "JobIDRaw", "JobID", "State", "ElapsedRaw", "AllocTRES", "MaxRSS", "JobName")
	if err := os.WriteFile(narrow, []byte(fields), 0o644); err != nil {
		t.Fatal(err)
	}
	out, errOut, code := migadvisor(t, "collect", "--sacct-file", narrow, "--cluster", "migdev")
	said := "the dump lacks End, User, Submit and Start, which the report and recommend need: without End a job is in no period's report"
	if code != 0 || strings.Count(out+errOut, "the dump lacks") != 1 || !strings.Contains(out, said) {
		t.Errorf("exit %d:\n%s%s\nwant once: %s", code, out, errOut, said)
	}
}

// Every sacct command the help and the docs show for a dump asks for
// every field collect reads (those it asks sacct for itself).
func TestDocumentedDumpsAskForEveryField(t *testing.T) {
	want := strings.Join(slurm.SacctFields, ",")
	for _, file := range []string{"help/collect.txt", "../../docs/admin/collect-and-publish.md"} {
		text, err := os.ReadFile(file)
		if err != nil {
			t.Fatal(err)
		}
		shown := 0
		for _, line := range strings.Split(string(text), "\n") {
			_, after, ok := strings.Cut(line, "sacct -a -S 2026-11-01 --parsable2 -o ")
			if !ok {
				continue
			}
			shown++
			if fields, _, _ := strings.Cut(after, " "); fields != want {
				t.Errorf("%s asks sacct for %s\nwant %s", file, fields, want)
			}
		}
		if shown == 0 {
			t.Errorf("%s shows no sacct command that saves a dump", file)
		}
	}
}

// An empty dump file holds no job: collect says so, exits 0 and asks
// Slurm for no cluster name to file none under.
func TestCollectOfAnEmptyDumpAsksSlurmNothing(t *testing.T) {
	isolate(t)
	t.Setenv("MIGADVISOR_DB", filepath.Join(t.TempDir(), "history.db"))
	empty := filepath.Join(t.TempDir(), "empty.psv")
	if err := os.WriteFile(empty, nil, 0o644); err != nil {
		t.Fatal(err)
	}
	fake := slurmtest.New().Cluster("migdev")
	out, errOut, code := migadvisorWith(t, fake, "collect", "--sacct-file", empty)
	if code != 0 || !strings.Contains(out, "accounting ("+empty+"): the dump holds no job\n") || errOut != "" {
		t.Errorf("exit %d:\n%s%s", code, out, errOut)
	}
	if calls := fake.Calls("scontrol"); len(calls) != 0 {
		t.Errorf("an empty dump, yet scontrol was asked %v", calls)
	}
}

// A report of jobs read from a dump without State counts them, and says
// why it judges none of them: never "none on a GPU" beside GPU jobs.
func TestAReportOfADumpWithoutStateSaysWhyNoJobIsJudged(t *testing.T) {
	isolate(t)
	t.Setenv("MIGADVISOR_DB", filepath.Join(t.TempDir(), "history.db"))
	dump, err := os.ReadFile("../../testdata/sacct/devcluster-22.05.psv")
	if err != nil {
		t.Fatal(err)
	}
	narrow := filepath.Join(t.TempDir(), "nostate.psv")
	if err := os.WriteFile(narrow, []byte(sacctgen.WithoutFields(string(dump), "State")), 0o644); err != nil {
		t.Fatal(err)
	}
	if _, errOut, code := migadvisor(t, "collect", "--all-users", "--sacct-file", narrow); code != 0 {
		t.Fatalf("collect: exit %d: %s", code, errOut)
	}
	out, errOut, code := migadvisor(t, "report", "--since", "2026-11-01", "--until", "2026-12-01", "--json")
	var rep savings.Report
	if err := json.Unmarshal([]byte(out), &rep); err != nil || code != 0 {
		t.Fatalf("report --json: exit %d, %v:\n%s%s", code, err, out, errOut)
	}
	gpuJobs := 0
	for _, u := range rep.Unjudged {
		if strings.HasPrefix(u.Reason, "no State") {
			gpuJobs += u.Jobs
		}
	}
	if rep.Total.Jobs == 0 || gpuJobs != rep.Total.Jobs {
		t.Errorf("%d GPU jobs, %d of them not judged for want of State: %+v", rep.Total.Jobs, gpuJobs, rep.Unjudged)
	}
	text, _, _ := migadvisor(t, "report", "--since", "2026-11-01", "--until", "2026-12-01")
	if strings.Contains(text, "none on a GPU") || !strings.Contains(text, "no State") {
		t.Errorf("the report of GPU jobs without State:\n%s", text)
	}
}
