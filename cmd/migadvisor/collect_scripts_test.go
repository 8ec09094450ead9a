package main

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/migadvisor/migadvisor/advisor/app/sitereplay"
	"github.com/migadvisor/migadvisor/advisor/base/history"
	"github.com/migadvisor/migadvisor/slurm"
)

// The jobs of testdata/sacct/devcluster-scripts.psv, as the dev cluster
// ran them: train.sh twice under two job names (48643 run-a, 48644
// run-b), md.sh's array of two (48645_1, whose JobIDRaw is 48647, and
// 48645_2, whose JobIDRaw is the array's own 48645), and a --wrap job
// (48646); devcluster-batch-scripts.txt is `sacct --batch-script` of them.
const (
	scriptsDump = "../../testdata/sacct/devcluster-scripts.psv"
	scriptsFile = "../../testdata/sacct/devcluster-batch-scripts.txt"
	scriptsOuts = "../../testdata/joboutput/devcluster-scripts"
)

// Away from Slurm, collect --scripts-file links a dump's jobs to the
// scripts a saved `sacct --batch-script` output holds, as --scripts does
// from slurmdbd: the runs of one script under two job names are one
// script, an array's tasks (by either of their ids) one more.
func TestCollectLinksScriptsFromASavedFile(t *testing.T) {
	isolate(t)
	t.Setenv("MIGADVISOR_DB", filepath.Join(t.TempDir(), "history.db"))
	out, errOut, code := migadvisor(t, "collect", "--sacct-file", scriptsDump, "--scripts-file", scriptsFile, "--outputs", scriptsOuts)
	if code != 0 || !strings.Contains(out, "scripts: 5 jobs linked from "+scriptsFile+"\n") {
		t.Fatalf("exit %d\n%s%s", code, out, errOut)
	}
	out, _, _ = migadvisor(t, "history", "--scripts", "--json")
	var scripts []struct {
		Name string `json:"job_name"`
		Jobs int    `json:"jobs"`
	}
	if err := json.Unmarshal([]byte(out), &scripts); err != nil {
		t.Fatalf("history --scripts --json: %v\n%s", err, out)
	}
	jobs := map[int]int{}
	for _, s := range scripts {
		jobs[s.Jobs]++
	}
	if len(scripts) != 3 || jobs[2] != 2 || jobs[1] != 1 {
		t.Errorf("want train.sh's and md.sh's two runs each as one script, and the --wrap job: %+v", scripts)
	}
	// The report reads what a linked script runs from the text collect kept.
	want, err := os.ReadFile(filepath.Join(scriptsOuts, "train.sh"))
	if err != nil {
		t.Fatal(err)
	}
	st, err := history.Open(context.Background(), os.Getenv("MIGADVISOR_DB"))
	if err != nil {
		t.Fatal(err)
	}
	got := st.ScriptText(slurm.Parse("train.sh", want).Fingerprint())
	st.Close()
	if string(got) != string(want) {
		t.Errorf("train.sh's text kept: %q; want %q", got, want)
	}
	// Again: nothing new to link, and the file's scripts are said to match
	// no job unlinked, not left unsaid.
	out, _, code = migadvisor(t, "collect", "--sacct-file", scriptsDump, "--scripts-file", scriptsFile)
	if code != 0 || !strings.Contains(out, "scripts: 0 jobs linked from "+scriptsFile+", 5 scripts in it naming no GPU job of the history that has none linked") {
		t.Errorf("a second collect of the same file: exit %d\n%s", code, out)
	}
}

