package advisor

import (
	"fmt"
	"strings"
	"testing"
)

// runsOn makes n completed runs on a profile with an allocated peak.
func runsOn(profile string, n int, seconds, peakMiB float64, oom bool) []Run {
	var runs []Run
	for i := range n {
		r := Run{JobID: fmt.Sprintf("%s-%d", profile, i), Profile: profile, State: "COMPLETED", Completed: !oom, GPUOOM: oom,
			Seconds: seconds, NeedMiB: -1, PeakMiB: -1, AllocatedMiB: peakMiB, Work: -1, Utilization: -1, MemUtilization: -1, ReqMemMiB: -1, MaxRSSMiB: -1, QueueWaitS: -1}
		if oom {
			r.State, r.AllocatedMiB, r.NeedMiB = "FAILED", -1, 11000
		}
		runs = append(runs, r)
	}
	return runs
}

func TestForSubmission(t *testing.T) {
	advise := func(args []string, runs []Run) *SubmitAdvice {
		t.Helper()
		return adviseAt(t, "#SBATCH --gres=gpu:a100:1\n#SBATCH -t 4:00:00\n", args[:len(args)-1], runs)
	}
	// Three runs on a full A100 that used 5.7 GiB (and two cancelled before
	// they started, which say nothing): a slice is cheaper.
	full := runsOn("full", 3, 3600, 5.7*1024, false)
	for _, id := range []string{"c1", "c2"} {
		full = append(full, Run{JobID: id, Profile: "full", State: "CANCELLED", Seconds: 0, NeedMiB: -1, PeakMiB: -1,
			AllocatedMiB: -1, Work: -1, Utilization: -1, MemUtilization: -1, ReqMemMiB: -1, MaxRSSMiB: -1, QueueWaitS: -1})
	}
	adv := advise([]string{"job.sh"}, full)
	if adv == nil || !strings.HasPrefix(adv.Message, "this script allocated at most 5.7 GiB of GPU memory in 3 runs on a full A100; ") ||
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
