package slurmtest

import (
	"context"
	"errors"
	"os/exec"
	"strings"
	"testing"
	"time"

	"github.com/migadvisor/migadvisor/slurm"
)

func TestFakeAnswersAsSlurmWould(t *testing.T) {
	ctx := context.Background()
	fake := New().Cluster("wulver").
		On("sbatch", func(c slurm.Call) Reply { return Reply{Stdout: "42;wulver\n"} }).
		Fails("squeue", "squeue: error: Unable to contact slurm controller (connect failure)", 1)
	cl := &slurm.Client{Runner: fake}

	if name, err := cl.ClusterName(ctx); err != nil || name != "wulver" {
		t.Errorf("ClusterName = %q, %v; want wulver", name, err)
	}
	job, err := cl.Submit(ctx, "/work", "job.sh", "--gres=gpu:a100:1")
	if err != nil || job.ID != "42" || job.Cluster != "wulver" {
		t.Errorf("Submit = %+v, %v", job, err)
	}
	calls := fake.Calls("sbatch")
	if len(calls) != 1 || calls[0].Dir != "/work" || strings.Join(calls[0].Args, " ") != "--parsable --gres=gpu:a100:1 job.sh" {
		t.Errorf("sbatch calls = %+v", calls)
	}
	_, err = cl.Queue(ctx, []string{"7"})
	var ce *slurm.CommandError
	if !errors.As(err, &ce) || ce.Status != 1 || !strings.Contains(err.Error(), "Unable to contact") {
		t.Errorf("a failing squeue gives %v; want its status and last line", err)
	}
	_, err = (&slurm.Client{Runner: New()}).StartEstimate(ctx, "", "job.sh")
	if !errors.As(err, &ce) || !errors.Is(err, exec.ErrNotFound) || !strings.Contains(err.Error(), "not found") {
		t.Errorf("a command the fake lacks gives %v; want not found", err)
	}
}

func TestStartEstimateReadsStderr(t *testing.T) {
	fake := New().On("sbatch", func(c slurm.Call) Reply {
		return Reply{Stderr: "sbatch: Job 3 to start at 2026-11-28T10:00:00 using 1 processors on nodes n1 in partition gpu\n"}
	})
	at, err := (&slurm.Client{Runner: fake}).StartEstimate(context.Background(), "", "job.sh")
	if want := time.Date(2026, 11, 28, 10, 0, 0, 0, time.Local); err != nil || !at.Equal(want) {
		t.Errorf("StartEstimate = %v, %v; want %v", at, err, want)
	}
}
