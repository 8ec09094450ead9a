package report

import (
	"strings"
	"testing"
	"time"

	"github.com/migadvisor/migadvisor/advisor/base/history"
	"github.com/migadvisor/migadvisor/slurm"
)

// metricRun is a completed 1g.10gb run whose output printed lines.
func metricRun(t *testing.T, id string, lines ...string) history.JobRecord {
	t.Helper()
	ev, err := slurm.ScanOutput(strings.NewReader(strings.Join(lines, "\n")+"\n"), slurm.ScanOptions{})
	if err != nil {
		t.Fatal(err)
	}
	elapsed, cpus, mem := int64(600), int64(1), 4000.0
	end := time.Date(2026, 11, 20, 12, 0, 0, 0, time.UTC)
	return history.JobRecord{Cluster: "wulver", Key: id, JobID: id, ArrayJob: id, State: "COMPLETED", Profile: "1g.10gb",
		GPUCount: 1, ElapsedS: &elapsed, CPUs: &cpus, ReqMemMiB: &mem, End: &end, Metrics: ev.Metrics}
}

// cell is the table's cell of the column named col in the first data row.
func cell(t *testing.T, rep *Report, col string) string {
	t.Helper()
	rows, err := rep.Table()
	if err != nil {
		t.Fatal(err)
	}
	for i, name := range rows[0] {
		if name == col {
			return rows[1][i]
		}
	}
	t.Fatalf("no column %q in %q", col, rows[0])
	return ""
}

// The names users print reach the Wulver table's Test Accuracy (%): an
// accuracy of at most 1 is a fraction, a larger one percent, and a name
// ending _pct or _percent is always percent.
func TestMetricAliasesFillTestAccuracy(t *testing.T) {
	site, _ := wulverSite(t)
	for line, want := range map[string]string{
		"MIGADVISOR_METRIC accuracy 98.70":               "98.70",
		"MIGADVISOR_METRIC accuracy 0.987":               "98.70",
		"MIGADVISOR_METRIC acc 0.987":                    "98.70",
		"MIGADVISOR_METRIC Acc 97.5":                     "97.50",
		"MIGADVISOR_METRIC test_acc 0.9912":              "99.12",
		"MIGADVISOR_METRIC test-accuracy 0.5":            "50.00",
		"MIGADVISOR_METRIC val_acc 0.81":                 "81.00",
		"MIGADVISOR_METRIC val_accuracy 81.62":           "81.62",
		"MIGADVISOR_METRIC eval_accuracy 0.7618":         "76.18",
		"MIGADVISOR_METRIC test_accuracy_pct 99.14":      "99.14",
		"MIGADVISOR_METRIC test_accuracy_pct 0.5":        "0.50",
		"MIGADVISOR_METRIC accuracy_percent 0.8":         "0.80",
		"MIGADVISOR_METRIC validation_accuracy 1":        "100.00",
		"MIGADVISOR_METRIC training_time_s 63.44":        "",
		"MIGADVISOR_METRIC samples_per_s 12000 (no acc)": "",
	} {
		rep, err := Build(site, Workload{Tag: "w", Table: "pytorch"}, []history.JobRecord{metricRun(t, "1", line)})
		if err != nil {
			t.Fatal(err)
		}
		if got := cell(t, rep, "Test Accuracy (%)"); got != want {
			t.Errorf("%q: Test Accuracy (%%) %q, want %q", line, got, want)
		}
	}
}

// A test figure wins over a plain one, and a plain one over a validation
// one, whatever order the job printed them in.
func TestMetricAliasesPreferTheTestFigure(t *testing.T) {
	site, _ := wulverSite(t)
	for _, c := range []struct {
		lines    []string
		acc, los string
	}{
		{[]string{"MIGADVISOR_METRIC val_acc 0.80", "MIGADVISOR_METRIC test_acc 0.90", "MIGADVISOR_METRIC acc 0.85"}, "90", ""},
		{[]string{"MIGADVISOR_METRIC val_acc 0.80", "MIGADVISOR_METRIC accuracy 0.85"}, "85", ""},
		{[]string{"MIGADVISOR_METRIC loss 0.9", "MIGADVISOR_METRIC val_loss 0.4"}, "", "0.4"},
		{[]string{"MIGADVISOR_METRIC loss 0.9", "MIGADVISOR_METRIC test_loss 0.3", "MIGADVISOR_METRIC val_loss 0.4"}, "", "0.3"},
		{[]string{"MIGADVISOR_METRIC loss 0.9"}, "", "0.9"},
		{[]string{"MIGADVISOR_METRIC eval_loss 1.25"}, "", "1.25"},
	} {
		rep, err := Build(site, Workload{Tag: "w"}, []history.JobRecord{metricRun(t, "1", c.lines...)})
		if err != nil {
			t.Fatal(err)
		}
		rows, _ := rep.Table()
		head := strings.Join(rows[0], ",")
		if c.acc != "" && cell(t, rep, "Test Accuracy (%)") != c.acc {
			t.Errorf("%q: accuracy %q, want %q", c.lines, cell(t, rep, "Test Accuracy (%)"), c.acc)
		}
		if c.los != "" && cell(t, rep, "Test Loss") != c.los {
			t.Errorf("%q: loss %q, want %q", c.lines, cell(t, rep, "Test Loss"), c.los)
		}
		for _, alias := range []string{",acc", "val_acc", ",loss", "val_loss", "test_acc,", "eval_loss"} {
			if strings.Contains(head+",", alias) {
				t.Errorf("%q: the generic table still has the alias %s as a column: %s", c.lines, alias, head)
			}
		}
	}
}

// Names that are no alias stay as the job wrote them, in their own column.
func TestOtherMetricsKeepTheirNames(t *testing.T) {
	site, _ := wulverSite(t)
	rep, err := Build(site, Workload{Tag: "w"}, []history.JobRecord{metricRun(t, "1", "MIGADVISOR_METRIC f1 0.75", "MIGADVISOR_METRIC train_loss 0.2")})
	if err != nil {
		t.Fatal(err)
	}
	if cell(t, rep, "f1") != "0.75" || cell(t, rep, "train_loss") != "0.2" {
		t.Errorf("f1 %q, train_loss %q", cell(t, rep, "f1"), cell(t, rep, "train_loss"))
	}
}
