package emulate

import (
	"bytes"
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/migadvisor/migadvisor/catalog/catalogtest"
	"github.com/migadvisor/migadvisor/slurm"
)

// The record holds the runs, the whole GPU measured first, and is on disk
// as it ends; the table shows each run's share, cap and output.
func TestRecordedKeepsTheRecordInTheDirectory(t *testing.T) {
	dir := t.TempDir()
	measure, _ := filepath.Abs("testdata/fake-measure-slice")
	targets, _ := Targets(catalogtest.Wulver(t), []string{"1g.10gb", "full"})
	var stderr bytes.Buffer
	opt := Options{Targets: targets, Command: []string{"true"}, MPSControl: fakeControl(t), Dir: dir, Env: os.Environ(), Stderr: &stderr,
		Measure: []string{measure}}
	rec, err := Recorded(context.Background(), opt, "wulver", "77")
	if err != nil || len(rec.Runs) != 2 || rec.Whole == nil || rec.Whole.SMs != 132 || rec.Site != "wulver" || rec.JobID != "77" ||
		rec.Version != slurm.EmulationVersion || rec.Started == "" {
		t.Fatalf("%v: %+v", err, rec)
	}
	var kept slurm.EmulationRecord
	data, _ := os.ReadFile(filepath.Join(dir, slurm.EmulationRecordName))
	if err := json.Unmarshal(data, &kept); err != nil || len(kept.Runs) != 2 || kept.Whole == nil {
		t.Errorf("the record on disk: %v\n%s", err, data)
	}
	var b strings.Builder
	if err := WriteTable(&b, dir, rec.Runs); err != nil {
		t.Fatal(err)
	}
	lines := strings.Split(b.String(), "\n")
	if !strings.HasPrefix(lines[0], "PROFILE  SMS  MEMORY CAP  OUTCOME") || !strings.HasPrefix(lines[1], "1g.10gb  13%  9728M") ||
		!strings.HasPrefix(lines[2], "full     all  none") || !strings.HasSuffix(lines[2], filepath.Join(dir, "full.out")) {
		t.Errorf("table:\n%s", b.String())
	}

	t.Setenv("FAKE_MEASURE_FAIL", "1")
	opt.Env = os.Environ()
	stderr.Reset()
	if rec, err := Recorded(context.Background(), opt, "wulver", ""); err != nil || rec.Whole != nil ||
		!strings.Contains(stderr.String(), "the whole GPU could not be measured") {
		t.Errorf("an unmeasured GPU: %v %+v\n%s", err, rec, stderr.String())
	}
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	opt.Dir = t.TempDir()
	if _, err := Recorded(ctx, opt, "wulver", ""); err == nil || err.Error() != "no run was made" {
		t.Errorf("cancelled before any run: %v", err)
	}
}
