package slurm

import (
	"os"
	"strings"
	"testing"
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
}
