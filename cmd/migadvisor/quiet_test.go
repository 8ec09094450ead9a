package main

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// A record of the sbatch wrapper's that cannot be read from the spool is
// set aside as .bad and said once, by the command whose open set it
// aside: collect in its summary and its --json, any other command that
// writes on stderr; the next command says nothing of it. A read sets
// nothing aside.
func TestASpoolRecordSetAsideIsSaidOnce(t *testing.T) {
	isolate(t)
	db := filepath.Join(t.TempDir(), "history.db")
	t.Setenv("MIGADVISOR_DB", db)
	mustRunCLI(t, "collect", "--sacct-file", devclusterDump, "--cluster", "migdev")
	spool := db + ".spool"
	badRecord := func(name string) string {
		t.Helper()
		if err := os.MkdirAll(spool, 0o700); err != nil {
			t.Fatal(err)
		}
		file := filepath.Join(spool, name)
		os.WriteFile(file, []byte(`{"JobID": "1", "Finger`), 0o600) // cut short
		return file
	}
	said := func(file string) string {
		return "a record of the sbatch wrapper's could not be read (not a record of the sbatch wrapper's: unexpected end of JSON input): " +
			"set aside as " + file + ".bad, its submission not in the history\n"
	}

	bad := badRecord("1-1.json")
	out := mustRunCLI(t, "collect", "--sacct-file", devclusterDump, "--cluster", "migdev")
	if strings.Count(out, said(bad)) != 1 {
		t.Errorf("collect does not say it once:\n%s", out)
	}
	if _, err := os.Stat(bad + ".bad"); err != nil {
		t.Errorf("not kept: %v", err)
	}
	if out := mustRunCLI(t, "collect", "--sacct-file", devclusterDump, "--cluster", "migdev"); strings.Contains(out, "could not be read") {
		t.Errorf("the next collect says it again:\n%s", out)
	}

	bad = badRecord("2-2.json")
	var sum struct {
		SetAside []struct{ File, Reason string } `json:"spool_set_aside"`
	}
	out = mustRunCLI(t, "collect", "--sacct-file", devclusterDump, "--cluster", "migdev", "--json")
	if err := json.Unmarshal([]byte(out), &sum); err != nil || len(sum.SetAside) != 1 || sum.SetAside[0].File != bad+".bad" ||
		sum.SetAside[0].Reason != "not a record of the sbatch wrapper's: unexpected end of JSON input" {
		t.Errorf("--json: %v %s", err, out)
	}

	// A read moves nothing: it leaves the record where it is, for the next
	// collect, which sets it aside and says so.
	bad = badRecord("3-3.json")
	script := example + "pytorch_mnist.sh"
	if _, errOut, code := migadvisor(t, "recommend", script); code != 0 || strings.Contains(errOut, "could not be read") {
		t.Errorf("recommend: exit %d, stderr %q", code, errOut)
	}
	if _, err := os.Stat(bad); err != nil {
		t.Errorf("a read moved the record: %v", err)
	}
	out = mustRunCLI(t, "collect", "--sacct-file", devclusterDump, "--cluster", "migdev")
	if strings.Count(out, said(bad)) != 1 {
		t.Errorf("the collect after the read does not say it once:\n%s", out)
	}
}

