package slurm

import "testing"

func TestExpandFilePattern(t *testing.T) {
	plain := PatternJob{JobID: "4", Name: "train", User: "ab12", Node: "n0001"}
	task := PatternJob{JobID: "13", ArrayJob: "8", TaskID: "1", Name: "sweep"}
	cases := []struct {
		pattern string
		job     PatternJob
		want    string
	}{
		{"slurm-%j.out", plain, "slurm-4.out"},
		{"%x.%j.out", plain, "train.4.out"},
		{"logs/%x-%j.err", plain, "logs/train-4.err"},
		{"%u/%N/%5j.out", plain, "ab12/n0001/00004.out"},
		{"100%%-%j", plain, "100%-4"},
		{`no\%j`, plain, "no%j"},
		{"fx_%A_%a.out", task, "fx_8_1.out"},
		{"%x_%j.out", task, "sweep_13.out"},
		{"slurm-%A_%3a.out", task, "slurm-8_001.out"},
		{"trailing%", plain, "trailing%"},
		{"%q", plain, "%q"},
	}
	for _, c := range cases {
		if got := ExpandFilePattern(c.pattern, c.job); got != c.want {
			t.Errorf("ExpandFilePattern(%q) = %q, want %q", c.pattern, got, c.want)
		}
	}
}
