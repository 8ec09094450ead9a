package catalog

import (
	"fmt"
	"math"
	"strings"

	"github.com/migadvisor/migadvisor/slurm"
)

// Job is what the SU formula needs to know about a job.
type Job struct {
	Profile   *Profile // nil for a CPU-only job
	GPUs      int      // units of Profile (default 1 when Profile is set)
	CPUs      int      // default 1
	MemMiB    float64  // 0: the partition's default memory per CPU × CPUs
	Hours     float64
	QoS       string
	Partition string // "" = the profile's first partition, else the site default
	Exclusive bool   // --exclusive: billed for every CPU of the node

	// MemWholeNode is --mem=0: all the memory of each of Nodes nodes of the
	// partition charged (MemMiB is used where the site does not give it).
	MemWholeNode bool
	Nodes        int // default 1
}

// Charge is what a job costs.
type Charge struct {
	SUPerHour float64 `json:"su_per_hour"`
	SU        float64 `json:"su"`
	Hours     float64 `json:"hours"`
	Free      bool    `json:"free"`
	Reason    string  `json:"reason,omitempty"` // why it is free
	CPUs      int     `json:"cpus"`
	MemGiB    float64 `json:"mem_gib"`
	GPUGiB    float64 `json:"gpu_gib"` // billed GPU memory
	Partition string  `json:"partition,omitempty"`
	QoS       string  `json:"qos,omitempty"`
	// MemWholeNode: MemGiB is all the memory of Nodes nodes (--mem=0).
	MemWholeNode bool `json:"mem_whole_node,omitempty"`
	Nodes        int  `json:"nodes"`
}

// Charge applies the site's SU formula to a job.
func (s *Site) Charge(j Job) (Charge, error) {
	part := s.chargePartition(j)
	c := Charge{Hours: j.Hours, CPUs: max(j.CPUs, 1), QoS: j.QoS, Nodes: max(j.Nodes, 1)}
	if j.Hours < 0 || math.IsNaN(j.Hours) || math.IsInf(j.Hours, 0) {
		return c, fmt.Errorf("hours must be a finite number ≥ 0, not %g", j.Hours)
	}
	cpuWeight, memPerCPU := s.Billing.CPUWeight, s.Billing.MemoryPerCPU
	defMem := s.DefaultMemPerCPU
	if part != nil {
		c.Partition = part.Name
		if j.Exclusive && part.NodeCPUs > 0 {
			c.CPUs = max(c.CPUs, part.NodeCPUs)
		}
		if part.CPUWeight != nil {
			cpuWeight = *part.CPUWeight
		}
		if part.MemoryPerCPU != nil {
			memPerCPU = *part.MemoryPerCPU
		}
		if part.DefaultMemPerCPU > 0 {
			defMem = part.DefaultMemPerCPU
		}
	}
	mem := j.MemMiB
	if j.MemWholeNode && part != nil && part.NodeMemory > 0 {
		// sbatch's --mem=0: the nodes of the partition charged, whichever it is.
		mem, c.MemWholeNode = part.NodeMemory.MiB()*float64(c.Nodes), true
	}
	if mem <= 0 {
		mem = defMem.MiB() * float64(c.CPUs)
	}
	c.MemGiB = mem / 1024
	units := float64(c.CPUs)
	if memPerCPU > 0 {
		units = math.Max(units, mem/memPerCPU.MiB())
	}
	rate := cpuWeight * units
	if j.Profile != nil && s.Billing.GPUMemory > 0 {
		gpus := max(j.GPUs, 1)
		c.GPUGiB = j.Profile.BilledMemory.GiB() * float64(gpus)
		rate += s.Billing.GPUWeight * j.Profile.BilledMemory.MiB() * float64(gpus) / s.Billing.GPUMemory.MiB()
	}
	c.SUPerHour = rate
	switch {
	case j.QoS != "" && matchAny(s.Billing.FreeQoS, j.QoS):
		c.Free, c.Reason = true, fmt.Sprintf("QoS %s is not charged", j.QoS)
	case part != nil && part.Charged != nil && !*part.Charged:
		c.Free, c.Reason = true, fmt.Sprintf("partition %s is not charged", part.Name)
	}
	if c.Free {
		c.SUPerHour = 0
	}
	c.SU = c.SUPerHour * j.Hours
	return c, nil
}

// chargePartition is the partition whose billing rules apply.
func (s *Site) chargePartition(j Job) *Partition {
	name := j.Partition
	if name == "" && j.Profile != nil && len(j.Profile.Partitions) > 0 {
		name = j.Profile.Partitions[0]
	}
	if p, ok := s.Partition(name); ok {
		return p
	}
	if name == "" {
		if p, ok := s.DefaultPartition(); ok {
			return p
		}
	}
	return nil
}

// JobFor turns what a script asks for into the job the SU formula charges:
// its profile (from the GPU type; an unknown type is a *FileError whose File
// the caller fills in), CPUs, memory (the partition's default per CPU when
// it names none; --mem=0, the memory of its nodes where the site gives it),
// QoS, and its --time as the hours (1 without one).
func (s *Site) JobFor(r slurm.Resources) (Job, error) {
	job := Job{CPUs: r.CPUs(), Hours: 1, QoS: r.QoS, Exclusive: r.Exclusive}
	job.Partition, _, _ = strings.Cut(r.Partition, ",")
	if types := r.GPUTypes(); len(types) > 0 {
		p, ok := s.ProfileForType(types[0])
		if !ok {
			return Job{}, &FileError{Line: r.GPUs[0].Line, Msg: fmt.Sprintf("GPU type %q is not a profile of site %s", types[0], s.Name)}
		}
		job.Profile, job.GPUs = p, max(r.GPUCount(), 1)
	}
	job.Nodes = r.NodeCount()
	// --mem=0 is the memory of the nodes the job is charged on: its
	// partition's, or its GPU's, or the site's default one's.
	var nodeMiB int64
	if part := s.chargePartition(job); part != nil {
		nodeMiB = int64(part.NodeMemory.MiB())
	}
	job.MemWholeNode = r.MemAll && nodeMiB > 0
	job.MemMiB = float64(r.MemoryMiB(int64(s.DefaultMemPerCPUFor(job.Partition).MiB()), nodeMiB))
	if r.Time.Duration > 0 {
		job.Hours = r.Time.Hours()
	}
	return job, nil
}
