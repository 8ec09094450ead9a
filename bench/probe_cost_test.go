package bench

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/migadvisor/migadvisor/slurm"
)

// Before its first job, a probe says what it submits and the most that
// can cost: each variant's SU/h by the site's formula × its --time,
// summed (probeScript: 16G and 1 hour; on Wulver max(1, 16/4) + 16 ×
// GPU_GB/80 is 6, 8, 12 and 20 SU/h, 46 SU for the four), and where the
// jobs' output goes: the script's --output from the submit directory.
func TestProbeSaysWhatItCanCostFirst(t *testing.T) {
	w := newProbeWorld(t, map[string]string{"1g.10gb": "completed"})
	if _, err := Probe(context.Background(), w.opt, w.deps); err != nil {
		t.Fatal(err)
	}
	first := w.events[0]
	if first.Kind != ProbeStarting || first.Plan == nil {
		t.Fatalf("first event %+v", first)
	}
	p := first.Plan
	if p.MaxSU != 46 || p.Unpriced != "" || len(p.Jobs) != 4 || !p.Ladder || p.Outputs != "/work/slurm-%j.out" {
		t.Errorf("plan %+v", p)
	}
	if j := p.Jobs[3]; j.Profile != "full" || !j.Whole || j.SUPerHour != 20 || j.Hours != 1 || j.TimeFrom != "--time" {
		t.Errorf("the whole GPU's job %+v", j)
	}
	// --time for the variants, and a script without --time: its partition's limit.
	w.opt.Sweep.Time = "00:30:00"
	if p, err := PlanProbe(w.opt); err != nil || p.MaxSU != 23 {
		t.Errorf("--time 30m: %v %+v", err, p)
	}
	w.opt.Sweep.Time = ""
	w.opt.Sweep.Script = slurm.Parse(w.opt.Sweep.Script.Path, []byte("#!/bin/bash\n#SBATCH --gres=gpu:a100_10g:1\n#SBATCH --mem=16G\n#SBATCH --partition=gpu\n"+
		"#SBATCH --output=logs/%x-%j.out\n#SBATCH --chdir=/scratch/run\npython train.py\n"))
	plan, err := PlanProbe(w.opt)
	if p = &plan; err != nil || p.Unpriced != "" || p.Jobs[0].TimeFrom != "the partition's limit" || p.Jobs[0].Hours != 72 || p.Outputs != "/scratch/run/logs/%x-%j.out" {
		t.Errorf("no --time: %v %+v", err, p)
	}
}

// rejectingSlurm refuses every submission after the first ok ones.
type rejectingSlurm struct {
	*fakeSlurm
	ok int
}

func (s *rejectingSlurm) Submit(ctx context.Context, dir, script string, args ...string) (slurm.JobRef, error) {
	if s.ok == 0 {
		return slurm.JobRef{}, errors.New("sbatch: error: Batch job submission failed: Invalid account")
	}
	s.ok--
	return s.fakeSlurm.Submit(ctx, dir, script, args...)
}

// A submission that fails before any job leaves nothing behind (the
// variants, sweep.json and the directory made for them are removed) and
// says so; one that fails part-way keeps the directory of the jobs that
// run, and says where and why.
func TestProbeCleansUpAFailedSubmission(t *testing.T) {
	w := newProbeWorld(t, nil)
	w.opt.Ladder = false
	w.deps.Slurm = &rejectingSlurm{fakeSlurm: w.slurm}
	_, err := Probe(context.Background(), w.opt, w.deps)
	if err == nil || !strings.Contains(err.Error(), "Invalid account; nothing was submitted, and the variants written for it were removed") {
		t.Errorf("error: %v", err)
	}
	if _, err := os.Stat(w.opt.Sweep.OutDir); !os.IsNotExist(err) {
		t.Errorf("the probe's directory is left: %v", err)
	}

	w = newProbeWorld(t, nil)
	w.opt.Ladder = false
	w.deps.Slurm = &rejectingSlurm{fakeSlurm: w.slurm, ok: 2}
	res, err := Probe(context.Background(), w.opt, w.deps)
	if err == nil || !strings.Contains(err.Error(), "2 jobs of this probe were submitted before it: "+w.opt.Sweep.OutDir+" keeps their variants") ||
		res.Dir() != w.opt.Sweep.OutDir {
		t.Errorf("part-way: %v %+v", err, res)
	}
	if _, err := os.Stat(filepath.Join(w.opt.Sweep.OutDir, SweepFileName)); err != nil {
		t.Errorf("part-way, the sweep is gone: %v", err)
	}
}
