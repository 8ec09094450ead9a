//go:build !noreport

package main

import (
	"encoding/csv"
	"encoding/json"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/migadvisor/migadvisor/advisor/app/report"
)

// A workload of the user's own (tagged by track) gets the generic table from
// the dev cluster's real accounting: job 2 ran 7 s on 1g.10gb.
func TestDocsGenericTableForAUsersWorkload(t *testing.T) {
	isolate(t)
	dir := t.TempDir()
	db := filepath.Join(dir, "history.db")
	t.Setenv("MIGADVISOR_DB", db)
	mustRunCLI(t, "collect", "--sacct-file", "../../testdata/sacct/devcluster-22.05.psv")
	mustRunCLI(t, "track", "--cluster", "migdev", "--workload", "my solver/v2", example+"pytorch_mnist.sh", "2")
	out := mustRunCLI(t, "docs", "--out", filepath.Join(dir, "site"), "--format", "md", "--json")
	var done []report.WrittenSummary
	if err := json.Unmarshal([]byte(out), &done); err != nil || len(done) != 1 || done[0].Table != "generic" || done[0].Runs != 1 {
		t.Fatalf("docs: %v %s", err, out)
	}
	// No tag with a space or a / is a file name: the tag made one, with its hash.
	name := strings.TrimSuffix(filepath.Base(done[0].Files[0]), ".csv")
	if !regexp.MustCompile(`^my_solver_v2-[0-9a-f]{8}$`).MatchString(name) {
		t.Errorf("the files of \"my solver/v2\" are named %s", name)
	}
	f, err := os.Open(filepath.Join(dir, "site", name+".csv"))
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	rows, err := csv.NewReader(f).ReadAll()
	if err != nil {
		t.Fatal(err)
	}
	want := [][]string{
		{"Profile", "Runs", "Outcome", "Runtime (s)", "Peak GPU Memory (GiB)", "SU Rate (/hr)", "SU"},
		{"1g.10gb", "1", "completed", "7.0", "", "3", "0.00583"},
	}
	if strings.Join(rows[0], ",") != strings.Join(want[0], ",") || strings.Join(rows[1], ",") != strings.Join(want[1], ",") {
		t.Errorf("CSV %q, want %q", rows, want)
	}
	page, _ := os.ReadFile(filepath.Join(dir, "site", name+".md"))
	index, _ := os.ReadFile(filepath.Join(dir, "site", "index.md"))
	if !strings.Contains(string(page), "| 1g.10gb |    1 | completed |") || !strings.Contains(string(index), "[my solver/v2]("+name+".md)") {
		t.Errorf("page:\n%s\nindex:\n%s", page, index)
	}
}

func TestDocsRefusesBadInput(t *testing.T) {
	isolate(t)
	dir := t.TempDir()
	t.Setenv("MIGADVISOR_DB", filepath.Join(dir, "history.db"))
	for _, tc := range []struct {
		args []string
		code int
		msg  string
	}{
		{[]string{"docs"}, exitUsage, "docs needs --out DIR"},
		{[]string{"docs", "--out", dir, "--format", "html"}, exitUsage, `--format: "html" is not one of csv, md, mkdocs`},
		{[]string{"docs", "--out", dir}, exitFailure, "no history at"},
	} {
		_, errOut, code := migadvisor(t, tc.args...)
		if code != tc.code || !strings.Contains(errOut, tc.msg) {
			t.Errorf("%v: exit %d, %q; want %d and %q", tc.args, code, errOut, tc.code, tc.msg)
		}
	}
	mustRunCLI(t, "collect", "--sacct-file", "../../testdata/sacct/devcluster-22.05.psv")
	if _, errOut, code := migadvisor(t, "docs", "--out", dir); code != exitFailure || !strings.Contains(errOut, "has no jobs tagged with a workload") {
		t.Errorf("an untagged history: exit %d, %q", code, errOut)
	}
	if _, errOut, code := migadvisor(t, "docs", "--out", dir, "--workloads", "nope"); code != exitUsage || !strings.Contains(errOut, `no jobs tagged "nope"`) {
		t.Errorf("an unknown workload: exit %d, %q", code, errOut)
	}
}

func TestBenchmarkWriteAndList(t *testing.T) {
	isolate(t)
	dir := t.TempDir()
	out := mustRunCLI(t, "benchmark", "write", "--out", dir, "--workloads", "pytorch_cifar10_resnet,gromacs_performance",
		"--synthetic", "--gmx", "/opt/gmx 2024/bin/gmx", "--json")
	var written []struct{ Workload, Tag, Job string }
	if err := json.Unmarshal([]byte(out), &written); err != nil || len(written) != 2 || written[0].Tag != "pytorch_cifar10_resnet@synthetic" {
		t.Fatalf("benchmark write: %v %s", err, out)
	}
	job, _ := os.ReadFile(written[1].Job)
	if !strings.Contains(string(job), "#SBATCH --gres=gpu:a100:1\n") || !strings.Contains(string(job), "export GMX='/opt/gmx 2024/bin/gmx'") {
		t.Errorf("the GROMACS job asks for Wulver's whole A100 and names the gmx given:\n%s", job)
	}
	var list struct {
		Workloads []struct{ Name, Needs string }
	}
	if err := json.Unmarshal([]byte(mustRunCLI(t, "benchmark", "list", "--json")), &list); err != nil || len(list.Workloads) != 5 {
		t.Errorf("benchmark list: %v %+v", err, list)
	}
	for _, args := range [][]string{{"benchmark", "run", "--workloads", "nope"}, {"benchmark", "list", "--suite", "mars"},
		{"benchmark", "run", "--profiles", "7g.80gb", "--workloads", "llm-finetuning"}} {
		if _, errOut, code := migadvisor(t, args...); code != exitUsage {
			t.Errorf("%v: exit %d, %q", args, code, errOut)
		}
	}
}

// A mkdocs page reads its table from the CSV docs wrote, wherever that is:
// beside the page, or in --csv-dir.
func TestDocsPagesReadTheCSVTheyWrote(t *testing.T) {
	isolate(t)
	dir := t.TempDir()
	t.Setenv("MIGADVISOR_DB", filepath.Join(dir, "history.db"))
	mustRunCLI(t, "collect", "--sacct-file", "../../testdata/sacct/devcluster-22.05.psv")
	mustRunCLI(t, "track", "--cluster", "migdev", "--workload", "mine", example+"pytorch_mnist.sh", "2")
	csvPath := regexp.MustCompile(`pd\.read_csv\("([^"]+)"\)`)
	for _, extra := range [][]string{nil, {"--csv-dir", filepath.Join(dir, "tables")}} {
		out := filepath.Join(dir, "site")
		mustRunCLI(t, append([]string{"docs", "--out", out, "--format", "mkdocs"}, extra...)...)
		page, err := os.ReadFile(filepath.Join(out, "mine.md"))
		m := csvPath.FindSubmatch(page)
		if err != nil || m == nil {
			t.Fatalf("%v: no read_csv in the page (%v):\n%s", extra, err, page)
		}
		if _, err := os.Stat(string(m[1])); err != nil {
			t.Errorf("%v: the page reads %s, which docs did not write: %v", extra, m[1], err)
		}
	}
}
