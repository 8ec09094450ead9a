package bench

import (
	"errors"
	"fmt"
	"path/filepath"
	"strings"

	"github.com/migadvisor/migadvisor/advisor"
	"github.com/migadvisor/migadvisor/catalog"
	"github.com/migadvisor/migadvisor/slurm"
)

// ProbePlan is what a probe is about to do, for the line that says so
// before its first submission: how many jobs, on which profiles, the most
// they can cost, and where their files go.
type ProbePlan struct {
	Profiles []string  // the profiles it may submit, from the smallest
	Jobs     []JobCost // each job it may submit, charged for its whole --time
	// MaxSU: the most the probe can cost, every job charged for the whole of
	// its --time (a ladder that stops early spends less). 0 when Unpriced.
	MaxSU    float64
	Unpriced string // why there is no figure, "" when there is
	Ladder   bool
	Emulate  bool   // one whole-GPU job runs every profile
	Dir      string // the variants' directory
	// Outputs is where each job's output (and the monitor's summary,
	// beside it) goes: the script's --output, or Slurm's default, from the
	// directory sbatch runs in (its --chdir, if it has one).
	Outputs string
}

// JobCost is one job's charge for the whole of its --time.
type JobCost struct {
	Profile   string
	Whole     bool // a whole GPU, not a MIG slice
	GPUs      int
	Hours     float64
	SUPerHour float64
	SU        float64
	// TimeFrom: "--time" (the variant's), or "the partition's limit" for a
	// script without --time.
	TimeFrom string
}

// PlanProbe says what Probe(opt) is about to submit and the most it can
// cost, priced by the site's SU formula on each variant as it would be
// written. It fails where writing the sweep would (lint errors, unknown
// profiles, a multi-GPU script on slices).
func PlanProbe(opt ProbeOptions) (ProbePlan, error) {
	s := opt.Sweep
	plan := ProbePlan{Profiles: s.Profiles, Ladder: opt.Ladder, Emulate: s.Emulate != nil, Dir: s.OutDir,
		Outputs: OutputsOf(s.Script, opt.WorkDir)}
	if err := checkScript(s); err != nil {
		return plan, err
	}
	profiles, err := selectProfiles(s.Site, s.Profiles)
	if err != nil {
		return plan, err
	}
	gpus, err := checkMultiGPU(s, profiles)
	if err != nil {
		return plan, err
	}
	fp := s.Script.Fingerprint()
	var planned []planned
	if s.Emulate != nil {
		pv, err := planEmulation(s, profiles, fp, gpus)
		if err != nil {
			return plan, err
		}
		planned = append(planned, pv)
	} else {
		for _, p := range profiles {
			pv, err := planVariant(s, p, fp, gpus)
			if err != nil {
				return plan, err
			}
			planned = append(planned, pv)
		}
	}
	for _, pv := range planned {
		c, err := priceVariant(s.Site, filepath.Join(s.OutDir, pv.variant.File), pv)
		if err != nil {
			plan.Unpriced, plan.MaxSU = err.Error(), 0
			return plan, nil
		}
		plan.Jobs = append(plan.Jobs, c)
		plan.MaxSU += c.SU
	}
	plan.MaxSU = catalog.RoundSU(plan.MaxSU)
	return plan, nil
}

// errNoTime is a variant that asks for no --time in a partition the site
// file gives no limit: nothing bounds its charge.
var errNoTime = errors.New("the script asks for no --time and the site file gives its partition no max_walltime")

// priceVariant charges a variant, read back as sbatch will read it, for
// the whole of its --time, or of its partition's limit without one.
func priceVariant(site *catalog.Site, file string, pv planned) (JobCost, error) {
	v := slurm.Parse(file, pv.data)
	c := JobCost{Profile: pv.variant.Profile, TimeFrom: "--time"}
	var over catalog.Overrides
	if t := v.Resources.Time; !t.IsSet() || t.Unlimited {
		part, _, _ := strings.Cut(v.Resources.Partition, ",")
		if part == "" {
			if p, ok := site.DefaultPartition(); ok {
				part = p.Name
			}
		}
		max, ok := site.MaxWalltimeFor(part)
		if !ok || max.Unlimited || max.Duration <= 0 {
			return c, errNoTime
		}
		h := max.Hours()
		over.Hours, c.TimeFrom = &h, "the partition's limit"
	}
	q, err := advisor.Price(site, v, over)
	if err != nil {
		return c, fmt.Errorf("%s: %w", pv.variant.Profile, err)
	}
	c.GPUs, c.Hours, c.SUPerHour = q.Job.GPUs, q.Charge.Hours, q.Charge.SUPerHour
	c.SU = c.SUPerHour * c.Hours // rounded once, in the sum
	c.Whole = q.Job.Profile != nil && !q.Job.Profile.IsMIG()
	return c, nil
}

// OutputsOf is where the script's jobs write their output when submitted
// from workDir: its --output (or Slurm's slurm-%j.out) against its
// --chdir, if any, else workDir; "%" patterns as Slurm fills them.
func OutputsOf(s *slurm.Script, workDir string) string {
	out := s.OutputFiles().Stdout
	if filepath.IsAbs(out) {
		return out
	}
	base := workDir
	if o := s.LastOption("chdir"); o != nil && o.Value != "" {
		if filepath.IsAbs(o.Value) {
			base = o.Value
		} else {
			base = filepath.Join(workDir, o.Value)
		}
	}
	return filepath.Join(base, out)
}
