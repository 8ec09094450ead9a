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
		// What slurmstepd of Slurm 22.05 named the batch step's files on
		// the dev cluster (job 12 named nm on node vm, job 14 task 3 of
		// array 14, job 15):
		// --output='t-%A-%3x-%q-%12j-%%-%4J-%s-%3N-%Z' → t-12-nm-%q-0000000012-%-0012-batch-vm-%Z
		// --array=3 --output='v-%A-%a-%3a-%j-%J'       → v-14-3-003-14-14
		// --output='w-%J-%j.txt'                         → w-15-15.txt
		// --output='pad-%4j-%5a-%N-%u-%n-%t-%s-%b.txt'   → pad-0011-4294967294-vm-root-0-0-batch-%b.txt
		{"t-%A-%3x-%q-%12j-%%-%4J-%s-%3N-%Z", PatternJob{JobID: "12", Name: "nm", Node: "vm"}, "t-12-nm-%q-0000000012-%-0012-batch-vm-%Z"},
		{"v-%A-%a-%3a-%j-%J", PatternJob{JobID: "14", ArrayJob: "14", TaskID: "3", Name: "nm"}, "v-14-3-003-14-14"},
		{"w-%J-%j.txt", PatternJob{JobID: "15"}, "w-15-15.txt"},
		{"pad-%4j-%5a-%N-%u-%n-%t-%s-%b.txt", PatternJob{JobID: "11", Node: "vm", User: "root"}, "pad-0011-4294967294-vm-root-0-0-batch-%b.txt"},
	}
	for _, c := range cases {
		if got := ExpandFilePattern(c.pattern, c.job); got != c.want {
			t.Errorf("ExpandFilePattern(%q) = %q, want %q", c.pattern, got, c.want)
		}
	}
}

// %N is the first node of the job, the one its batch step runs on: the
// first name of sacct's compressed NodeList.
func TestFirstHost(t *testing.T) {
	for list, want := range map[string]string{
		"n0001": "n0001", "n0001,n0002": "n0001", "gpu[03-04,07]": "gpu03", "gpu[7,3]": "gpu7",
		"a[1-2],b[5-6]": "a1", "None assigned": "", "": "", "rack[1-2]-n[3-4]": "rack1-n3",
	} {
		if got := FirstHost(list); got != want {
			t.Errorf("FirstHost(%q) = %q, want %q", list, got, want)
		}
	}
}

func TestScriptOutputFiles(t *testing.T) {
	cases := []struct {
		script string
		want   OutputFiles
	}{
		{"#!/bin/bash\n#SBATCH -t 5\necho\n", OutputFiles{Stdout: "slurm-%j.out"}},
		{"#!/bin/bash\n#SBATCH --array=0-3\necho\n", OutputFiles{Stdout: "slurm-%A_%a.out"}},
		{"#!/bin/bash\n#SBATCH --output=logs/%x-%j.out\n#SBATCH --error=logs/%x-%j.err\necho\n",
			OutputFiles{Stdout: "logs/%x-%j.out", Stderr: "logs/%x-%j.err", StdoutLine: 2, StderrLine: 3}},
		{"#!/bin/bash\n#SBATCH -o a.out -e a.err\n#SBATCH -o b.out\necho\n#SBATCH -e late.err\n",
			OutputFiles{Stdout: "b.out", Stderr: "a.err", StdoutLine: 3, StderrLine: 2}},
		{"#!/bin/bash\n#SBATCH -a 1-2 -e %A_%a.err\necho\n", OutputFiles{Stdout: "slurm-%A_%a.out", Stderr: "%A_%a.err", StderrLine: 2}},
	}
	for _, c := range cases {
		if got := Parse("job.sh", []byte(c.script)).OutputFiles(); got != c.want {
			t.Errorf("%q: %+v, want %+v", c.script, got, c.want)
		}
	}
}
