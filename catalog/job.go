package catalog

import (
	"fmt"
	"strings"

	"github.com/migadvisor/migadvisor/slurm"
)

// Usage is a job's resources as accounting, a table or a command line names
// them, the GPU profile by name: the one form every price that does not
// come from a batch script starts from (a script's starts from JobFor).
type Usage struct {
	Profile   string  // a profile's name or its Slurm GPU type (a100_10g); "" for a job without a GPU
	GPUs      int     // units of Profile; 0 counts as 1 when Profile is set
	CPUs      int     // 0 counts as 1
	MemMiB    float64 // 0: the partition's default memory per CPU × CPUs
	Hours     float64
	QoS       string
	Partition string // "" = the profile's first partition, else the site's default
	Exclusive bool
}

// JobOf is the job the SU formula charges for u. A profile the site does
// not know is an error: there is no honest figure for it.
func (s *Site) JobOf(u Usage) (Job, error) {
	j := Job{CPUs: u.CPUs, MemMiB: u.MemMiB, Hours: u.Hours, QoS: u.QoS, Partition: u.Partition, Exclusive: u.Exclusive}
	if u.Profile != "" {
		p, err := s.LookupProfile(u.Profile)
		if err != nil {
			return Job{}, err
		}
		j.Profile, j.GPUs = p, max(u.GPUs, 1)
	}
	return j, nil
}

// UnknownProfileError is a profile name that is neither a profile of the
// site nor the Slurm GPU type of one.
type UnknownProfileError struct {
	Site, Name string
	Known      []string // the site's profile names, in site order
}

func (e *UnknownProfileError) Error() string {
	return fmt.Sprintf("site %s has no profile %q (profiles: %s)", e.Site, e.Name, strings.Join(e.Known, ", "))
}

// LookupProfile finds a profile as a user names it, by its name (1g.10gb)
// or by the Slurm GPU type that asks for it (a100_10g at Wulver); the error
// lists the site's profiles. Every command that takes a profile from a user
// looks it up here, so that both names work everywhere.
func (s *Site) LookupProfile(name string) (*Profile, error) {
	if p, ok := s.ProfileNamed(name); ok {
		return p, nil
	}
	return nil, &UnknownProfileError{Site: s.Name, Name: name, Known: s.ProfileNames()}
}

// NoGPU is the profile name that prices a job without a GPU.
const NoGPU = "none"

// Overrides are the figures a command line gives for a job; nil where it
// gives none. Each replaces what the batch script asks for.
type Overrides struct {
	Profile   *string // a profile's name, its Slurm GPU type, or NoGPU
	GPUs      *int
	CPUs      *int
	MemMiB    *float64
	Hours     *float64
	QoS       *string
	Partition *string
	Exclusive *bool
}

// JobWith is the job a request is charged as: what the script asks for
// (script nil: none, so 1 CPU for 1 hour, with o naming the profile), with
// o's figures in place of the script's. Memory the script asks for per CPU,
// or leaves to the site's default per CPU, follows o's CPUs; a --mem of its
// own does not. A profile given without a GPU count is 1 of it, also where
// the script asks for no GPU.
func (s *Site) JobWith(script *slurm.Resources, o Overrides) (Job, error) {
	job := Job{GPUs: 1, CPUs: 1, Hours: 1}
	memPerCPU := int64(0) // 0 with perCPU: the site's default
	perCPU := true
	if script != nil {
		var err error
		if job, err = s.JobFor(*script); err != nil {
			return Job{}, err
		}
		perCPU = script.MemMiB == 0 && !script.MemAll && script.MemPerGPUMiB == 0
		memPerCPU = script.MemPerCPUMiB
	}
	if o.Profile != nil {
		job.Profile = nil
		if !strings.EqualFold(*o.Profile, NoGPU) {
			p, err := s.LookupProfile(*o.Profile)
			if err != nil {
				return Job{}, err
			}
			job.Profile = p
		}
	}
	switch {
	case o.GPUs != nil:
		job.GPUs = *o.GPUs
	case job.Profile != nil && job.GPUs == 0:
		job.GPUs = 1
	}
	if o.CPUs != nil {
		job.CPUs = *o.CPUs
		if perCPU {
			job.MemMiB = float64(memPerCPU * int64(job.CPUs))
		}
	}
	setIf(&job.MemMiB, o.MemMiB)
	setIf(&job.Hours, o.Hours)
	setIf(&job.QoS, o.QoS)
	setIf(&job.Partition, o.Partition)
	setIf(&job.Exclusive, o.Exclusive)
	if o.MemMiB != nil {
		// A figure of its own; 0, as in Slurm's --mem=0, is all of each node.
		job.MemWholeNode = *o.MemMiB == 0
	}
	return job, nil
}

func setIf[T any](field *T, v *T) {
	if v != nil {
		*field = *v
	}
}

// ListedJobMiB is the host memory of the job a profile's listed rate is
// for: the smallest sensible job, 1 CPU and 4 GB of RAM.
const ListedJobMiB = 4096

// ListedRate is a profile's SU per hour for the smallest sensible job (1
// GPU of the profile, 1 CPU, ListedJobMiB of RAM): the rate catalog lists
// and sites publish.
func (s *Site) ListedRate(p *Profile) (float64, error) {
	charge, err := s.Charge(Job{Profile: p, GPUs: 1, CPUs: 1, MemMiB: ListedJobMiB, Hours: 1})
	return charge.SUPerHour, err
}
