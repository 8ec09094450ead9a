package sitereplay

// Rule is a simple rule a site runs to move jobs to slices, read on the
// evidence it reads: jobstats' figures where they are, else Slurm's
// gres/gpumem and gres/gpuutil. Each names the profile it moves a job to.
// The rules judge single-GPU jobs on a whole GPU: a slice is one GPU, and
// a job that asks for a slice already is not theirs to move.
type Rule struct {
	Name   string
	Target string
	moves  func(j *Job, memGiB, util float64) bool
}

// Rules are the three rules sites run today, with the thresholds their
// sources give (shared notes: site rules and MIG layouts).
var Rules = []Rule{
	// Princeton's Job Defense Shield, "GPU model too powerful": 61 minutes
	// or more, at most 10 GB of GPU memory, at most 20% utilisation (0%
	// is another alert's), at most 12 cores and 32 GB of CPU memory per
	// GPU; at Princeton the slices are 10 GB.
	{Name: "JDS alert", Target: "1g.10gb", moves: func(j *Job, mem, util float64) bool {
		return j.ElapsedS >= 61*60 && mem <= 10 && util > 0 && util <= 20 && j.CPUs <= 12 && j.MemGB <= 32
	}},
	// Princeton's MIG calculator: at most 10 cores per GPU, under 60 GB of
	// CPU memory per GPU, under 50% utilisation and under 40 GB of GPU
	// memory: the job's GPU-hours could run on a 40 GB instance.
	{Name: "MIG calculator", Target: "3g.40gb", moves: func(j *Job, mem, util float64) bool {
		return j.CPUs <= 10 && j.MemGB < 60 && util < 50 && mem < 40
	}},
	// The Digital Research Alliance of Canada: under half of the GPU's
	// compute and under half of its memory, try a slice.
	{Name: "Alliance 50/50", Target: "3g.40gb", moves: func(j *Job, mem, util float64) bool {
		return util < 50 && mem < 0.5*usableGiB[3]
	}},
}

// Advice is the profile the rule would move each job of the month to.
func (r Rule) Advice(m *Month) map[int]string {
	out := map[int]string{}
	for _, j := range m.Jobs {
		if !j.InPeriod || j.GPUs != 1 || j.Profile != "full" {
			continue
		}
		mem, util, ok := ruleEvidence(j)
		if ok && r.moves(j, mem, util) {
			out[j.ID] = r.Target
		}
	}
	return out
}

// ruleEvidence is the GPU memory peak (GiB) and utilisation (%) a rule
// reads: jobstats', else Slurm's; ok false where the site has neither.
func ruleEvidence(j *Job) (memGiB, util float64, ok bool) {
	switch {
	case j.JobstatsPeakGiB != nil && j.JobstatsUtil != nil:
		return *j.JobstatsPeakGiB, *j.JobstatsUtil, true
	case j.SacctPeakGiB != nil && j.SacctUtil != nil:
		return *j.SacctPeakGiB, *j.SacctUtil, true
	}
	return 0, 0, false
}
