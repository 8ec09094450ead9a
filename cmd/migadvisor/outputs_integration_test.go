//go:build slurm

package main

import (
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/migadvisor/migadvisor/advisor/app/joblist"
)

// oomToStderr writes its output and its errors to files of their own in
// logs/, and fails with PyTorch's OOM on stderr.
const oomToStderr = `#!/bin/bash
#SBATCH --job-name=errfile
#SBATCH --gres=gpu:a100_10g:1
#SBATCH --mem=64M
#SBATCH --time=1
#SBATCH --output=logs/%x-%j.out
#SBATCH --error=logs/%x-%j.err
echo "epoch 1/3: loss 0.6931"
echo "torch.OutOfMemoryError: CUDA out of memory. Tried to allocate 2.00 GiB. GPU 0 has a total capacity of 9.50 GiB of which 1.20 GiB is free. Including non-PyTorch memory, this process has 8.30 GiB memory in use. Of the allocated memory 7.90 GiB is allocated by PyTorch, and 120.00 MiB is reserved by PyTorch but unallocated." >&2
exit 1
`

// arrayToLogs is an array whose tasks write logs/%x_%A_%a.out.
const arrayToLogs = `#!/bin/bash
#SBATCH --job-name=errarray
#SBATCH --gres=gpu:a100_20g:1
#SBATCH --mem=64M
#SBATCH --time=1
#SBATCH --array=0-1
#SBATCH -o logs/%x_%A_%a.out
echo "MIGADVISOR_METRIC accuracy 9$SLURM_ARRAY_TASK_ID.5"
`

// TestSlurmCollectAllUsersReadsErrorFiles: jobs submitted with Slurm's own
// sbatch, whose scripts send output and errors to logs/ (a job and an
// array), are linked by a site-wide collect through slurmdbd's copies of
// their scripts; the OOM the job printed on stderr and each task's metric
// are found where the scripts said, with no --outputs.
func TestSlurmCollectAllUsersReadsErrorFiles(t *testing.T) {
	requireCluster(t)
	isolate(t)
	work := t.TempDir()
	t.Chdir(work)
	if err := os.Mkdir("logs", 0o755); err != nil {
		t.Fatal(err)
	}
	submit := func(name, text string) (string, string) {
		job := writeScript(t, work, name, uniqueRun(text))
		out, err := exec.Command("sbatch", "--parsable", job).Output()
		if err != nil {
			t.Fatal(err)
		}
		return job, strings.TrimSpace(string(out))
	}
	oomJob, oomID := submit("oom.sh", oomToStderr)
	arrayJob, arrayID := submit("array.sh", arrayToLogs)
	mustRun(t, "wait", oomID, arrayID, "--timeout", "1m")
	t.Setenv("MIGADVISOR_DB", filepath.Join(work, "site.db"))
	var oom, tasks []joblist.JobEntry
	for range 20 { // slurmdbd may still hold a placeholder for a short job
		mustRun(t, "collect", "--all-users", "--since", "10m")
		json.Unmarshal([]byte(mustRun(t, "history", oomJob, "--json")), &oom)
		json.Unmarshal([]byte(mustRun(t, "history", arrayJob, "--json")), &tasks)
		// Earlier runs of this test on the cluster (same job names, another
		// directory) are earlier versions of these scripts: not these jobs.
		oom, tasks = thisVersion(oom), thisVersion(tasks)
		if len(oom) == 1 && oom[0].OOM != nil && len(tasks) == 2 && len(tasks[0].Metrics) > 0 && len(tasks[1].Metrics) > 0 {
			break
		}
		time.Sleep(time.Second)
	}
	if len(oom) != 1 || oom[0].OOM == nil || *oom[0].OOM != "gpu" || oom[0].Output == nil ||
		*oom[0].Output != filepath.Join(work, "logs", "errfile-"+oomID+".out") {
		t.Fatalf("job %s: %s", oomID, dump(oom))
	}
	if need := oom[0].GPUNeedMiB; need == nil || *need < 10*1024 {
		t.Errorf("job %s needs %v MiB", oomID, need)
	}
	for _, task := range tasks {
		_, index, _ := strings.Cut(task.JobID, "_")
		want := filepath.Join(work, "logs", "errarray_"+arrayID+"_"+index+".out")
		if task.Output == nil || *task.Output != want || task.Metrics["accuracy"] != map[string]float64{"0": 90.5, "1": 91.5}[index] {
			t.Errorf("task %s: %s; want its metric from %s", task.JobID, dump(task), want)
		}
	}
}

// thisVersion leaves out the jobs history lists as earlier versions'.
func thisVersion(jobs []joblist.JobEntry) []joblist.JobEntry {
	return slices.DeleteFunc(jobs, func(j joblist.JobEntry) bool { return j.Earlier })
}
