package bench

import (
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/migadvisor/migadvisor/advisor/base/outcome"
)

func TestAProbeSaysWhatItSubmitsAndTheMostItCosts(t *testing.T) {
	jobs := []JobCost{{Profile: "1g.10gb", Hours: 1, TimeFrom: "--time"}, {Profile: "full", Whole: true, Hours: 1, TimeFrom: "--time"}}
	noTime := []JobCost{{Profile: "full", Hours: 2, TimeFrom: "the partition's limit"}}
	two := []string{"1g.10gb", "full"}
	tail := "; variants in d, each job's output in o (and the monitor's summary beside it)"
	for _, c := range []struct {
		name string
		plan ProbePlan
		want string
	}{
		{"all at once", ProbePlan{Profiles: two, Jobs: jobs, MaxSU: 26},
			"2 jobs, one on each of 1g.10gb and full (a whole GPU); at most 26 SU if every job runs for all of 01:00:00, each job's --time"},
		{"a ladder", ProbePlan{Profiles: two, Jobs: jobs, MaxSU: 26, Ladder: true},
			"up to 2 jobs, one profile at a time from the smallest: 1g.10gb and full (a whole GPU); at most 26 SU"},
		{"an emulation", ProbePlan{Profiles: two, Jobs: jobs[1:], MaxSU: 20, Emulate: true},
			"1 job on full (a whole GPU) that runs the script once per profile (1g.10gb and full)"},
		{"no --time", ProbePlan{Profiles: []string{"full"}, Jobs: noTime, MaxSU: 40},
			"at most 40 SU if every job runs for all of 02:00:00, the partition's limit (the script has no --time)"},
		{"--times that differ", ProbePlan{Profiles: two, Jobs: []JobCost{{Hours: 1}, {Hours: 2}}, MaxSU: 9},
			"at most 9 SU if every job runs for all of each job's --time"},
		{"unpriced", ProbePlan{Profiles: []string{"full"}, Unpriced: "the site has no SU formula"},
			"1 job, one on each of full; each charged for as long as it runs; the cost has no bound: the site has no SU formula"},
	} {
		c.plan.Dir, c.plan.Outputs = "d", "o"
		got := c.plan.Line()
		if !strings.HasPrefix(got, "migadvisor: probe: submitting ") || !strings.Contains(got, c.want) || !strings.HasSuffix(got, tail) {
			t.Errorf("%s:\n%s\nwant %q", c.name, got, c.want)
		}
	}
}

func TestAProbeSaysOffATerminalOnlyWhatTheUserMustKnow(t *testing.T) {
	plan := &ProbePlan{Profiles: []string{"full"}, Dir: "d", Outputs: "o"}
	completed := outcome.Outcome{Kind: outcome.Completed, Text: "completed in 5 s"}
	failed := outcome.Outcome{Kind: outcome.Failed, Text: "exit 1"}
	for _, c := range []struct {
		event  ProbeEvent
		want   string
		always bool
	}{
		{ProbeEvent{Kind: ProbeStarting, Plan: plan}, plan.Line(), true},
		{ProbeEvent{Kind: ProbeSubmitted, Profile: "full", JobID: "7", File: "d/job-full.sh"},
			"probe: full submitted as job 7 (d/job-full.sh)", false},
		{ProbeEvent{Kind: ProbeQueue}, "", false},
		{ProbeEvent{Kind: ProbeJobEnded, Profile: "full", JobID: "7", State: "FAILED"}, "probe: job 7 on full ended FAILED", false},
		{ProbeEvent{Kind: ProbeJobEnded, Profile: "full", JobID: "7", Outcome: completed}, "probe: job 7 on full completed in 5 s", false},
		{ProbeEvent{Kind: ProbeJobEnded, Profile: "full", JobID: "7", State: "FAILED", Outcome: failed},
			"probe: job 7 on full ended FAILED: exit 1", false},
		{ProbeEvent{Kind: ProbeNextRung, Profile: "1g.10gb"}, "probe: 1g.10gb did not complete cleanly; trying the next profile", false},
		{ProbeEvent{Kind: ProbeStopped, Profile: "1g.10gb", JobID: "7", Outcome: outcome.Outcome{Text: "found no command"}},
			"migadvisor: probe stopped at 1g.10gb, since a larger profile would fail the same way: job 7 found no command", true},
		{ProbeEvent{Kind: ProbeWarning, Err: errors.New("no history")}, "migadvisor: warning: no history", true},
	} {
		if got, always := ProbeEventLine(c.event); got != c.want || always != c.always {
			t.Errorf("%+v: %q (always %v), want %q (%v)", c.event, got, always, c.want, c.always)
		}
	}
}

