package main

import (
	"errors"
	"fmt"
	"strings"

	"github.com/urfave/cli/v2"

	"github.com/migadvisor/migadvisor/advisor"
	"github.com/migadvisor/migadvisor/catalog"
	"github.com/migadvisor/migadvisor/slurm"
)

type suReport struct {
	Site    string `json:"site"`
	Profile string `json:"profile,omitempty"`
	GPUs    int    `json:"gpus"`
	catalog.Charge
	// Warnings: #SBATCH lines sbatch ignores, limits the request is over.
	Warnings []advisor.Finding `json:"warnings"`
}

func suCommand() *cli.Command {
	return withUsageErrors(&cli.Command{
		Name:      "su",
		Usage:     "what a job is charged in service units",
		ArgsUsage: "[JOB.sh]",
		Description: `Applies the site's SU formula (on Wulver: (max(CPUs, RAM_GB/4) + 16 × GPU_GB/80) × hours)
to a request given by flags, or read from JOB.sh (its --time gives the most the
job can be charged). Flags override what the script says. Without --hours or
--time the charge is for one hour. SU are rounded to three significant digits
(whole SU from 100), the same in text and in --json.

JOB.sh is read as sbatch reads it: a job without a GPU is priced by its CPUs
and memory alone (max(CPUs, RAM_GB/4) on Wulver); --mem=0 is all the memory of
each node of the partition it is priced in; #SBATCH lines after the first
command are left out, as sbatch ignores them, and named on stderr, with a
launcher that starts more GPU processes than the GPUs priced (torchrun
--nproc_per_node=4 on one GPU) and a --time, CPUs or memory per node over the
partition's limits, the default memory per CPU included (Slurm would not
start the job, but the price is for what it asks).

Examples:
   migadvisor su --profile 2g.20gb --cpus 1 --mem 4G --hours 0.556     # 2.78 SU
   migadvisor su --profile full --cpus 4 --mem 64G                     # 32 SU/h
   migadvisor su --profile 1g.10gb --time 1-00:00:00 --qos low         # 0: low is free
   migadvisor su --profile none --cpus 8 --mem 64G --hours 2           # 32 SU: CPU only
   migadvisor su --json job.sh`,
		Flags: []cli.Flag{
			&cli.StringFlag{Name: "profile", Usage: "GPU profile, or its GRES type (see 'migadvisor catalog'); none for a CPU-only job"},
			&cli.IntFlag{Name: "gpus", Value: 1, DefaultText: "1, or the script's", Usage: "how many of the profile"},
			&cli.IntFlag{Name: "cpus", Value: 1, DefaultText: "1, or the script's", Usage: "CPUs"},
			&cli.StringFlag{Name: "mem", Usage: "memory for the job, Slurm style (4G, 4000M); default: the script's, else the site's memory per CPU × CPUs"},
			&cli.Float64Flag{Name: "hours", DefaultText: "1, or the script's --time", Usage: "run time in hours"},
			&cli.StringFlag{Name: "time", Usage: "run time in Slurm format (MM, HH:MM:SS, D-HH:MM...)"},
			&cli.StringFlag{Name: "qos", Usage: "QoS (some are not charged)"},
			&cli.StringFlag{Name: "partition", DefaultText: "the script's, else the profile's first, else the site's default", Usage: "partition"},
			&cli.BoolFlag{Name: "exclusive", Usage: "the job has whole nodes (billed for all their CPUs)"},
			jsonFlag(),
		},
		Action: runSU,
	})
}

func runSU(c *cli.Context) error {
	if c.NArg() > 1 {
		return usageError{"su takes at most one JOB.sh"}
	}
	if c.IsSet("hours") && c.IsSet("time") {
		return usageError{"give --hours or --time, not both"}
	}
	site, err := loadSite(c)
	if err != nil {
		return err
	}
	job := catalog.Job{GPUs: 1, CPUs: 1, Hours: 1}
	var script *slurm.Script
	if c.NArg() == 1 {
		if script, job, err = jobFromScript(c.Args().First(), site); err != nil {
			return err
		}
	}
	if err := applySUFlags(c, site, &job); err != nil {
		return err
	}
	charge, err := site.Charge(job)
	if err != nil {
		return err
	}
	// Rounded once, so that text and JSON hold the same figures.
	charge.SU, charge.SUPerHour = advisor.RoundSU(charge.SU), advisor.RoundSU(charge.SUPerHour)
	r := suReport{Site: site.Name, GPUs: job.GPUs, Charge: charge, Warnings: advisor.ChargeWarnings(script, site, job, charge)}
	if r.Warnings == nil {
		r.Warnings = []advisor.Finding{}
	}
	if job.Profile != nil {
		r.Profile = job.Profile.Name
	} else {
		r.GPUs = 0
	}
	if c.Bool("json") {
		return writeJSON(c.App.Writer, r)
	}
	fmt.Fprintln(c.App.Writer, describeCharge(r))
	for _, w := range r.Warnings {
		fmt.Fprintln(c.App.ErrWriter, warningLine(c.Args().First(), w))
	}
	return nil
}

