package emulate

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"path/filepath"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/migadvisor/migadvisor/internal/atomicfile"
	"github.com/migadvisor/migadvisor/slurm"
)

// Recorded runs the command once per target as Run does, with the whole
// GPU measured first (opt.Measure with no limits, which becomes
// opt.Whole), and keeps the record of site's emulation in job jobID (""
// outside Slurm) in opt.Dir after each run, so that a job killed midway
// keeps what it measured for collect. A measure or a record that fails is
// said on opt.Stderr and stops nothing; a cancel (the job's scancel) ends
// it with the runs made, and none made is an error.
func Recorded(ctx context.Context, opt Options, site, jobID string) (*slurm.EmulationRecord, error) {
	rec := &slurm.EmulationRecord{Version: slurm.EmulationVersion, Site: site, JobID: jobID, Command: opt.Command,
		Started: time.Now().UTC().Format(time.RFC3339)}
	if opt.Measure != nil {
		var err error
		if rec.Whole, err = Measure(ctx, opt.Measure, opt.Env); err != nil {
			fmt.Fprintf(opt.Stderr, "migadvisor emulate: the whole GPU could not be measured (times stay as they ran): %v\n", err)
		}
	}
	opt.Whole = rec.Whole
	opt.Ran = func(runs []Result) {
		rec.Runs, rec.GPU = runs, deviceOf(opt.Dir, runs)
		if err := writeRecord(opt.Dir, rec); err != nil {
			fmt.Fprintf(opt.Stderr, "migadvisor emulate: the record: %v\n", err)
		}
	}
	var err error
	if rec.Runs, err = Run(ctx, opt); err != nil && !errors.Is(err, context.Canceled) {
		return nil, err
	}
	if len(rec.Runs) == 0 {
		return nil, errors.New("no run was made")
	}
	return rec, nil
}

// writeRecord replaces the record in dir whole: a reader never sees half.
func writeRecord(dir string, rec *slurm.EmulationRecord) error {
	data, err := json.MarshalIndent(rec, "", "  ")
	if err != nil {
		return err
	}
	return atomicfile.Write(filepath.Join(dir, slurm.EmulationRecordName), append(data, '\n'), 0o644)
}

// deviceOf is the GPU the runs saw: the first monitor summary's device.
func deviceOf(dir string, runs []Result) string {
	for _, r := range runs {
		if r.Summary == "" {
			continue
		}
		if d, ok := slurm.FirstMonitorDevice(filepath.Join(dir, r.Summary)); ok {
			return d.Name
		}
	}
	return ""
}

// WriteTable writes the runs as a table, a profile a row with the SMs and
// the memory cap it ran under and its output file in dir.
func WriteTable(w io.Writer, dir string, runs []Result) error {
	t := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	fmt.Fprintln(t, "PROFILE\tSMS\tMEMORY CAP\tOUTCOME\tEXIT\tSECONDS\tOUTPUT")
	for _, r := range runs {
		sms, capText := "all", "none"
		if r.Emulated {
			sms, capText = fmt.Sprintf("%d%%", r.Percentage), strings.TrimPrefix(r.MemoryLimit, "0=")
		}
		fmt.Fprintf(t, "%s\t%s\t%s\t%s\t%d\t%.1f\t%s\n", r.Profile, sms, capText, r.Outcome, r.ExitStatus, r.Seconds,
			filepath.Join(dir, r.Output))
	}
	return t.Flush()
}
