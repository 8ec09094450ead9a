package slurm

import (
	"fmt"
	"testing"
)

func TestGPURequestForms(t *testing.T) {
	tests := []struct {
		directives string
		want       string // option:type:count ...
		total      int
	}{
		{"--gres=gpu:1", "gres::1", 1},
		{"--gres=gpu", "gres::1", 1},
		{"--gres=gpu:a100_10g:1", "gres:a100_10g:1", 1},
		{"--gres=gpu:a100:1,lscratch:100", "gres:a100:1", 1},
		{"--gres=lscratch:100,gpu:a100_20g:1", "gres:a100_20g:1", 1},
		{"--gres=lscratch:100", "", 0},
		{"--gres=none", "", 0},
		{"--gres=gpu:a100_10g:2", "gres:a100_10g:2", 2},
		{"--gres=gpu:a100_10g:1 --nodes=2", "gres:a100_10g:1", 2},
		{"--gpus=2", "gpus::2", 2},
		{"-G 1", "gpus::1", 1},
		{"-G a100_40g:1", "gpus:a100_40g:1", 1},
		{"--gpus=a100_10g:1,a100_20g:1", "gpus:a100_10g:1 gpus:a100_20g:1", 2},
		{"--gpus-per-node=a100:2 -N 2", "gpus-per-node:a100:2", 4},
		{"--gpus-per-task=1 --ntasks=3", "gpus-per-task::1", 3},
		{"--gpus-per-task=1 --ntasks-per-node=2 -N2", "gpus-per-task::1", 4},
		{"--gpus-per-socket=1 --sockets-per-node=2", "gpus-per-socket::1", 2},
	}
	for _, tc := range tests {
		s := Parse("job.sh", []byte("#!/bin/bash\n#SBATCH "+tc.directives+"\n"))
		if len(s.Problems) > 0 {
			t.Errorf("%s: problems %v", tc.directives, s.Problems)
		}
		got := ""
		for i, g := range s.Resources.GPUs {
			if i > 0 {
				got += " "
			}
			got += fmt.Sprintf("%s:%s:%d", g.Option, g.Type, g.Count)
		}
		if got != tc.want || s.Resources.GPUCount() != tc.total {
			t.Errorf("%s: GPUs %q total %d, want %q total %d", tc.directives, got, s.Resources.GPUCount(), tc.want, tc.total)
		}
	}
}

func TestParseGresListKeepsOtherResources(t *testing.T) {
	got := ParseGresList("gpu:a100:1,lscratch:100,gpu:tesla:no_consume:2,shard")
	want := []GresEntry{
		{Name: "gpu", Type: "a100", Count: "1", Raw: "gpu:a100:1"},
		{Name: "lscratch", Count: "100", Raw: "lscratch:100"},
		{Name: "gpu", Type: "tesla:no_consume", Count: "2", Raw: "gpu:tesla:no_consume:2"},
		{Name: "shard", Raw: "shard"},
	}
	if fmt.Sprint(got) != fmt.Sprint(want) {
		t.Errorf("ParseGresList = %+v\nwant %+v", got, want)
	}
}

func TestCPUsAndMemory(t *testing.T) {
	const def = 4096 // MiB per CPU
	tests := []struct {
		directives string
		cpus       int
		mem        int64
	}{
		{"", 1, 4096},
		{"--ntasks-per-node=8 --mem-per-cpu=4000M", 8, 32000},
		{"-n 4 -c 2", 8, 8 * def},
		{"-N 2 --ntasks-per-node=4 --mem=10G", 8, 20480},
		{"-c 4 --mem=16G", 4, 16384},
		{"--gres=gpu:2 --cpus-per-gpu=8", 16, 16 * def},
		{"--gres=gpu:2 --mem-per-gpu=20G", 1, 40960},
		{"--mem=0", 1, 512 * 1024},
		{"--mincpus=6", 6, 6 * def},
		{"--mem=4G --mem-per-cpu=1G -n 2", 2, 2048}, // the last memory option wins
	}
	for _, tc := range tests {
		s := Parse("job.sh", []byte("#!/bin/bash\n#SBATCH "+tc.directives+"\n"))
		r := s.Resources
		if r.CPUs() != tc.cpus || r.MemoryMiB(def, 512*1024) != tc.mem {
			t.Errorf("%q: cpus %d mem %d MiB, want %d and %d", tc.directives, r.CPUs(), r.MemoryMiB(def, 512*1024), tc.cpus, tc.mem)
		}
	}
}

func TestResourceFields(t *testing.T) {
	s := Parse("job.sh", []byte("#!/bin/bash\n#SBATCH -p gpu -q standard -A pi1 -J train -o %x.%j.out -e %x.%j.err\n#SBATCH --array=1-5%2 --time=1-02:00:00 --exclusive\n"))
	r := s.Resources
	got := fmt.Sprintf("%s|%s|%s|%s|%s|%s|%s|%s|%v", r.Partition, r.QoS, r.Account, r.JobName, r.Output, r.Error, r.Array, r.Time, r.Exclusive)
	want := "gpu|standard|pi1|train|%x.%j.out|%x.%j.err|1-5%2|1-02:00:00|true"
	if got != want {
		t.Errorf("resources = %s\nwant        %s", got, want)
	}
}
