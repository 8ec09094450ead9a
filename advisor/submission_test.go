package advisor

import (
	"fmt"
	"strings"
	"testing"

	"github.com/migadvisor/migadvisor/slurm"
)

func TestTrimFloatNeverWritesAnExponent(t *testing.T) {
	for f, want := range map[float64]string{16: "16", 2.8: "2.8", 2.04: "2", 0.0058: "0.0058", 0.000039: "0.000039", 0.05: "0.050", 0: "0"} {
		if got := trimFloat(f); got != want {
			t.Errorf("trimFloat(%v) = %q, want %q", f, got, want)
		}
	}
}

// runsOn makes n completed runs on a profile with an allocated peak.
func runsOn(profile string, n int, seconds, peakMiB float64, oom bool) []Run {
	var runs []Run
	for i := range n {
		r := Run{JobID: fmt.Sprintf("%s-%d", profile, i), Profile: profile, State: "COMPLETED", Completed: !oom, GPUOOM: oom,
			Seconds: seconds, NeedMiB: -1, PeakMiB: -1, AllocatedMiB: peakMiB, Work: -1, Utilisation: -1, ReqMemMiB: -1, MaxRSSMiB: -1, QueueWaitS: -1}
		if oom {
			r.State, r.AllocatedMiB, r.NeedMiB = "FAILED", -1, 11000
		}
		runs = append(runs, r)
	}
	return runs
}

func TestForSubmission(t *testing.T) {
	site := wulver(t)
	script := slurm.Parse("job.sh", []byte("#!/bin/bash\n#SBATCH -p gpu\n#SBATCH --gres=gpu:a100:1\n#SBATCH -t 4:00:00\npython train.py\n"))
	advise := func(args []string, runs []Run) *SubmitAdvice {
		t.Helper()
		cl := slurm.ParseCommandLine(args)
		job := Job{Script: "job.sh", Fingerprint: script.Fingerprint(), Resources: cl.Resources(script, nil), Runs: runs}
		rec, err := Recommend(site, job, Options{})
		if err != nil {
			t.Fatal(err)
		}
		adv, err := ForSubmission(site, rec, cl, script, nil)
		if err != nil {
			t.Fatal(err)
		}
		return adv
	}
	// Three runs on a full A100 that used 5.7 GiB (and two cancelled before
	// they started, which say nothing): a slice is cheaper.
	full := runsOn("full", 3, 3600, 5.7*1024, false)
	for _, id := range []string{"c1", "c2"} {
		full = append(full, Run{JobID: id, Profile: "full", State: "CANCELLED", Seconds: 0, NeedMiB: -1, PeakMiB: -1,
			AllocatedMiB: -1, Work: -1, Utilisation: -1, ReqMemMiB: -1, MaxRSSMiB: -1, QueueWaitS: -1})
	}
	adv := advise([]string{"job.sh"}, full)
	if adv == nil || !strings.HasPrefix(adv.Message, "this script peaked at 5.7 GiB in 3 runs on a full A100; ") ||
		!strings.Contains(adv.Message, " would cost ~") || !strings.HasPrefix(adv.Use(), "--gres=gpu:a100_") {
		t.Fatalf("cheaper: %+v", adv)
	}
	// Asked for the recommended profile already: nothing to say.
	if again := advise([]string{"--gres=" + strings.TrimPrefix(adv.Settings[0].String(), "--gres="), "job.sh"}, full); again != nil {
		t.Errorf("already on the advice: %+v", again)
	}
	// Out of memory on 1g.10gb, completed on 2g.20gb: asking for 1g.10gb is
	// told to take 2g.20gb, though it costs more.
	mixed := append(runsOn("1g.10gb", 2, 600, 0, true), runsOn("2g.20gb", 1, 3600, 12000, false)...)
	adv = advise([]string{"--gres=gpu:a100_10g:1", "job.sh"}, mixed)
	if adv == nil || adv.Profile != "2g.20gb" || !strings.Contains(adv.Message, "2g.20gb has low OOM risk") || adv.Use() != "--gres=gpu:a100_20g:1" {
		t.Errorf("unsafe: %+v", adv)
	}
	// No runs (a prior at most): no advice at submission.
	if none := advise([]string{"job.sh"}, nil); none != nil {
		t.Errorf("without runs: %+v", none)
	}
}
