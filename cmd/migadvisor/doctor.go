package main

import (
	"context"
	"os"
	"time"

	"github.com/urfave/cli/v2"

	"github.com/migadvisor/migadvisor/advisor/app/doctor"
)

func doctorCommand() *cli.Command {
	return &cli.Command{
		Name:        "doctor",
		Usage:       "for admins: check the setup (site file, published history and index, notices, what sbatch goes through)",
		Description: helpText("doctor"),
		Flags: []cli.Flag{
			&cli.DurationFlag{Name: "max-age", Value: doctor.DefaultMaxAge, Usage: "the oldest the published advice index may be before it is a problem"},
			jsonFlag(),
		},
		Action: bindAction(doctorOptionsFrom, runDoctor),
	}
}

// doctorOptions are doctor's flags.
type doctorOptions struct {
	Global globalFlags
	MaxAge time.Duration
	JSON   bool
}

func doctorOptionsFrom(c *cli.Context) (doctorOptions, error) {
	if err := noArgs(c); err != nil {
		return doctorOptions{}, err
	}
	o := doctorOptions{Global: globalFlagsFrom(c), MaxAge: c.Duration("max-age"), JSON: c.Bool("json")}
	if o.MaxAge <= 0 {
		return o, usageError{"--max-age is a duration such as 2h, not " + o.MaxAge.String()}
	}
	return o, nil
}

// runDoctor prints the checks and exits 1 where any is a problem.
func runDoctor(ctx context.Context, o doctorOptions, w outWriters) error {
	self, _ := os.Executable() // the fixes name this migadvisor
	r := doctor.Run(ctx, doctor.Request{Site: o.Global.Site, Getenv: os.Getenv, Now: time.Now(), MaxAge: o.MaxAge, Self: self})
	if o.JSON {
		if err := writeJSON(w.Out, r); err != nil {
			return err
		}
	} else {
		r.WriteText(w.Out)
	}
	if !r.OK() {
		return silentExit(exitFailure)
	}
	return nil
}
