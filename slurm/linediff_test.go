package slurm

import (
	"reflect"
	"testing"
)

func TestChangesNameTheLinesARecommendationChanges(t *testing.T) {
	s := Parse("job.sh", []byte("#!/bin/bash\n#SBATCH --gres=gpu:a100:1\n#SBATCH --mem-per-cpu=4000M\n#SBATCH -t 30\npython train.py\n"))
	got, err := s.Changes(Variant{GPURequest: "--gres=gpu:a100_10g:1", Time: "1:00:00", Mem: "8G"})
	if err != nil {
		t.Fatal(err)
	}
	want := []LineChange{
		{Line: 2, Old: "#SBATCH --gres=gpu:a100:1", New: "#SBATCH --gres=gpu:a100_10g:1"},
		{Line: 3, Old: "#SBATCH --mem-per-cpu=4000M", New: "#SBATCH --mem=8G"}, // --mem takes its place
		{Line: 4, Old: "#SBATCH -t 30", New: "#SBATCH -t 1:00:00"},
	}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("changes:\n got %+v\nwant %+v", got, want)
	}
	// The changed script asks for what the variant says.
	data, _ := s.Rewrite(Variant{GPURequest: "--gres=gpu:a100_10g:1", Time: "1:00:00", Mem: "8G"})
	r := Parse("job.sh", data).Resources
	if r.Time.String() != "01:00:00" || r.MemMiB != 8192 || r.MemPerCPUMiB != 0 {
		t.Errorf("rewritten: time %s, mem %d MiB", r.Time, r.MemMiB)
	}
}

func TestChangesOfAnUnchangedScriptAreNone(t *testing.T) {
	s := Parse("job.sh", []byte("#!/bin/bash\n#SBATCH --gres=gpu:a100_10g:1\nrun\n"))
	got, err := s.Changes(Variant{GPURequest: "--gres=gpu:a100_10g:1"})
	if err != nil || len(got) != 0 {
		t.Errorf("changes %+v, %v", got, err)
	}
}

func TestAReplacedGPUOptionIsOneChange(t *testing.T) {
	s := Parse("job.sh", []byte("#!/bin/bash\n#SBATCH --gpus-per-node=a100:1\n#SBATCH -c 4\nrun\n"))
	got, err := s.Changes(Variant{GPURequest: "--gres=gpu:a100_20g:1"})
	want := []LineChange{{Line: 2, Old: "#SBATCH --gpus-per-node=a100:1", New: "#SBATCH --gres=gpu:a100_20g:1"}}
	if err != nil || !reflect.DeepEqual(got, want) {
		t.Errorf("changes %+v, %v", got, err)
	}
}
