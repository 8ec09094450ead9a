package plan

import (
	"math"

	"github.com/migadvisor/migadvisor/advisor/base/history"
	"github.com/migadvisor/migadvisor/catalog"
)

// Calculator is Princeton's MIG calculator (job_defense_shield's
// mig_calculator_for_jobstats notebook) on the same period: the share of
// the whole GPUs' GPU-hours whose jobs had at most 10 cores and under 60
// GB of CPU memory per GPU, under 50% GPU utilisation and under 40 GB of
// GPU memory, "could run on a 40 GB MIG instance"; that share of the
// GPUs is the number to convert.
type Calculator struct {
	GPUHours      float64 `json:"gpu_hours"`          // of jobs on whole GPUs
	EligibleHours float64 `json:"eligible_gpu_hours"` // of those the rule passes
	Share         float64 `json:"share"`
	NoEvidence    int     `json:"jobs_without_figures"` // no GPU memory or utilisation: the rule cannot pass them
	GPUs          int     `json:"gpus_to_convert"`      // the share of the fleet's GPUs, rounded
	Profile       string  `json:"profile"`              // the site's 40 GB slice, two to a GPU
	// Outcome is the calculator's layout (that many GPUs, by whole nodes,
	// cut into two 40 GB slices each) replayed with the plan's demand.
	Outcome *Outcome `json:"replayed,omitempty"`
}

// The calculator's thresholds.
const (
	calcCoresPerGPU = 10
	calcMemPerGPUGB = 60
	calcUtil        = 50
	calcGPUMemGB    = 40
)

// calcTally sums the calculator's GPU-hours as the demand's jobs are read.
type calcTally struct {
	hours, eligible float64
	noEvidence      int
}

// add applies the calculator's rule to one job on whole GPUs.
func (c *calcTally) add(site *catalog.Site, r *history.JobRecord, j Job) {
	whole, ok := site.WholeProfile()
	if !ok || r.Profile != whole.Name {
		return
	}
	gpus := float64(max(r.GPUCount, 1))
	hours := gpus * float64(j.ElapsedS) / 3600
	c.hours += hours
	mem, util, ok := calcEvidence(r)
	if !ok {
		c.noEvidence++
		return
	}
	cores, cpuMemGB := 0.0, 0.0
	if r.CPUs != nil {
		cores = float64(*r.CPUs) / gpus
	}
	if r.ReqMemMiB != nil {
		cpuMemGB = *r.ReqMemMiB / 1024 / gpus
	}
	if cores <= calcCoresPerGPU && cpuMemGB < calcMemPerGPUGB && util < calcUtil && mem < calcGPUMemGB {
		c.eligible += hours
	}
}

// calculate is the calculator's figure for a fleet of so many GPUs.
func calculate(site *catalog.Site, t calcTally, fleetGPUs int) *Calculator {
	if _, ok := site.WholeProfile(); !ok {
		return nil
	}
	c := &Calculator{NoEvidence: t.noEvidence, Profile: fortyGB(site)}
	if t.hours > 0 {
		c.Share = t.eligible / t.hours
	}
	c.GPUs = int(math.Round(c.Share * float64(fleetGPUs)))
	c.GPUHours, c.EligibleHours = math.Round(t.hours*10)/10, math.Round(t.eligible*10)/10
	c.Share = math.Round(c.Share*1000) / 1000
	return c
}

// calcEvidence is the job's largest GPU memory (GB) and utilisation (%)
// as the notebook reads them, jobstats', else Slurm's TRES.
func calcEvidence(r *history.JobRecord) (memGB, util float64, ok bool) {
	var mem, u *float64
	switch {
	case r.JobstatsPeakMiB != nil:
		mem = r.JobstatsPeakMiB
	case r.AcctGPUMemMiB != nil:
		mem = r.AcctGPUMemMiB
	}
	switch {
	case r.JobstatsUtil != nil:
		u = r.JobstatsUtil
	case r.GPUUtil != nil:
		u = r.GPUUtil
	}
	if mem == nil || u == nil {
		return 0, 0, false
	}
	return *mem * 1024 * 1024 / 1e9, *u, true
}

// fortyGB is the site's MIG profile of about 40 GB of which a GPU holds
// two: the calculator's instance ("" where the site has none).
func fortyGB(site *catalog.Site) string {
	for _, p := range site.ProfilesBySize() {
		gib := p.UsableMemory.MiB() / 1024
		if p.IsMIG() && gib >= 36 && gib <= 44 {
			if l, err := site.GPULayout(p.Name + "," + p.Name); err == nil && len(l) == 2 {
				return p.Name
			}
		}
	}
	return ""
}
