package advisor

import (
	"strings"
	"testing"

	"github.com/migadvisor/migadvisor/catalog/catalogtest"

	"github.com/migadvisor/migadvisor/slurm"
)

// adviseAt is the wrapper's advice for a submission of job.sh with args.
func adviseAt(t *testing.T, header string, args []string, runs []Run) *SubmitAdvice {
	t.Helper()
	site := catalogtest.Wulver(t)
	script := slurm.Parse("job.sh", []byte("#!/bin/bash\n#SBATCH -p gpu\n"+header+"python train.py\n"))
	cl := slurm.ParseCommandLine(append(args, "job.sh"))
	res := cl.Resources(script, nil)
	job := Job{Script: "job.sh", Fingerprint: script.Fingerprint(), Resources: res, Runs: runs}
	rec, err := Recommend(site, job, Options{})
	if err != nil {
		t.Fatal(err)
	}
	adv, err := ForSubmission(site, rec, cl, res, script, nil)
	if err != nil {
		t.Fatal(err)
	}
	return adv
}

// sentences counts a message's sentences as a reader does: clauses joined
// by "; " read as one sentence each.
func sentences(msg string) int { return strings.Count(msg, "; ") + strings.Count(msg, ". ") + 1 }

func TestSubmissionAdviceCountsTheRunsItsFigureComesFrom(t *testing.T) {
	// Seen: "peaked at 0.6 GiB in 2 runs on 1g.10gb and 2g.20gb and 3g.40gb
	// and a full A100" for 5 runs, 2 of them on 1g.10gb.
	var runs []Run
	for _, p := range []string{"1g.10gb", "1g.10gb", "2g.20gb", "3g.40gb", "full"} {
		runs = append(runs, newRun(p, 600).peak(614).id(p+string(rune('a'+len(runs)))))
	}
	adv := adviseAt(t, "#SBATCH --gres=gpu:a100:1\n#SBATCH -t 1:00:00\n", nil, runs)
	if adv == nil {
		t.Fatal("no advice for a 0.6 GiB job on a full A100")
	}
	if want := "this script peaked at 614 MiB of GPU memory in 2 runs on 1g.10gb, at ~"; !strings.HasPrefix(adv.Message, want) {
		t.Errorf("message %q, want it to start %q", adv.Message, want)
	}
	if strings.Count(adv.Message, " and ") > 0 || sentences(adv.Message) > 2 || strings.Contains(adv.Message, "((") {
		t.Errorf("not two short sentences: %q", adv.Message)
	}
}

func TestSubmissionAdviceSaysTheJobRanOutOfMemoryOnTheProfileItAsksFor(t *testing.T) {
	runs := append(runsOn("1g.10gb", 2, 600, 0, true), runsOn("2g.20gb", 1, 900, 12000, false)...)
	adv := adviseAt(t, "#SBATCH --gres=gpu:a100_10g:1\n", nil, runs)
	if adv == nil || !strings.HasPrefix(adv.Message, "this script ran out of GPU memory on 1g.10gb, the profile this job asks for; 2g.20gb has low OOM risk") {
		t.Fatalf("advice %+v", adv)
	}
	// Out of memory on a bigger profile than the one asked for.
	runs = append(runsOn("2g.20gb", 1, 600, 0, true), runsOn("3g.40gb", 1, 900, 25000, false)...)
	adv = adviseAt(t, "#SBATCH --gres=gpu:a100_10g:1\n", nil, runs)
	if adv == nil || !strings.Contains(adv.Message, "out of GPU memory") || !strings.Contains(adv.Message, "2g.20gb") || adv.Profile != "3g.40gb" {
		t.Fatalf("advice %+v", adv)
	}
}

func TestSubmissionAdviceOnHostMemory(t *testing.T) {
	killed := newRun("2g.20gb", 300).peak(2048).id("4242")
	killed.Completed, killed.HostOOM, killed.State, killed.ReqMemMiB, killed.MaxRSSMiB = false, true, "OUT_OF_MEMORY", 4096, 4090
	ok := newRun("2g.20gb", 300).peak(2048).id("4243")
	adv := adviseAt(t, "#SBATCH --gres=gpu:a100_20g:1\n#SBATCH --mem=4G\n", nil, []Run{killed, ok})
	if adv == nil || adv.Use() != "--mem=8G" || !strings.Contains(adv.Message, "job 4242 of this script ran out of host memory with --mem=4G (sacct saw its RSS reach 4.0 GiB before the kill)") {
		t.Fatalf("advice %+v", adv)
	}
	// Asking for 8G already: nothing to say.
	if adv := adviseAt(t, "#SBATCH --gres=gpu:a100_20g:1\n#SBATCH --mem=8G\n", nil, []Run{killed, ok}); adv != nil {
		t.Errorf("advice for a job that asks for 8G: %+v", adv)
	}
}

