//go:build slurm

package main

import (
	"bytes"
	"compress/gzip"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"os/exec"
	"strings"
	"testing"
	"time"

	"github.com/migadvisor/migadvisor/advisor"
	"github.com/migadvisor/migadvisor/advisor/app/joblist"
	"github.com/migadvisor/migadvisor/advisor/base/memory"
)

// jobstatsField is the AdminComment jobstats' slurmctld epilog writes for
// a job on one GPU of totalMiB that used usedMiB at most: "JS1:" and the
// base64 of its gzipped JSON (jobstats' docs/setup/summaries.md).
func jobstatsField(t *testing.T, usedMiB, totalMiB, util float64) string {
	t.Helper()
	js := fmt.Sprintf(`{"gpus":1,"nodes":{"vm":{"cpus":1,"gpu_total_memory":{"0":%d},"gpu_used_memory":{"0":%d},"gpu_utilization":{"0":%g},"total_memory":67108864,"total_time":3.0,"used_memory":1048576}},"total_time":4}`,
		int64(totalMiB)<<20, int64(usedMiB)<<20, util)
	var b bytes.Buffer
	zw := gzip.NewWriter(&b)
	zw.Write([]byte(js))
	zw.Close()
	return "JS1:" + base64.StdEncoding.EncodeToString(b.Bytes())
}

// A site that runs jobstats, for real: two jobs of a script on a full A100,
// each given its summary (3 GiB in use) while it runs, as jobstats'
// slurmctld epilog does at its end (22.05's sacctmgr would lowercase it);
// slurmdbd keeps it, collect reads it from sacct, and recommend judges
// every slice by it: GPU memory measured (jobstats), 1g.10gb a low risk
// and the slice to use; the admins' report lists the script with the SU
// 1g.10gb would have saved.
func TestSlurmJobstatsFromAccounting(t *testing.T) {
	work := slurmWorkDir(t)
	script := writeScript(t, work, "train.sh", "#!/bin/bash\n#SBATCH --gres=gpu:a100:1\n#SBATCH --mem=64M -t 2\nsleep 4\n")
	var ids []string
	for _, used := range []float64{3072, 2900} {
		out, err := exec.Command("sbatch", "--parsable", script).Output()
		if err != nil {
			t.Fatal(err)
		}
		id := strings.TrimSpace(string(out))
		ids = append(ids, id)
		deadline := time.Now().Add(30 * time.Second)
		for {
			state, _ := exec.Command("squeue", "-h", "-j", id, "-o", "%T").Output()
			if strings.TrimSpace(string(state)) == "RUNNING" || time.Now().After(deadline) {
				break
			}
			time.Sleep(200 * time.Millisecond)
		}
		if out, err := exec.Command("scontrol", "update", "jobid="+id, "AdminComment="+jobstatsField(t, used, 81920, 40)).CombinedOutput(); err != nil {
			t.Fatalf("scontrol update %s: %v: %s", id, err, out)
		}
	}
	mustRun(t, append([]string{"track", script}, ids...)...)
	mustRun(t, append([]string{"wait", "--timeout", "1m"}, ids...)...)
	var hist []joblist.JobEntry
	if err := json.Unmarshal([]byte(mustRun(t, "history", script, "--json")), &hist); err != nil || len(hist) != 2 {
		t.Fatalf("history: %v %s", err, dump(hist))
	}
	for _, h := range hist {
		if h.GPUMemSource == nil || *h.GPUMemSource != "jobstats" || h.GPUMemPeaks["jobstats"] < 2900 {
			t.Errorf("job %s: %s", h.JobID, dump(h))
		}
	}
	text := mustRun(t, "recommend", script)
	if !strings.Contains(text, "2 runs in the history; basis: predicted, GPU memory measured (jobstats)") {
		t.Errorf("recommend:\n%s", text)
	}
	var rec advisor.Recommendation
	if err := json.Unmarshal([]byte(mustRun(t, "recommend", "--json", script)), &rec); err != nil {
		t.Fatal(err)
	}
	for _, pa := range rec.Profiles {
		if pa.Profile == "1g.10gb" && pa.OOMRisk != memory.RiskLow {
			t.Errorf("1g.10gb: %s (%s)", pa.OOMRisk, pa.OOMRiskReason)
		}
	}
	// 1 CPU and 64M: the GPU is most of the price, and 3 GiB at 40% busy
	// costs least on the smallest slice.
	if rec.Recommended == nil || *rec.Recommended != "1g.10gb" {
		t.Errorf("recommended %v: %s", rec.Recommended, dump(rec))
	}
	// The admin's report lists the script, with the slice that would do and
	// the SU it saves.
	var rep struct {
		Scripts []struct {
			Path        string   `json:"script"`
			Jobs        int      `json:"jobs"`
			RanOn       []string `json:"ran_on"`
			Recommended string   `json:"recommended"`
			MeasuredBy  string   `json:"measured_by"`
			SUSpent     float64  `json:"su_spent"`
			SUSaved     float64  `json:"su_saved"`
		} `json:"scripts"`
	}
	text = mustRun(t, "report", "--since", "1d", "--min-su-saved", "0", "--json")
	if err := json.Unmarshal([]byte(text), &rep); err != nil {
		t.Fatalf("report --json: %v: %s", err, text)
	}
	found := false
	for _, s := range rep.Scripts {
		if s.Path != script {
			continue
		}
		found = true
		if s.Jobs != 2 || strings.Join(s.RanOn, ",") != "full" || s.Recommended != "1g.10gb" || s.MeasuredBy != "jobstats" ||
			s.SUSaved <= 0 || s.SUSaved >= s.SUSpent {
			t.Errorf("report: %+v", s)
		}
	}
	if !found {
		t.Errorf("report does not list %s: %s", script, text)
	}
}