func TestABenchmarkRunSaysWhatItSubmitsAndHowLongItCanTake(t *testing.T) {
	plan := &SuitePlan{Workloads: 2, Profiles: []string{"1g.10gb", "full"}, Jobs: 4, Quick: true, Synthetic: true, Dir: "b"}
	want := "benchmark: submitting 4 jobs (2 workloads on 1g.10gb and full, quick runs on random data that check the setup) from b, " +
		"then returns: 'migadvisor wait' follows them"
	if got := plan.Line(); got != want {
		t.Errorf("--no-wait:\n%s\nwant\n%s", got, want)
	}
	plan.Quick, plan.Wait, plan.Longest = false, true, 2*time.Hour
	if got := plan.Line(); !strings.Contains(got, "(2 workloads on 1g.10gb and full, runs on random data)") ||
		!strings.Contains(got, "then waits until every job has ended, each after its wait in the queue and at most its --time, the longest ") {
		t.Errorf("waiting: %s", got)
	}
	for _, c := range []struct {
		event ProbeEvent
		want  string
	}{
		{ProbeEvent{Kind: SuiteStarting, Suite: plan}, plan.Line()},
		{ProbeEvent{Kind: ProbeSubmitted, Workload: "mnist@quick", Profile: "full", JobID: "7"},
			"benchmark: mnist@quick on full submitted as job 7"},
		{ProbeEvent{Kind: ProbeQueue, Queue: QueueState{Total: 4, Done: 1, Running: 2, Pending: 1}},
			"benchmark: 1 of 4 jobs ended (2 running, 1 pending)"},
		{ProbeEvent{Kind: ProbeJobEnded}, ""},
		{ProbeEvent{Kind: ProbeWarning, Err: errors.New("no history")}, "migadvisor: warning: no history"},
	} {
		if got := SuiteEventLine(c.event); got != c.want {
			t.Errorf("%+v: %q, want %q", c.event, got, c.want)
		}
	}
}

func TestASweepSaysItsWarningsAlone(t *testing.T) {
	var b strings.Builder
	say := WarningsTo(&b)
	say(ProbeEvent{Kind: ProbeSubmitted, Profile: "full", JobID: "7"})
	say(ProbeEvent{Kind: ProbeWarning, Err: errors.New("the history cannot record")})
	if b.String() != "migadvisor: warning: the history cannot record\n" {
		t.Errorf("%q", b.String())
	}
}

func TestTablesOfJobsAndVariants(t *testing.T) {
	var b strings.Builder
	if err := WriteSuiteJobs(&b, []SuiteJob{{Workload: "mnist", Profile: "full", JobID: "7", Script: "s.sh"},
		{Workload: "mnist", Profile: "1g.10gb", JobID: "8", Script: "t.sh", State: "COMPLETED"}}); err != nil {
		t.Fatal(err)
	}
	want := "WORKLOAD  PROFILE  JOB ID  STATE      SCRIPT\n" +
		"mnist     full     7       -          s.sh\n" +
		"mnist     1g.10gb  8       COMPLETED  t.sh\n"
	if b.String() != want {
		t.Errorf("jobs:\n%s\nwant:\n%s", b.String(), want)
	}
	sw := &Sweep{Fingerprint: "f", Profiles: []string{"1g.10gb", "full"}, Variants: map[string]*Variant{
		"1g.10gb": {File: "job-1g.sh", Request: "--gres=gpu:a100_10g:1", JobName: "job-1g", QoS: "mig", NoMonitor: "no binary"},
		"full": {File: "job-full.sh", Request: "--gres=gpu:a100:1", JobName: "job-full", Partition: "gpu", Time: "1:00:00",
			NoMonitor: "no binary"},
	}}
	b.Reset()
	if err := sw.WriteText(&b, "d"); err != nil || sw.Submitted() {
		t.Fatal(err)
	}
	want = "PROFILE  VARIANT        REQUEST                JOB NAME  CHANGED\n" +
		"1g.10gb  d/job-1g.sh    --gres=gpu:a100_10g:1  job-1g    qos=mig\n" +
		"full     d/job-full.sh  --gres=gpu:a100:1      job-full  partition=gpu time=1:00:00\n"
	if b.String() != want {
		t.Errorf("variants:\n%s\nwant:\n%s", b.String(), want)
	}
	sw.Variants["1g.10gb"].JobID = "7"
	b.Reset()
	if err := sw.WriteText(&b, "d"); err != nil || !sw.Submitted() || !strings.HasPrefix(b.String(), "JOB ID  PROFILE") ||
		!strings.Contains(b.String(), "\n-       full ") {
		t.Errorf("submitted: %v\n%s", err, b.String())
	}
	if whys := sw.NoMonitorReasons(); len(whys) != 1 || whys[0] != "no binary" {
		t.Errorf("no monitor: %q", whys)
	}
}