func TestRiskReasonsReadPlainly(t *testing.T) {
	// Seen: "completed on 3g.40gb, which has no more memory" for full, and
	// "OOM risk low (completed here (1 run))".
	rec := recommend(t, "", []Run{newRun("3g.40gb", 600).peak(2048)}, Options{})
	if r := profileOf(t, rec, "full").OOMRiskReason; r != "completed on 3g.40gb, which has less memory" {
		t.Errorf("full: %q", r)
	}
	if r := profileOf(t, rec, "3g.40gb").OOMRiskReason; r != "completed here in 1 run" {
		t.Errorf("3g.40gb: %q", r)
	}
	if strings.Contains(rec.Reason, "((") || strings.Contains(rec.Reason, "(completed") {
		t.Errorf("reason %q", rec.Reason)
	}
}

func TestSubmissionAdviceBeforeAnyRunCompleted(t *testing.T) {
	// Seen: a job that ran out of GPU memory on 1g.10gb, its only run, was
	// resubmitted on 1g.10gb in silence; recommend blamed --time.
	oom := runsOn("1g.10gb", 1, 2, 0, true)
	adv := adviseAt(t, "#SBATCH --gres=gpu:a100_10g:1\n#SBATCH -t 5\n", nil, oom)
	if adv == nil || adv.Message != "this script ran out of GPU memory on 1g.10gb, the profile this job asks for; 2g.20gb, with 19.5 GiB, fits the 10.7 GiB it needs" ||
		adv.Use() != "--gres=gpu:a100_20g:1" {
		t.Fatalf("after a GPU OOM: %+v", adv)
	}
	rec := recommend(t, "", oom, Options{})
	if strings.Contains(rec.Reason, "--time") || !strings.Contains(rec.Reason, "ran out of GPU memory") || !strings.Contains(rec.Next, "--profiles 2g.20gb") {
		t.Errorf("recommend after a GPU OOM: %s; next %q", rec.Reason, rec.Next)
	}
	// A host OOM, the only run: ask for --mem, in recommend and at submission.
	killed := newRun("2g.20gb", 1).id("153")
	killed.Completed, killed.HostOOM, killed.State, killed.ReqMemMiB, killed.MaxRSSMiB = false, true, "OUT_OF_MEMORY", 200, 0.1
	adv = adviseAt(t, "#SBATCH --gres=gpu:a100_20g:1\n#SBATCH --mem=200M\n", nil, []Run{killed})
	if adv == nil || adv.Use() != "--mem=1G" || strings.Contains(adv.Message, "RSS") {
		t.Fatalf("after a host OOM: %+v", adv)
	}
	// A run that reached its time limit, on the profile asked for again.
	capped := newRun("2g.20gb", 60).peak(1024).timeout().id("137")
	adv = adviseAt(t, "#SBATCH --gres=gpu:a100_20g:1\n#SBATCH -t 1\n", nil, []Run{capped})
	if adv == nil || adv.Use() != "--time=00:05:00" || !strings.Contains(adv.Message, "1 run of this script on 2g.20gb reached the time limit after 00:01:00") {
		t.Fatalf("after a timeout: %+v", adv)
	}
}

func TestSubmissionAdviceWhenNoProfileHasMoreMemory(t *testing.T) {
	adv := adviseAt(t, "#SBATCH --gres=gpu:a100:1\n", nil, []Run{newRun("full", 60).oom(84000)})
	if adv == nil || len(adv.Settings) != 0 ||
		adv.Message != "this script ran out of GPU memory on full, the profile this job asks for, and no profile has more memory: reduce its memory use (batch size, precision)" {
		t.Errorf("advice %+v", adv)
	}
}

// An edited script whose earlier version completed on a cheaper profile
// without a memory figure: no change is made, but the wrapper is not silent
// either; it says where the earlier version ran and how to check this one.
func TestSubmissionAdviceAfterAnEditWithoutAMemoryFigure(t *testing.T) {
	var runs []Run
	for _, p := range []string{"1g.10gb", "2g.20gb", "full"} {
		r := newRun(p, 300).id(p)
		r.Earlier = true
		runs = append(runs, r)
	}
	adv := adviseAt(t, "#SBATCH --gres=gpu:a100:1\n#SBATCH -t 1:00:00\n", nil, runs)
	if adv == nil {
		t.Fatal("the wrapper is silent after an edit")
	}
	want := "an earlier version of this script completed on 1g.10gb in 1 run, at ~"
	if !strings.HasPrefix(adv.Message, want) || !strings.Contains(adv.Message, "on a full A100; 'migadvisor recommend --probe --profiles 1g.10gb job.sh' tells whether this version fits there") {
		t.Errorf("message %q", adv.Message)
	}
	if len(adv.Settings) != 0 || sentences(adv.Message) > 2 {
		t.Errorf("a nudge changes nothing and is short: %+v", adv)
	}
	// The job already asks for the smallest profile it completed on: nothing to say.
	if adv := adviseAt(t, "#SBATCH --gres=gpu:a100_10g:1\n#SBATCH -t 1:00:00\n", nil, runs); adv != nil {
		t.Errorf("advice on the profile it completed on: %+v", adv)
	}
}
