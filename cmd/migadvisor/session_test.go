package main

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// sessionAdvice is recommend --session --json as Open OnDemand's form
// reads it: these names are an interface.
type sessionAdvice struct {
	Session        string   `json:"session"`
	Sessions       int      `json:"sessions"`
	WithMemory     int      `json:"with_memory"`
	PeakMiB        *float64 `json:"peak_gpu_mem_mib"`
	Need           string   `json:"need"`
	Asked          string   `json:"asked"`
	AskedSUPerHour *float64 `json:"asked_su_per_hour"`
	Recommended    string   `json:"recommended"`
	GRES           string   `json:"gres"`
	SUPerHour      *float64 `json:"su_per_hour"`
	Help           string   `json:"help"`
	Why            string   `json:"why"`
	Profiles       []struct {
		Profile   string  `json:"profile"`
		OOMRisk   string  `json:"oom_risk"`
		SUPerHour float64 `json:"su_per_hour"`
	} `json:"profiles"`
}

// sessionsDump is an accounting dump of OnDemand Jupyter sessions of user
// on a whole A100 (4 CPUs, 16G), each held until its time limit, and one
// of another user's; the monitor ran in each of user's, its line in the
// session's output: peakMiB.
func sessionsDump(t *testing.T, dir, who string, peakMiB int) string {
	t.Helper()
	var b strings.Builder
	b.WriteString("JobIDRaw|JobID|Cluster|User|State|ExitCode|Submit|Start|End|NNodes|AllocCPUS|ReqMem|AllocTRES|JobName|WorkDir|Partition\n")
	for i, u := range []string{who, who, who, who, who, "bob"} {
		id, day := fmt.Sprint(70+i), fmt.Sprintf("%02d", 10+i)
		fmt.Fprintf(&b, "%s|%s|migdev|%s|TIMEOUT|0:0|2026-11-%sT09:00:00|2026-11-%sT09:01:00|2026-11-%sT11:01:00|1|4|16G|"+
			"cpu=4,gres/gpu:a100=1,gres/gpu=1,mem=16G,node=1|sys/dashboard/sys/jupyter|%s|gpu\n", id, id, u, day, day, day, dir)
		line := fmt.Sprintf("MIGADVISOR_GPU peak_mib=%d used_peak_mib=%d total_mib=81559 samples=14400 scope=tree util=mean:3,max:41 "+
			"device=NVIDIA A100-SXM4-80GB\n", peakMiB, peakMiB+400)
		if u == "bob" {
			line = strings.Replace(line, fmt.Sprint(peakMiB), "70000", 1)
		}
		os.WriteFile(filepath.Join(dir, "slurm-"+id+".out"), []byte("[I 09:01:10 ServerApp] Jupyter Server is running\n"+line), 0o644)
	}
	dump := filepath.Join(dir, "sacct.psv")
	if err := os.WriteFile(dump, []byte(b.String()), 0o644); err != nil {
		t.Fatal(err)
	}
	return dump
}

// What recommend --session prints, in text and JSON, with sessions and
// with none of the name (the names to mean), and history --sessions and
// --scripts, are TestGolden's (testdata/recommend/session*,
// testdata/history/sessions*, testdata/history/scripts*).

// A session has no script and cannot be probed.
func TestRecommendSessionUsage(t *testing.T) {
	isolate(t)
	for _, args := range [][]string{
		{"recommend", "--session", "interactive", "job.sh"},
		{"recommend", "--session", ""},
		{"recommend", "--session", "interactive", "--probe"},
	} {
		if _, errOut, code := migadvisor(t, args...); code != 2 || !strings.Contains(errOut, "session") {
			t.Errorf("%v: exit %d, %s", args, code, errOut)
		}
	}
	db := filepath.Join(t.TempDir(), "none.db")
	t.Setenv("MIGADVISOR_DB", db)
	out, _, code := migadvisor(t, "recommend", "--session", "interactive")
	if code != 0 || !strings.Contains(out, "no recommendation: no ended session named interactive of user") || !strings.Contains(out, "in the history at "+db+":") {
		t.Errorf("no history: exit %d\n%s", code, out)
	}
}
