package collect

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"

	"github.com/migadvisor/migadvisor/advisor/history"
	"github.com/migadvisor/migadvisor/internal/versioned"
	"github.com/migadvisor/migadvisor/slurm"
)

// An emulation (migadvisor emulate, bench/emulate) run inside a job leaves
// migadvisor-emulate-<job key>/ in the job's working directory: its record
// (emulated.json) and, per profile, the run's output and the monitor's
// summary of it. collect reads it beside the job's output, as it reads the
// job's own. (bench/emulate stands above this package: the format is
// repeated here, as the monitor's summary is in slurm.)

// emulationVersion is the version of emulated.json this build reads.
const emulationVersion = 1

// emulationRecordName is the record in an emulation's directory.
const emulationRecordName = "emulated.json"

// emulationDir is the directory an emulation run in job key keeps its
// runs in (bench/emulate.DirName).
func emulationDir(key string) string { return "migadvisor-emulate-" + key }

// emulationRecord is what collect reads of emulated.json.
type emulationRecord struct {
	Version int            `json:"version"`
	GPU     string         `json:"gpu"` // the GPU the runs saw; "" in older records
	Runs    []emulationRun `json:"runs"`
}

// emulationRun is one run of emulated.json (bench/emulate.Result).
type emulationRun struct {
	Profile     string  `json:"profile"`
	Emulated    bool    `json:"emulated"`
	Percentage  int     `json:"active_thread_pct"`
	MemoryLimit string  `json:"mem_limit"`
	Outcome     string  `json:"outcome"`
	ExitStatus  int     `json:"exit_status"`
	Seconds     float64 `json:"seconds"`
	Output      string  `json:"output"`  // relative to the directory
	Summary     string  `json:"summary"` // the monitor's, relative to the directory; "" if none
}

// findEmulation is the path of job r's emulation record, in the directory
// of its output file (stdout) or its working directory; "" when it has none.
func findEmulation(r *history.JobRecord, stdout string) string {
	dirs := []string{filepath.Dir(stdout)}
	if r.WorkDir != "" && filepath.Clean(r.WorkDir) != dirs[0] {
		dirs = append(dirs, filepath.Clean(r.WorkDir))
	}
	for _, d := range dirs {
		p := filepath.Join(d, emulationDir(r.Key), emulationRecordName)
		if _, err := os.Stat(p); err == nil {
			return p
		}
	}
	return ""
}

// readEmulation reads the emulation job r ran, when it left one, and
// records its runs; it returns how many it recorded. A record that cannot
// be read (or of a version this build does not read) is reported in
// res.Unread and leaves the job's emulated runs as they were; a run whose
// output cannot be read is recorded without evidence, and reported.
func (c *Collector) readEmulation(ctx context.Context, r *history.JobRecord, stdout string, res *OutputResult) (int, error) {
	path := findEmulation(r, stdout)
	if path == "" {
		return 0, nil
	}
	data, err := os.ReadFile(path)
	if err != nil {
		res.Unread = append(res.Unread, err.Error()) // it names the file
		return 0, nil
	}
	var rec emulationRecord
	if err := versioned.DecodeJSON(path, data, "migadvisor emulate", emulationVersion, &rec); err != nil {
		res.Unread = append(res.Unread, err.Error())
		return 0, nil
	}
	dir := filepath.Dir(path)
	runs := make([]history.EmulatedRun, 0, len(rec.Runs))
	for _, run := range rec.Runs {
		if run.Profile == "" {
			res.Unread = append(res.Unread, fmt.Sprintf("%s: a run names no profile", path))
			continue
		}
		ev, err := c.emulatedEvidence(dir, run, res)
		if err != nil {
			res.Unread = append(res.Unread, fmt.Sprintf("%s: the %s run: %v", path, run.Profile, err))
		}
		e := history.EmulatedRun{Profile: run.Profile, GPU: rec.GPU, Percentage: run.Percentage, MemLimit: run.MemoryLimit,
			Outcome: run.Outcome, ExitStatus: run.ExitStatus, Seconds: run.Seconds, Evidence: *ev}
		if !run.Emulated {
			e.Percentage, e.MemLimit = 100, "" // the whole GPU, no MPS limits
		}
		if e.GPU == "" {
			e.GPU = ev.GPUDevice // the summary's device, else the monitor line's
		}
		runs = append(runs, e)
	}
	if err := c.Store.RecordEmulated(ctx, r.Cluster, r.Key, runs); err != nil {
		return 0, err
	}
	return len(runs), nil
}

// emulatedEvidence is what one run's output and summary showed, read as a
// job's are (scanFiles, then applySummary). Where they cannot be read it
// returns why, with the evidence of nothing (every figure unknown).
func (c *Collector) emulatedEvidence(dir string, run emulationRun, res *OutputResult) (*slurm.OutputEvidence, error) {
	none, _ := slurm.ScanOutput(strings.NewReader(""), c.Scan)
	// The record names files of its own directory; any other path is not
	// an emulation's, and is not read (collect may read users' files as an
	// admin).
	for _, name := range []string{run.Output, run.Summary} {
		if name != "" && !filepath.IsLocal(name) {
			return none, fmt.Errorf("%q is not a file of the emulation's directory", name)
		}
	}
	if run.Output == "" {
		return none, errors.New("it names no output file")
	}
	ev, err := c.scanFiles([]string{filepath.Join(dir, run.Output)}, res)
	if err != nil {
		return none, err
	}
	if run.Summary != "" {
		if err := applySummary(ev, filepath.Join(dir, run.Summary)); err != nil {
			return ev, err
		}
	}
	return ev, nil
}
