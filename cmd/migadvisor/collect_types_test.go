package main

import (
	"encoding/json"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/migadvisor/migadvisor/advisor/app/joblist"
	"github.com/migadvisor/migadvisor/catalog"
)

// spellingsDump is a dump in jobstats' own sacct fields (epoch times, no
// Elapsed column) whose GPU types are spelled as AutoDetect=nvml and
// hand-written gres.conf files spell them, two of them on an H100 slice
// (its README says which job is which).
const spellingsDump = "../../advisor/app/collect/testdata/spellings/jobstats-format.psv"

// wulverWith is the built-in Wulver site file with after inserted after
// the line that starts with at, written to a file MIGADVISOR_SITE names.
func wulverWith(t *testing.T, at, after string) string {
	t.Helper()
	site, err := os.ReadFile("../../catalog/sites/wulver.toml")
	if err != nil {
		t.Fatal(err)
	}
	i := strings.Index(string(site), at)
	if i < 0 {
		t.Fatalf("no %q in wulver.toml", at)
	}
	i += strings.IndexByte(string(site[i:]), '\n') + 1
	file := filepath.Join(t.TempDir(), "site.toml")
	if err := os.WriteFile(file, []byte(string(site[:i])+after+string(site[i:])), 0o644); err != nil {
		t.Fatal(err)
	}
	t.Setenv("MIGADVISOR_SITE", file)
	return file
}

func historyJobs(t *testing.T) map[string]joblist.JobEntry {
	t.Helper()
	text, errOut, code := migadvisor(t, "history", "--json")
	var jobs []joblist.JobEntry
	if err := json.Unmarshal([]byte(text), &jobs); code != 0 || err != nil {
		t.Fatalf("history --json: exit %d, %v: %s%s", code, err, text, errOut)
	}
	byID := map[string]joblist.JobEntry{}
	for _, j := range jobs {
		byID[j.JobID] = j
	}
	return byID
}

// The plain flow, no cluster named: collect files a jobstats-format dump
// with every A100 spelling on Wulver's profiles, each job timed by End −
// Start and priced (the 14-hour job with its 77.6 GiB peak too); names the
// H100 type it could not place with its jobs, in its summary and --json;
// counts the one summary of five that held GPU figures (those two
// TestGolden's); and report prices the same jobs, the H100 ones alone
// unknown.
func TestCollectNamesTheGPUTypesItCouldNotPlace(t *testing.T) {
	isolate(t)
	t.Setenv("MIGADVISOR_DB", filepath.Join(t.TempDir(), "history.db"))
	// What collect says of it, in text and --json, is TestGolden's
	// (testdata/collect/spellings*).
	mustRunCLI(t, "collect", "--sacct-file", spellingsDump)
	jobs := historyJobs(t)
	var gpuSU float64
	unplaced := 0
	for id, j := range jobs {
		if j.ElapsedS == nil || j.Start == nil || j.End == nil || *j.ElapsedS != int64(j.End.Sub(*j.Start).Seconds()) {
			t.Errorf("job %s: elapsed %v from %v to %v", id, j.ElapsedS, j.Start, j.End)
		}
		switch {
		case j.GPUCount == 0:
		case strings.Contains(j.GPUType, "h100"):
			unplaced++
			if j.Profile != nil || j.SU != nil {
				t.Errorf("job %s on %s: profile %v, SU %v", id, j.GPUType, j.Profile, j.SU)
			}
		case j.Profile == nil || j.SU == nil || *j.SU <= 0:
			t.Errorf("job %s on %s: profile %v, SU %v", id, j.GPUType, j.Profile, j.SU)
		default:
			gpuSU += *j.SU
		}
	}
	if j := jobs["7001"]; j.Profile == nil || *j.Profile != "full" || j.GPUMemPeakMiB == nil || *j.GPUMemPeakMiB < 77*1024 || *j.ElapsedS != 14*3600 {
		t.Errorf("the 14-hour job: %+v", j)
	}

	text, errOut, code := migadvisor(t, "report", "--json", "--since", "2025-11-01", "--until", "2025-12-01")
	var sav struct {
		Total struct {
			Jobs int
			SU   float64
		}
		Profiles []struct {
			Profile string
			Jobs    int
		}
	}
	if err := json.Unmarshal([]byte(text), &sav); code != 0 || err != nil {
		t.Fatalf("report: exit %d, %v: %s%s", code, err, text, errOut)
	}
	wulver, err := catalog.Builtin("wulver")
	if err != nil {
		t.Fatal(err)
	}
	unknown := 0
	for _, p := range sav.Profiles {
		if !slices.Contains(wulver.ProfileNames(), p.Profile) {
			unknown += p.Jobs
		}
	}
	if unknown != unplaced || sav.Total.SU != gpuSU {
		t.Errorf("report: %d jobs of no profile (collect named %d), %g SU (history %g)", unknown, unplaced, sav.Total.SU, gpuSU)
	}
}