// An --outputs directory that cannot be read (mistyped, or not a
// directory) is said, once, in collect's summary and its --json: skipped
// without a word, its jobs would read as having written no output.
func TestCollectSaysAnOutputsDirectoryItCannotRead(t *testing.T) {
	isolate(t)
	t.Setenv("MIGADVISOR_DB", filepath.Join(t.TempDir(), "history.db"))
	dir := t.TempDir()
	missing, file := filepath.Join(dir, "logz"), filepath.Join(dir, "a-file")
	os.WriteFile(file, nil, 0o600)
	out := mustRunCLI(t, "collect", "--sacct-file", devclusterDump, "--cluster", "migdev", "--outputs", missing, "--outputs", file)
	for _, want := range []string{
		"--outputs " + missing + " could not be read (no such file or directory): no output file was looked for there\n",
		"--outputs " + file + " could not be read (not a directory): no output file was looked for there\n",
	} {
		if strings.Count(out, want) != 1 {
			t.Errorf("collect does not say %q once:\n%s", want, out)
		}
	}
	var sum struct {
		Outputs struct {
			UnreadDirs []struct{ Dir, Reason string } `json:"unreadable_dirs"`
		} `json:"outputs"`
	}
	out = mustRunCLI(t, "collect", "--sacct-file", devclusterDump, "--cluster", "migdev", "--outputs", missing, "--json")
	if err := json.Unmarshal([]byte(out), &sum); err != nil || len(sum.Outputs.UnreadDirs) != 1 ||
		sum.Outputs.UnreadDirs[0].Dir != missing || sum.Outputs.UnreadDirs[0].Reason != "no such file or directory" {
		t.Errorf("--json: %v %+v", err, sum.Outputs)
	}
}

// A command that only reads, run by a user who has no history (the Open
// OnDemand form runs recommend --session for everyone who opens it),
// reads nothing and creates nothing: no history.db, no directory.
func TestReadingNoHistoryCreatesNothing(t *testing.T) {
	isolate(t)
	data := os.Getenv("XDG_DATA_HOME")
	script := example + "pytorch_mnist.sh"
	for _, args := range [][]string{
		{"recommend", "--session", "sys/dashboard/sys/jupyter"}, {"recommend", "--session", "jupyter", "--json"},
		{"recommend", script}, {"recommend", script, "--json"}, {"history"}, {"history", script}, {"history", "--json"},
		{"status"}, {"status", "--json"}, {"su", script}, {"lint", script}, {"catalog"},
	} {
		out, errOut, code := migadvisor(t, args...)
		if code != 0 {
			t.Errorf("%v: exit %d\n%s%s", args, code, out, errOut)
		}
		if entries, _ := os.ReadDir(data); len(entries) != 0 {
			t.Errorf("%v created %s/%s", args, data, entries[0].Name())
			os.RemoveAll(filepath.Join(data, entries[0].Name()))
		}
	}
}

// A tracked job whose output file is found nowhere is said once: the
// collect that first looks for it names it, and the next collects (one
// every 30 minutes) do not repeat it; --json counts it as said before.
func TestCollectSaysAMissingOutputOnce(t *testing.T) {
	isolate(t)
	db := filepath.Join(t.TempDir(), "history.db")
	t.Setenv("MIGADVISOR_DB", db)
	historyWithJob2(t, db, example+"pytorch_mnist.sh") // job 2 ran in the dev cluster's directory, not here
	out := mustRunCLI(t, "collect", "--sacct-file", devclusterDump)
	if strings.Count(out, "no output file found for job 2 (point --outputs at their directory)\n") != 1 {
		t.Fatalf("the first collect does not name job 2:\n%s", out)
	}
	for range 2 {
		if out := mustRunCLI(t, "collect", "--sacct-file", devclusterDump); strings.Contains(out, "no output file found") {
			t.Errorf("a later collect says it again:\n%s", out)
		}
	}
	var sum struct {
		Outputs struct {
			Missing []string `json:"missing"`
			Before  int      `json:"missing_said_before"`
		} `json:"outputs"`
	}
	out = mustRunCLI(t, "collect", "--sacct-file", devclusterDump, "--json")
	if err := json.Unmarshal([]byte(out), &sum); err != nil || len(sum.Outputs.Missing) != 0 || sum.Outputs.Before != 1 {
		t.Errorf("--json: %v %+v", err, sum.Outputs)
	}
	// The job's record reads as it did: no output.
	var hist []struct {
		JobID  string  `json:"job_id"`
		Output *string `json:"output"`
	}
	if err := json.Unmarshal([]byte(mustRunCLI(t, "history", example+"pytorch_mnist.sh", "--json")), &hist); err != nil || len(hist) != 1 || hist[0].Output != nil {
		t.Errorf("history: %v %+v", err, hist)
	}
}