// A job the file shows with NONE (slurmdbd stored no script) is one with
// no script; a job it says nothing of is left for slurmdbd or another
// file; a file that is no `sacct --batch-script` output is refused by
// name, with nothing linked.
func TestCollectScriptsFileSaysWhatItLacks(t *testing.T) {
	isolate(t)
	dir := t.TempDir()
	t.Setenv("MIGADVISOR_DB", filepath.Join(dir, "history.db"))
	data, err := os.ReadFile(scriptsFile)
	if err != nil {
		t.Fatal(err)
	}
	// 48646's script is NONE, and 48644's is not in the file at all.
	var text string
	for _, block := range strings.SplitAfter(string(data), "\n\nBatch Script for ") {
		switch {
		case strings.Contains(block, "48644\n"):
		case strings.Contains(block, "48646\n"):
			text += "48646\n" + strings.Repeat("-", 80) + "\nNONE\n\nBatch Script for "
		default:
			text += block
		}
	}
	if strings.Contains(text, "48644") || !strings.Contains(text, "48646\n") {
		t.Fatalf("the edit of the captured file went wrong:\n%s", text)
	}
	partial := filepath.Join(dir, "partial.txt")
	os.WriteFile(partial, []byte(text), 0o600)
	out, errOut, code := migadvisor(t, "collect", "--sacct-file", scriptsDump, "--scripts-file", partial, "--json")
	if code != 0 {
		t.Fatalf("exit %d: %s", code, errOut)
	}
	var rep struct {
		Scripts struct {
			Linked, Missing int
			Unread          string `json:"allocations_unknown"`
		} `json:"scripts"`
	}
	if err := json.Unmarshal([]byte(out), &rep); err != nil {
		t.Fatal(err)
	}
	if s := rep.Scripts; s.Linked != 3 || s.Missing != 1 || s.Unread == "" {
		t.Errorf("linked %d (want 3), missing %d (want 48646's), kinds unread %q (a file cannot tell an allocation)", s.Linked, s.Missing, s.Unread)
	}
	// 48644, which the file did not name, is linked by a file that does.
	out, _, _ = migadvisor(t, "collect", "--sacct-file", scriptsDump, "--scripts-file", scriptsFile)
	if !strings.Contains(out, "scripts: 1 job linked from ") {
		t.Errorf("the job the first file left out:\n%s", out)
	}

	table := filepath.Join(dir, "table.txt")
	os.WriteFile(table, []byte("JobID|JobName|State\n71|twin|COMPLETED\n"), 0o600)
	if _, errOut, code := migadvisor(t, "collect", "--sacct-file", scriptsDump, "--scripts-file", table); code == 0 ||
		!strings.Contains(errOut, table+": no \"Batch Script for\" header") {
		t.Errorf("a table for scripts: exit %d, %q", code, errOut)
	}
	if _, errOut, code := migadvisor(t, "collect", "--sacct-file", scriptsDump, "--scripts-file", scriptsFile, "--scripts=false"); code != 2 ||
		!strings.Contains(errOut, "--scripts-file") {
		t.Errorf("--scripts-file with --scripts=false: exit %d, %q", code, errOut)
	}
}

// A job whose output an earlier collect read is not one with no output
// file found. Seen: a second collect, without --outputs or with another
// month's directory, named October's jobs as missing their output, and
// told to point --outputs at their directory.
func TestCollectDoesNotCallAnOutputReadBeforeMissing(t *testing.T) {
	isolate(t)
	dir := t.TempDir()
	t.Setenv("MIGADVISOR_DB", filepath.Join(dir, "history.db"))
	m := sitereplay.Generate(sitereplay.Options{Seed: 1, GPUTRES: true, ScriptsFrom: sitereplay.DefaultMonth})
	files, err := m.Write(filepath.Join(dir, "month"))
	if err != nil {
		t.Fatal(err)
	}
	args := []string{"collect", "--site", "wulver", "--sacct-file", files.Dump, "--scripts-file", files.Scripts}
	out, errOut, code := migadvisor(t, append(args, "--outputs", files.Outputs)...)
	if code != 0 || !strings.Contains(out, "files read") {
		t.Fatalf("exit %d: %s%s", code, out, errOut)
	}
	if err := os.RemoveAll(files.Outputs); err != nil { // the month's outputs, gone by the next collect
		t.Fatal(err)
	}
	for _, more := range [][]string{nil, {"--outputs", t.TempDir()}} {
		out, errOut, code = migadvisor(t, append(args, more...)...)
		if code != 0 || strings.Contains(out+errOut, "no output file found") {
			t.Errorf("%v: exit %d; jobs whose output was read are said to have none:\n%s%s", more, code, out, errOut)
		}
	}
}
