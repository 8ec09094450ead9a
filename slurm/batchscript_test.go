package slurm

import (
	"errors"
	"os"
	"slices"
	"strings"
	"testing"
	"testing/iotest"
)

// The fixture is `sacct --batch-script -j 644,646,647,999999` from the dev
// cluster: two --wrap jobs, the job of testdata/batchscript/job.sh (whose
// body has a line of dashes and a fake header), and a job that does not exist.
func TestParseBatchScripts(t *testing.T) {
	f, err := os.Open("testdata/batchscript/sacct-B-22.05.txt")
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	scripts, err := ParseBatchScripts(f)
	if err != nil {
		t.Fatal(err)
	}
	if len(scripts) != 3 || !strings.HasSuffix(string(scripts["646"]), "\necho one\n") {
		t.Errorf("scripts: %q", scripts)
	}
	want, _ := os.ReadFile("testdata/batchscript/job.sh")
	if string(scripts["647"]) != string(want) {
		t.Errorf("job 647:\n%q\nwant\n%q", scripts["647"], want)
	}
	if Parse("a", scripts["647"]).Fingerprint() != Parse("b", want).Fingerprint() {
		t.Error("the stored script has another fingerprint than the file")
	}
	none, _ := ParseBatchScripts(strings.NewReader("Batch Script for 5\n" + strings.Repeat("-", 80) + "\nNONE\n\n"))
	if len(none) != 0 {
		t.Errorf("NONE: %q", none)
	}
	// Shown: the three jobs, not 999999, which does not exist; a job with
	// no script stored is shown with NONE.
	f.Seek(0, 0)
	if _, shown, err := ParseBatchScriptsShown(f); err != nil || len(shown) != 3 || !shown["644"] || shown["999999"] {
		t.Errorf("shown %v %v", shown, err)
	}
	if _, shown, _ := ParseBatchScriptsShown(strings.NewReader("Batch Script for 5\n" + strings.Repeat("-", 80) + "\nNONE\n\n")); !shown["5"] {
		t.Errorf("a job with NONE not shown: %v", shown)
	}
}

// A sacct that ignored --batch-script (a Slurm before 21.08 prints its
// usual table) gave no script at all: that is an error, never "no job has
// a stored script". Empty output (no job found) is none.
func TestParseBatchScriptsRefusesOutputWithNoHeader(t *testing.T) {
	if _, err := ParseBatchScripts(strings.NewReader("JobID|JobName|State\n71|twin|COMPLETED\n")); !errors.Is(err, ErrNoBatchScriptHeader) {
		t.Errorf("a table read as scripts: %v", err)
	}
	if scripts, err := ParseBatchScripts(strings.NewReader("")); err != nil || len(scripts) != 0 {
		t.Errorf("no output: %q %v", scripts, err)
	}
}

// A job with a batch step ran a batch script; an salloc or srun allocation
// has none (its steps: extern, interactive, 0, ...).
func TestParseBatchSteps(t *testing.T) {
	got := ParseBatchSteps([]byte("71\n71.batch\n71.extern\n72\n72.extern\n72.interactive\n73\n73.0\n125|x\n125.batch|x\n"))
	if len(got) != 2 || !got["71"] || !got["125"] {
		t.Errorf("batch jobs: %v", got)
	}
}

// ScanBatchScripts reads the output a script at a time, as it streams: the
// same scripts from a reader that gives a byte at a time, a script's own
// "Batch Script for" line (no dashes after it) kept in it, even as its
// last line, and fn's error ends the scan.
func TestScanBatchScriptsStreams(t *testing.T) {
	dashes := strings.Repeat("-", 80) + "\n"
	out := "Batch Script for 7\n" + dashes + "#!/bin/bash\necho Batch Script for 7\nBatch Script for you\n\n" +
		"Batch Script for 8_1\n" + dashes + "NONE\n\n" +
		"Batch Script for 9\n" + dashes + "#!/bin/sh\nBatch Script for the end\n"
	type got struct{ id, script string }
	var all []got
	err := ScanBatchScripts(iotest.OneByteReader(strings.NewReader(out)), func(id string, script []byte) error {
		all = append(all, got{id, string(script)})
		return nil
	})
	want := []got{{"7", "#!/bin/bash\necho Batch Script for 7\nBatch Script for you\n"}, {"8_1", ""}, {"9", "#!/bin/sh\nBatch Script for the end"}}
	if err != nil || !slices.Equal(all, want) {
		t.Errorf("scanned %q, %v; want %q", all, err, want)
	}
	stop := errors.New("enough")
	n := 0
	err = ScanBatchScripts(strings.NewReader(out), func(string, []byte) error { n++; return stop })
	if !errors.Is(err, stop) || n != 1 {
		t.Errorf("fn's error: %v after %d scripts", err, n)
	}
}
