package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// The plain flow of a script that fails on every profile (a Python import
// that fails): recommend says it fails whatever the profile, names the
// output file as it sits in the job's directory and its first error line,
// and proposes no probe.
func TestRecommendSaysAScriptFailsWhateverTheProfile(t *testing.T) {
	isolate(t)
	dir := t.TempDir()
	t.Setenv("MIGADVISOR_DB", filepath.Join(dir, "history.db"))
	script := filepath.Join(dir, "fail.sh")
	os.WriteFile(script, []byte("#!/bin/bash\n#SBATCH --gres=gpu:a100:1\n#SBATCH --output=logs/out-%j.txt\npython3 -c 'import not_a_module'\n"), 0o644)
	os.MkdirAll(filepath.Join(dir, "logs"), 0o755)
	var rows strings.Builder
	rows.WriteString("JobIDRaw|JobID|Cluster|User|State|ExitCode|Submit|Start|End|NNodes|AllocCPUS|ReqMem|AllocTRES|JobName|WorkDir\n")
	for i, gres := range []string{"a100_10g", "a100_20g", "a100_40g", "a100"} {
		id := string(rune('1'+i)) + "0"
		rows.WriteString(id + "|" + id + "|migdev|carol|FAILED|1:0|2026-11-20T0" + id[:1] + ":00:00|2026-11-20T0" + id[:1] + ":00:01|2026-11-20T0" + id[:1] +
			":00:03|1|1|4G|cpu=1,gres/gpu:" + gres + "=1,gres/gpu=1,mem=4G,node=1|fail.sh|" + dir + "\n")
		os.WriteFile(filepath.Join(dir, "logs", "out-"+id+".txt"), []byte("starting\nTraceback (most recent call last):\n  File \"<string>\", line 1, in <module>\nModuleNotFoundError: No module named 'not_a_module'\n"), 0o644)
	}
	dump := filepath.Join(dir, "sacct.psv")
	os.WriteFile(dump, []byte(rows.String()), 0o644)
	mustRunCLI(t, "track", script, "10", "20", "30", "40")
	mustRunCLI(t, "collect", "--sacct-file", dump)
	text, errOut, code := migadvisor(t, "recommend", script)
	want := "no recommendation: the script fails whatever the profile: it failed on 1g.10gb, 2g.20gb, 3g.40gb and full, and no run completed; job 40 failed with exit code 1 after 00:00:02; logs/out-40.txt line 4: ModuleNotFoundError: No module named 'not_a_module'; fix the script before measuring it"
	if code != 0 || !strings.Contains(text, want) || strings.Contains(text, "next:") {
		t.Errorf("exit %d:\n%s%s\nwant %s", code, text, errOut, want)
	}
}
