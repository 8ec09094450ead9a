package advisor

import (
	"errors"
	"fmt"

	"github.com/migadvisor/migadvisor/advisor/base/lint"
	"github.com/migadvisor/migadvisor/catalog"
	"github.com/migadvisor/migadvisor/slurm"
)

// Quote is what a request costs at a site, as su prints it: the job it is
// charged as, the charge rounded once (so text and JSON hold the same
// figures), and what the price leaves out or is over.
type Quote struct {
	Job      catalog.Job
	Charge   catalog.Charge
	Warnings []lint.Finding
	// AtMost: the hours are the script's --time, a limit, so the charge is
	// the most the job can be charged (it is charged for what it runs).
	AtMost bool
}

// ErrNoUnits is a request of fewer than one CPU, or of a GPU profile with
// fewer than one GPU: nothing to price.
var ErrNoUnits = errors.New("--cpus and --gpus must be at least 1")

// Price prices a request: what script asks for (nil: no script, so 1 CPU
// for 1 hour), with the figures over gives in place of the script's. A
// value sbatch would reject has no price: the error names the script's
// file and line.
func Price(site *catalog.Site, script *slurm.Script, over catalog.Overrides) (*Quote, error) {
	var asked *slurm.Resources
	if script != nil {
		for _, p := range script.Problems {
			if p.Fatal && p.Code == "bad-value" {
				return nil, fmt.Errorf("%s:%d: %s", script.Path, p.Line, p.Message)
			}
		}
		asked = &script.Resources
	}
	job, err := site.JobWith(asked, over)
	if err != nil && script != nil {
		return nil, inFile(err, script.Path)
	}
	if err != nil {
		return nil, err
	}
	if job.CPUs < 1 || job.Profile != nil && job.GPUs < 1 {
		return nil, ErrNoUnits
	}
	charge, err := site.Charge(job)
	if err != nil {
		return nil, err
	}
	charge.SU, charge.SUPerHour = catalog.RoundSU(charge.SU), catalog.RoundSU(charge.SUPerHour)
	warnings := lint.ChargeWarnings(script, site, job, charge)
	if warnings == nil {
		warnings = []lint.Finding{}
	}
	atMost := script != nil && over.Hours == nil && script.Resources.Time.Duration > 0 && !script.Resources.Time.Unlimited
	return &Quote{Job: job, Charge: charge, Warnings: warnings, AtMost: atMost}, nil
}
