package report

import (
	"strings"

	"github.com/migadvisor/migadvisor/slurm"
)

// MetricTestLoss is the loss a job reports on held-out data.
const MetricTestLoss = "test_loss"

// metricAlias is one of the names users give a report's metric, for
// example in `MIGADVISOR_METRIC acc 0.987`.
type metricAlias struct {
	canonical string
	names     []string // best first: the first a job reported is taken
	// fraction: a value of at most 1 under a name that does not say
	// percent (_pct, _percent) is a fraction, and is read as percent.
	fraction bool
}

// metricAliases map the names users write to the metrics the table layouts
// read. Names are matched without regard to case, with "-" read as "_".
// A test figure is preferred to a plain one, and a plain one to a
// validation one.
var metricAliases = []metricAlias{
	{canonical: MetricAccuracy, fraction: true, names: []string{
		MetricAccuracy, "test_accuracy_percent", "test_accuracy", "test_acc", "accuracy_pct", "accuracy_percent",
		"accuracy", "acc", "eval_accuracy", "eval_acc", "val_accuracy", "val_acc", "valid_accuracy", "valid_acc",
		"validation_accuracy"}},
	{canonical: MetricTestLoss, names: []string{
		MetricTestLoss, "eval_loss", "val_loss", "valid_loss", "validation_loss", "loss"}},
	{canonical: MetricTrainingTime, names: []string{MetricTrainingTime, "train_time_s", "training_seconds", "train_seconds"}},
	{canonical: MetricTokensPerS, names: []string{MetricTokensPerS, "tokens_per_sec", "tokens_per_second", "train_tokens_per_second"}},
}

// metricTitles are the generic table's column names for the metrics it knows.
var metricTitles = map[string]string{
	MetricAccuracy:        "Test Accuracy (%)",
	MetricTestLoss:        "Test Loss",
	MetricTrainingTime:    "Training Time (s)",
	MetricTokensPerS:      "Tokens/s",
	MetricNsPerDay:        "Performance (ns/day)",
	MetricWallS:           "Walltime (s)",
	MetricReserved:        "Peak Reserved (GiB)",
	slurm.AllocatedMetric: "Peak Allocated (GiB)",
}

// CanonicalMetrics returns a job's metrics under the names the reports read:
// each alias's value goes to its metric (the best-ranked name the job
// reported wins; an accuracy of at most 1 is a fraction, turned into
// percent) and the aliases are dropped; other names are kept as they are.
func CanonicalMetrics(m map[string]float64) map[string]float64 {
	if len(m) == 0 {
		return m
	}
	byName := make(map[string]string, len(m)) // normalised name → the job's own
	for k := range m {
		byName[normalMetricName(k)] = k
	}
	out := make(map[string]float64, len(m))
	used := map[string]bool{}
	for _, a := range metricAliases {
		taken := false
		for _, name := range a.names {
			own, ok := byName[name]
			if !ok {
				continue
			}
			used[own] = true
			if taken {
				continue
			}
			taken = true
			v := m[own]
			if a.fraction && !saysPercent(name) && v >= 0 && v <= 1 {
				v *= 100
			}
			out[a.canonical] = v
		}
	}
	for k, v := range m {
		if !used[k] {
			out[k] = v
		}
	}
	return out
}

func normalMetricName(name string) string {
	return strings.ReplaceAll(strings.ToLower(name), "-", "_")
}

func saysPercent(name string) bool {
	return strings.HasSuffix(name, "_pct") || strings.HasSuffix(name, "_percent")
}

// metricTitle is the generic table's column for a metric.
func metricTitle(name string) string {
	if t, ok := metricTitles[name]; ok {
		return t
	}
	return name
}
