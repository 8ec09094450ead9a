package collect

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"

	"github.com/migadvisor/migadvisor/advisor/base/history"
	"github.com/migadvisor/migadvisor/catalog"
	"github.com/migadvisor/migadvisor/slurm"
)

// An emulation ('migadvisor emulate') run inside a job leaves its runs
// beside the job's output (slurm.EmulationDir): collect reads them as it
// reads the job's own, one emulated run per profile.

// findEmulation is the path of job r's emulation record, in the directory
// of its output file (stdout) or its working directory; "" when it has none.
func findEmulation(r *history.JobRecord, stdout string) string {
	dirs := []string{filepath.Dir(stdout)}
	if r.WorkDir != "" && filepath.Clean(r.WorkDir) != dirs[0] {
		dirs = append(dirs, filepath.Clean(r.WorkDir))
	}
	for _, d := range dirs {
		dir := filepath.Join(d, slurm.EmulationDir(r.Key))
		if info, err := os.Lstat(dir); err != nil || !info.IsDir() {
			continue // a link is not the emulation's directory
		}
		if p := filepath.Join(dir, slurm.EmulationRecordName); regularFile(p) {
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
	rec, err := slurm.ParseEmulationRecord(path, data)
	if err != nil {
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
		e.SMShare, e.BandwidthShare, _ = rec.RanAt(run, catalog.RatedClockMHz(rec.GPU))
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
func (c *Collector) emulatedEvidence(dir string, run slurm.EmulatedRun, res *OutputResult) (*slurm.OutputEvidence, error) {
	none, _ := slurm.ScanOutput(strings.NewReader(""), c.Scan)
	// The record names regular files of its own directory; anything else
	// (another directory, a link, a pipe that would block) is not an
	// emulation's and is not read: collect may read users' files as admin.
	for _, name := range []string{run.Output, run.Summary} {
		if name != "" && !filepath.IsLocal(name) {
			return none, fmt.Errorf("%q is not a file of the emulation's directory", name)
		}
	}
	if run.Output == "" {
		return none, errors.New("it names no output file")
	}
	for _, name := range []string{run.Output, run.Summary} {
		if info, err := os.Lstat(filepath.Join(dir, name)); name != "" && err == nil && !info.Mode().IsRegular() {
			return none, fmt.Errorf("%s is not a regular file (a link or a pipe)", name)
		}
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

// regularFile reports whether path is a regular file itself, not a link.
func regularFile(path string) bool {
	info, err := os.Lstat(path)
	return err == nil && info.Mode().IsRegular()
}