// warningLine is FILE:LINE: MESSAGE, FILE: MESSAGE for a figure a flag
// gave, or warning: MESSAGE without a script.
func warningLine(file string, w advisor.Finding) string {
	switch {
	case file == "":
		return "warning: " + w.Message
	case w.Line == 0:
		return fmt.Sprintf("%s: %s", file, w.Message)
	}
	return fmt.Sprintf("%s:%d: %s", file, w.Line, w.Message)
}

// jobFromScript reads the request from a batch script.
func jobFromScript(path string, site *catalog.Site) (*slurm.Script, catalog.Job, error) {
	s, err := slurm.ReadScript(path)
	if err != nil {
		return nil, catalog.Job{}, err
	}
	for _, p := range s.Problems {
		if p.Fatal && p.Code == "bad-value" {
			return nil, catalog.Job{}, fmt.Errorf("%s:%d: %s", path, p.Line, p.Message)
		}
	}
	job, err := site.JobFor(s.Resources)
	var fe *catalog.FileError
	if errors.As(err, &fe) {
		fe.File = path
	}
	return s, job, err
}

func applySUFlags(c *cli.Context, site *catalog.Site, job *catalog.Job) error {
	if c.IsSet("profile") || c.NArg() == 0 {
		name := c.String("profile")
		if name == "" && c.NArg() == 0 {
			return usageError{"su needs --profile (or a JOB.sh); profiles: " + strings.Join(site.ProfileNames(), ", ")}
		}
		if !strings.EqualFold(name, "none") {
			p, ok := site.ProfileNamed(name)
			if !ok {
				return fmt.Errorf("site %s has no profile %q (profiles: %s)", site.Name, name, strings.Join(site.ProfileNames(), ", "))
			}
			job.Profile = p
		} else {
			job.Profile = nil
		}
	}
	if c.IsSet("gpus") || c.NArg() == 0 || job.Profile != nil && job.GPUs == 0 {
		job.GPUs = c.Int("gpus") // 1 unless given: a script that asks for none priced on a profile
	}
	if c.IsSet("cpus") || c.NArg() == 0 {
		job.CPUs = c.Int("cpus")
		if !c.IsSet("mem") {
			job.MemMiB = 0 // the default per CPU follows the CPUs
		}
	}
	if job.CPUs < 1 || job.Profile != nil && job.GPUs < 1 {
		return usageError{"--cpus and --gpus must be at least 1"}
	}
	if c.IsSet("mem") {
		mib, err := slurm.ParseMemoryMiB(c.String("mem"))
		if err != nil {
			return usageError{"--mem: " + err.Error()}
		}
		job.MemMiB = float64(mib)
	}
	switch {
	case c.IsSet("hours"):
		job.Hours = c.Float64("hours")
	case c.IsSet("time"):
		t, err := slurm.ParseTimeLimit(c.String("time"))
		if err != nil || t.Unlimited {
			return usageError{fmt.Sprintf("--time %q is not a finite Slurm time", c.String("time"))}
		}
		job.Hours = t.Hours()
	}
	if c.IsSet("qos") {
		job.QoS = c.String("qos")
	}
	if c.IsSet("partition") {
		job.Partition = c.String("partition")
	}
	if c.IsSet("exclusive") {
		job.Exclusive = c.Bool("exclusive")
	}
	return nil
}

func describeCharge(r suReport) string {
	what := "CPU only"
	if r.Profile != "" {
		what = r.Profile
		if r.GPUs > 1 {
			what = fmt.Sprintf("%d × %s", r.GPUs, r.Profile)
		}
	}
	mem := formatNumber(r.MemGiB) + " GiB RAM"
	if r.MemWholeNode {
		nodes := "a " + r.Partition + " node"
		if r.Nodes > 1 {
			nodes = fmt.Sprintf("%d %s nodes", r.Nodes, r.Partition)
		}
		mem += " (--mem=0: all of " + nodes + ")"
	}
	head := fmt.Sprintf("%s, %s, %s, %s h", what, plural(r.CPUs, "CPU"), mem, formatNumber(r.Hours))
	if r.Partition != "" {
		head += " in " + r.Partition
	}
	if r.Free {
		return fmt.Sprintf("%s on %s: 0 SU (%s)", head, r.Site, r.Reason)
	}
	return fmt.Sprintf("%s on %s: %s SU (%s SU/h)", head, r.Site, advisor.FormatSU(r.SU), advisor.FormatSU(r.SUPerHour))
}
