package main

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/migadvisor/migadvisor/advisor"
	"github.com/migadvisor/migadvisor/advisor/app/joblist"
	"github.com/migadvisor/migadvisor/advisor/base/memory"
)

// A site that runs jobstats: two runs of a script on a full A100 whose
// summaries (testdata/jobstats/full-3gib.psv: 3 and 3.2 GiB in use, 35%
// busy) are all the evidence. The script runs python and nothing shows a
// compiled code, so recommend reads their peaks as a ceiling of the need,
// as jobstats sampled them (the share of a slice kept free is their
// margin), judges every slice a low risk and says the memory was measured
// by jobstats; history lists the peaks' source.
func TestRecommendFromJobstats(t *testing.T) {
	isolate(t)
	t.Setenv("MIGADVISOR_DB", filepath.Join(t.TempDir(), "history.db"))
	dir := t.TempDir()
	script := filepath.Join(dir, "job.sh")
	os.WriteFile(script, []byte("#!/bin/bash\n#SBATCH -p gpu\n#SBATCH --gres=gpu:a100:1\n#SBATCH --time=1:00:00\n#SBATCH --mem=16G\n#SBATCH -c 4\npython train.py\n"), 0o644)
	text, errOut, code := migadvisor(t, "collect", "--sacct-file", "testdata/jobstats/full-3gib.psv", "--cluster", "wulver")
	if code != 0 || !strings.Contains(text, "jobstats: GPU figures of 2 jobs read from AdminComment") {
		t.Fatalf("collect: exit %d: %s%s", code, text, errOut)
	}
	if _, errOut, code = migadvisor(t, "track", "--cluster", "wulver", script, "501", "502"); code != 0 {
		t.Fatalf("track: exit %d: %s", code, errOut)
	}
	text, errOut, code = migadvisor(t, "recommend", script)
	if code != 0 || !strings.Contains(text, "2 runs in the history; basis: predicted, GPU memory measured (jobstats)") {
		t.Fatalf("recommend: exit %d: %s%s", code, text, errOut)
	}
	text, _, _ = migadvisor(t, "recommend", "--json", script)
	var rec advisor.Recommendation
	if err := json.Unmarshal([]byte(text), &rec); err != nil || rec.GPUMemCeiling == nil {
		t.Fatalf("recommend --json: %v: %s", err, text)
	}
	// 3 GiB, the lesser peak of a ceiling, as jobstats saw it.
	if n := rec.GPUMemCeiling; rec.GPUMemNeed != nil || n.By != memory.MeasuredByJobstats || n.SeenMiB != 3072 || n.MiB != 3072 ||
		rec.GPUMemHolder == nil || rec.GPUMemHolder.Kind != memory.HolderInterpreted {
		t.Errorf("the need %+v, its ceiling %+v, held by %+v", rec.GPUMemNeed, n, rec.GPUMemHolder)
	}
	for _, pa := range rec.Profiles {
		if pa.OOMRisk != memory.RiskLow {
			t.Errorf("%s: risk %s (%s)", pa.Profile, pa.OOMRisk, pa.OOMRiskReason)
		}
	}
	text, _, _ = migadvisor(t, "history", "--json", script)
	if !strings.Contains(text, `"gpu_mem_source": "jobstats"`) || !strings.Contains(text, `"gpu_mem_peaks": {`) || !strings.Contains(text, `"jobstats": 3276.8`) {
		t.Errorf("history --json: %s", text)
	}
}

// Every source's peak is in history --json: jobstats' summary and the
// framework's own allocated peak, printed in the job's output; and
// --site-store off, in any case, reaches for no store, even one the site
// file names.
func TestHistoryListsEveryPeak(t *testing.T) {
	isolate(t)
	t.Setenv("MIGADVISOR_DB", filepath.Join(t.TempDir(), "history.db"))
	site, _ := os.ReadFile("../../catalog/sites/wulver.toml")
	siteFile := filepath.Join(t.TempDir(), "site.toml")
	os.WriteFile(siteFile, append(site, []byte("\n[history]\nsite_store = \"/nonexistent/site-store.cnf\"\n")...), 0o644)
	t.Setenv("MIGADVISOR_SITE", siteFile)
	outputs := t.TempDir()
	os.WriteFile(filepath.Join(outputs, "slurm-501.out"), []byte("MIGADVISOR_METRIC peak_allocated_mib 2048\n"), 0o644)
	text, errOut, code := migadvisor(t, "collect", "--sacct-file", "testdata/jobstats/full-3gib.psv", "--cluster", "wulver",
		"--outputs", outputs, "--all-users", "--scripts=false", "--site-store", "OFF")
	if code != 0 || strings.Contains(text+errOut, "site store") {
		t.Fatalf("collect --site-store OFF: exit %d: %s%s", code, text, errOut)
	}
	text, _, _ = migadvisor(t, "history", "--json")
	var jobs []joblist.JobEntry
	if err := json.Unmarshal([]byte(text), &jobs); err != nil {
		t.Fatalf("%v: %s", err, text)
	}
	found := false
	for _, h := range jobs {
		if h.JobID != "501" {
			continue
		}
		found = true
		if h.GPUMemPeaks["framework"] != 2048 || h.GPUMemPeaks["jobstats"] != 3072 || *h.GPUMemSource != "jobstats" {
			t.Errorf("job 501: peaks %v, source %v", h.GPUMemPeaks, h.GPUMemSource)
		}
	}
	if !found {
		t.Errorf("no job 501 in %s", text)
	}
}
