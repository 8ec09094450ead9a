package main

import (
	"encoding/json"
	"fmt"
	"os"
	"os/user"
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

// The plain flow: sessions collected from accounting and their outputs,
// then recommend --session in text and JSON; a name with no session is
// one sentence and exit 0.
func TestRecommendSession(t *testing.T) {
	isolate(t)
	dir := t.TempDir()
	t.Setenv("MIGADVISOR_DB", filepath.Join(dir, "history.db"))
	me, err := user.Current()
	if err != nil {
		t.Fatal(err)
	}
	mustRunCLI(t, "collect", "--sacct-file", sessionsDump(t, dir, me.Username, 2970), "--outputs", dir)

	text := mustRunCLI(t, "recommend", "--session", "sys/dashboard/sys/jupyter")
	for _, want := range []string{
		"sessions named sys/dashboard/sys/jupyter of " + me.Username + " on wulver: 5 ended sessions, 5 with GPU memory evidence\n",
		"the newest asked for full with 4 CPUs and 16.0 GiB of memory: 20 SU per hour held\n",
		"recommend 1g.10gb: your last 5 sessions peaked at 2.9 GiB: 1g.10gb is enough, 6 SU/h instead of 20\n",
		"change: choose 1g.10gb in the form of sys/dashboard/sys/jupyter in place of full (it asks Slurm for --gres=gpu:a100_10g:1)\n",
		"priced: SU per hour held",
	} {
		if !strings.Contains(text, want) {
			t.Errorf("no %q in:\n%s", want, text)
		}
	}

	var adv sessionAdvice
	if err := json.Unmarshal([]byte(mustRunCLI(t, "recommend", "--session", "sys/dashboard/sys/jupyter", "--json")), &adv); err != nil {
		t.Fatal(err)
	}
	if adv.Session != "sys/dashboard/sys/jupyter" || adv.Sessions != 5 || adv.WithMemory != 5 || adv.PeakMiB == nil || *adv.PeakMiB != 2970 ||
		adv.Need != "2.9 GiB" || adv.Asked != "full" || *adv.AskedSUPerHour != 20 || adv.Recommended != "1g.10gb" || adv.GRES != "gpu:a100_10g:1" ||
		*adv.SUPerHour != 6 || adv.Help != "your last 5 sessions peaked at 2.9 GiB: 1g.10gb is enough, 6 SU/h instead of 20" || adv.Why != "" ||
		len(adv.Profiles) != 4 || adv.Profiles[3].Profile != "full" || adv.Profiles[3].SUPerHour != 20 || adv.Profiles[0].OOMRisk != "low" {
		t.Errorf("--json: %+v", adv)
	}

	out, errOut, code := migadvisor(t, "recommend", "--session", "sys/dashboard/sys/rstudio", "--json")
	adv = sessionAdvice{}
	if err := json.Unmarshal([]byte(out), &adv); code != 0 || errOut != "" || err != nil || adv.Recommended != "" || adv.SUPerHour != nil ||
		!strings.HasPrefix(adv.Why, "no ended session named sys/dashboard/sys/rstudio of user "+me.Username+" in the history at ") {
		t.Errorf("no session: exit %d, %v, %s%s", code, err, out, errOut)
	}
}

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

// A mistyped session name is answered with the names the user's sessions
// took, and 'history --sessions' lists them, in text and JSON; 'history
// --scripts' lists the scripts their jobs are linked to.
func TestSessionNamesAreSuggestedAndListed(t *testing.T) {
	isolate(t)
	dir := t.TempDir()
	t.Setenv("MIGADVISOR_DB", filepath.Join(dir, "history.db"))
	me, err := user.Current()
	if err != nil {
		t.Fatal(err)
	}
	mustRunCLI(t, "collect", "--sacct-file", sessionsDump(t, dir, me.Username, 2970), "--outputs", dir)

	text := mustRunCLI(t, "recommend", "--session", "jupyterlb")
	if want := ": did you mean sys/dashboard/sys/jupyter (5 sessions)? 'migadvisor history --sessions' lists the names of yours\n"; !strings.HasSuffix(text, want) {
		t.Errorf("recommend --session jupyterlb:\n%s\nwant the end %q", text, want)
	}
	var adv struct {
		DidYouMean []string `json:"did_you_mean"`
	}
	if err := json.Unmarshal([]byte(mustRunCLI(t, "recommend", "--session", "jupyterlb", "--json")), &adv); err != nil ||
		strings.Join(adv.DidYouMean, ",") != "sys/dashboard/sys/jupyter" {
		t.Errorf("--json: %v %+v", err, adv)
	}

	text = mustRunCLI(t, "history", "--sessions")
	if !strings.HasPrefix(text, "SESSION ") || !strings.Contains(text, "\nsys/dashboard/sys/jupyter  5         5            full") ||
		!strings.HasSuffix(text, "next: migadvisor recommend --session sys/dashboard/sys/jupyter\n") {
		t.Errorf("history --sessions:\n%s", text)
	}
	var names []struct {
		Session  string   `json:"session"`
		Sessions int      `json:"sessions"`
		Profiles []string `json:"profiles"`
		Kind     string   `json:"kind"`
	}
	if err := json.Unmarshal([]byte(mustRunCLI(t, "history", "--sessions", "--json")), &names); err != nil || len(names) != 1 ||
		names[0].Session != "sys/dashboard/sys/jupyter" || names[0].Sessions != 5 || names[0].Kind != "ondemand" {
		t.Errorf("history --sessions --json: %v %+v", err, names)
	}

	out, errOut, code := migadvisor(t, "history", "--scripts", "--json")
	if code != 0 || out != "[]\n" || !strings.Contains(errOut, "no script of "+me.Username+" has jobs in the history at ") {
		t.Errorf("history --scripts --json, none: exit %d %q %q", code, out, errOut)
	}
	script := filepath.Join(dir, "job.sh")
	os.WriteFile(script, []byte("#!/bin/bash\n#SBATCH --gres=gpu:a100:1\npython train.py\n"), 0o644)
	mustRunCLI(t, "track", "--cluster", "migdev", script, "70")
	if text := mustRunCLI(t, "history", "--scripts"); !strings.Contains(text, "\n"+script+"  sys/dashboard/sys/jupyter  1     full") ||
		!strings.HasSuffix(text, "next: migadvisor recommend "+script+"\n") {
		t.Errorf("history --scripts:\n%s", text)
	}
	for _, args := range [][]string{{"history", "--scripts", "--sessions"}, {"history", "--sessions", script}} {
		if _, errOut, code := migadvisor(t, args...); code != 2 {
			t.Errorf("%v: exit %d %s", args, code, errOut)
		}
	}
}