// The line's remedy works: a gres_types alias in the site file, in any
// case, places the type, and collect names no type; two profiles claiming
// one name (a100_20g is 2g.20gb's) is an error naming the line.
func TestCollectPlacesTheSiteFilesAliases(t *testing.T) {
	isolate(t)
	t.Setenv("MIGADVISOR_DB", filepath.Join(t.TempDir(), "history.db"))
	wulverWith(t, `request = "--gres=gpu:a100_10g:1"`, `gres_types = ["NVIDIA_H100_1G.10GB"]`+"\n")
	text, errOut, code := migadvisor(t, "collect", "--sacct-file", spellingsDump)
	if code != 0 || strings.Contains(text, "does not name") {
		t.Fatalf("collect: exit %d: %s%s", code, text, errOut)
	}
	for _, id := range []string{"7009", "7010"} {
		if j := historyJobs(t)[id]; j.Profile == nil || *j.Profile != "1g.10gb" || j.SU == nil {
			t.Errorf("job %s: profile %v, SU %v", id, j.Profile, j.SU)
		}
	}

	file := wulverWith(t, `request = "--gres=gpu:a100_10g:1"`, `gres_types = ["A100-20G"]`+"\n")
	site, _ := os.ReadFile(file)
	line := strings.Count(string(site[:strings.Index(string(site), "gres_types")]), "\n") + 1
	text, errOut, code = migadvisor(t, "collect", "--sacct-file", spellingsDump)
	want := file + ":" + strconv.Itoa(line) + `: profiles "2g.20gb" and "1g.10gb" both use GPU type`
	if code == 0 || !strings.Contains(errOut, want) {
		t.Errorf("collect with a name claimed twice: exit %d, want %q: %s%s", code, want, text, errOut)
	}
}

// A job on a GPU of no type, where the site file gives untyped GPUs no
// profile, is said apart, with its remedy.
func TestCollectNamesUntypedGPUs(t *testing.T) {
	isolate(t)
	t.Setenv("MIGADVISOR_DB", filepath.Join(t.TempDir(), "history.db"))
	site, err := os.ReadFile("../../catalog/sites/wulver.toml")
	if err != nil {
		t.Fatal(err)
	}
	file := filepath.Join(t.TempDir(), "site.toml")
	os.WriteFile(file, []byte(strings.Replace(string(site), "untyped_gpu = ", "# untyped_gpu = ", 1)), 0o644)
	t.Setenv("MIGADVISOR_SITE", file)
	dump := filepath.Join(t.TempDir(), "dump.psv")
	os.WriteFile(dump, []byte("JobIDRaw|State|ElapsedRaw|AllocTRES|JobName\n1|COMPLETED|60|cpu=1,gres/gpu=1|a\n2|COMPLETED|60|cpu=1,gres/gpu=2|b\n"), 0o644)
	text, errOut, code := migadvisor(t, "collect", "--sacct-file", dump)
	want := "2 jobs on GPUs of no type, which this site file gives no profile: set untyped_gpu in the site file\n"
	if code != 0 || !strings.Contains(text, want) || strings.Contains(text, "does not name") {
		t.Errorf("collect: exit %d, want %q: %s%s", code, want, text, errOut)
	}
}
