//go:build slurm

package main

import (
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// onDemandName is the job name Open OnDemand gives its Jupyter app's
// sessions.
const onDemandName = "sys/dashboard/sys/jupyter"

// onDemandSession submits a batch-connect session as OnDemand does (sbatch,
// its job name, a whole A100 of the dev cluster), whose program ran under
// the monitor: its line, as it prints it on a GPU, in the session's
// output. With hold, the session stays up until it is cancelled, as a
// user's Delete on the dashboard ends it.
func onDemandSession(t *testing.T, peakMiB int, hold bool) string {
	t.Helper()
	wrap := fmt.Sprintf("echo '[I ServerApp] Jupyter Server is running'; sleep 2; echo 'MIGADVISOR_GPU peak_mib=%d used_peak_mib=%d "+
		"total_mib=81559 samples=40 scope=tree util=mean:2,max:35 device=NVIDIA A100-SXM4-80GB' >&2", peakMiB, peakMiB+420)
	if hold {
		wrap += "; sleep 300"
	}
	out, err := exec.Command("sbatch", "--parsable", "-J", onDemandName, "--partition=gpu", "--gres=gpu:a100:1", "--mem=64M", "-t", "5",
		"--wrap", wrap).CombinedOutput()
	if err != nil {
		t.Fatalf("sbatch: %v\n%s", err, out)
	}
	id := strings.TrimSpace(string(out))
	t.Cleanup(func() { exec.Command("scancel", id).Run() })
	return id
}

// Sessions on the dev cluster's real Slurm: three named like OnDemand's
// Jupyter (one ended from the dashboard while it ran), measured by the
// monitor, and an salloc session measured by nothing; collected from
// accounting and their outputs, then recommend --session names the slice
// for the first and says why not for the second.
func TestSlurmSessionRecommend(t *testing.T) {
	work := slurmWorkDir(t)
	since := time.Now().Add(-2 * time.Second).Format("2006-01-02T15:04:05")
	ids := []string{onDemandSession(t, 2100, false), onDemandSession(t, 2970, false)}
	held := onDemandSession(t, 2500, true)
	deadline := time.Now().Add(time.Minute)
	for out, _ := os.ReadFile(filepath.Join(work, "slurm-"+held+".out")); !strings.Contains(string(out), "MIGADVISOR_GPU"); {
		if time.Now().After(deadline) {
			t.Fatalf("session %s never measured: %q", held, out)
		}
		time.Sleep(500 * time.Millisecond)
		out, _ = os.ReadFile(filepath.Join(work, "slurm-"+held+".out"))
	}
	if out, err := exec.Command("scancel", held).CombinedOutput(); err != nil {
		t.Fatalf("scancel %s: %v %s", held, err, out)
	}
	salloc := exec.Command("salloc", "-J", "interactive", "--gres=gpu:a100_20g:1", "--mem=64M", "-t", "2", "srun", "true")
	if out, err := salloc.CombinedOutput(); err != nil {
		t.Fatalf("salloc: %v\n%s", err, out)
	}
	mustRun(t, append([]string{"wait", "--timeout", "2m"}, append(ids, held)...)...)

	var adv sessionAdvice
	for try := 0; ; try++ {
		mustRun(t, "collect", "--since", since, "--outputs", work)
		out := mustRun(t, "recommend", "--session", onDemandName, "--json")
		if err := json.Unmarshal([]byte(out), &adv); err != nil {
			t.Fatalf("%v: %s", err, out)
		}
		if adv.Sessions == 3 && adv.WithMemory == 3 || try == 5 {
			break
		}
		time.Sleep(2 * time.Second) // slurmdbd's placeholder of a short job, until the real record is there
	}
	help := "your last 3 sessions peaked at 2.9 GiB: 1g.10gb is enough, 3 SU/h instead of 17"
	if adv.Sessions != 3 || adv.WithMemory != 3 || adv.PeakMiB == nil || *adv.PeakMiB != 2970 || adv.Need != "2.9 GiB" || adv.Asked != "full" ||
		adv.Recommended != "1g.10gb" || adv.GRES != "gpu:a100_10g:1" || *adv.SUPerHour != 3 || *adv.AskedSUPerHour != 17 || adv.Help != help {
		t.Errorf("recommend --session %s --json: %+v", onDemandName, adv)
	}
	text := mustRun(t, "recommend", "--session", onDemandName)
	t.Logf("recommend --session %s:\n%s", onDemandName, text)
	for _, want := range []string{"CANCELLED", "COMPLETED", "recommend 1g.10gb: " + help, "change: choose 1g.10gb in the form of " + onDemandName, "priced: SU per hour held"} {
		if !strings.Contains(text, want) {
			t.Errorf("no %q in the text", want)
		}
	}

	// The salloc session: in accounting, measured by nothing here.
	mustRun(t, "collect", "--since", since)
	out, errOut, code := migadvisor(t, "recommend", "--session", "interactive", "--json")
	adv = sessionAdvice{}
	if err := json.Unmarshal([]byte(out), &adv); err != nil || code != 0 || adv.Sessions != 1 || adv.Asked != "2g.20gb" || adv.Recommended != "" ||
		!strings.HasPrefix(adv.Why, "your last session named interactive has no GPU memory figure") {
		t.Errorf("salloc session: exit %d, %v, %s%s", code, err, out, errOut)
	}
}
