package slurm

import "github.com/migadvisor/migadvisor/internal/versioned"

// An emulation ('migadvisor emulate', bench/emulate) run inside a job
// leaves EmulationDir(job id) in the job's working directory: its record,
// EmulationRecordName, and per profile the run's output and the monitor's
// summary of it. It is part of the job-output protocol: emulate writes it,
// collect reads it beside the job's output.

// EmulationVersion is the version of the record this build writes and reads.
const EmulationVersion = 1

// EmulationRecordName is the record in an emulation's directory.
const EmulationRecordName = "emulated.json"

// PlainProfile is the run of an emulation that could not use MPS: the job
// once, as it is, on the GPU it asked for.
const PlainProfile = "plain"

// EmulationDir is where an emulation keeps its runs: inside a Slurm job
// (its id), migadvisor-emulate-ID, where collect looks beside the job's
// output; else migadvisor-emulate.
func EmulationDir(jobID string) string {
	if jobID == "" {
		return "migadvisor-emulate"
	}
	return "migadvisor-emulate-" + jobID
}

// EmulationRecord is the record.
type EmulationRecord struct {
	Version int      `json:"version"`
	Site    string   `json:"site"`
	JobID   string   `json:"job_id,omitempty"`
	GPU     string   `json:"gpu,omitempty"` // the device the runs saw, as the monitor named it
	Command []string `json:"command"`
	Started string   `json:"started"` // RFC 3339, UTC
	// Whole is the whole GPU measured before the runs, with no MPS limits:
	// what each run's measure is a share of. nil: it could not be measured.
	Whole *SliceMeasure `json:"whole_gpu,omitempty"`
	Runs  []EmulatedRun `json:"runs"`
}

// SliceMeasure is what a GPU, or an emulated slice of one, was measured to
// have: the SMs a CUDA process sees there (an MPS client, its share) and the
// bandwidth of a device-to-device copy, which runs on those SMs. A real MIG
// slice has its share of the memory system; an emulated one draws on the
// whole GPU's, so its copy bandwidth is what sets it apart.
type SliceMeasure struct {
	Device  string  `json:"device,omitempty"`
	SMs     int     `json:"sms"`
	CopyGBs float64 `json:"copy_gb_s"`
	// ClockMHz is the mean SM clock while the run kept the GPU busy (the
	// monitor's): a few SMs run at a higher clock than all of them within
	// the GPU's power limit. 0: unknown.
	ClockMHz float64 `json:"sm_clock_mhz,omitempty"`
}

// EmulatedRun is one profile's run.
type EmulatedRun struct {
	Profile     string  `json:"profile"`
	Emulated    bool    `json:"emulated"` // under MPS limits; false for the whole GPU or the plain run
	Percentage  int     `json:"active_thread_pct,omitempty"`
	MemoryLimit string  `json:"mem_limit,omitempty"`
	Outcome     string  `json:"outcome"` // completed, failed, budget, cancelled
	ExitStatus  int     `json:"exit_status"`
	Seconds     float64 `json:"seconds"`
	Output      string  `json:"output"`            // stdout and stderr, relative to the directory
	Summary     string  `json:"summary,omitempty"` // the monitor's, relative to the directory
	Note        string  `json:"note,omitempty"`
	// Measured is the emulated slice as measured before the run, under
	// the same limits, and the SM clock during the run; nil: not measured.
	Measured *SliceMeasure `json:"measured,omitempty"`
}

// RanAt is the share of the whole GPU's SMs and copy bandwidth run had,
// measured: the SMs it was granted over the whole GPU's, times the clock it
// ran at over ratedMHz, and its copy bandwidth over the whole GPU's. ok is
// false when either was not measured.
//
// ratedMHz is the GPU's rated boost clock, the one catalog.Relative
// compares GPUs at: every run of an emulation, the whole GPU's among them,
// is held to that one clock, so a whole GPU that throttled to 1,333 MHz
// under a matrix product ran at 0.67 of its SMs' throughput, not at all of
// it while the GPU it is compared with is taken at 1,980. Where ratedMHz
// is 0 (a GPU the catalog lacks) the whole GPU's run's clock stands in for
// it; a run whose clock was not measured ran at it.
func (r *EmulationRecord) RanAt(run EmulatedRun, ratedMHz float64) (sm, bandwidth float64, ok bool) {
	w, m := r.Whole, run.Measured
	if w == nil || m == nil || w.SMs <= 0 || w.CopyGBs <= 0 || m.SMs <= 0 || m.CopyGBs <= 0 {
		return 0, 0, false
	}
	sm, bandwidth = float64(m.SMs)/float64(w.SMs), m.CopyGBs/w.CopyGBs
	if ratedMHz <= 0 {
		ratedMHz = r.wholeClock()
	}
	if ratedMHz > 0 && m.ClockMHz > 0 {
		sm *= m.ClockMHz / ratedMHz
	}
	return min(sm, 1), min(bandwidth, 1), true
}

// wholeClock is the SM clock the whole GPU's run ran at, 0 if unknown.
func (r *EmulationRecord) wholeClock() float64 {
	for _, run := range r.Runs {
		if !run.Emulated && run.Measured != nil && run.Measured.ClockMHz > 0 {
			return run.Measured.ClockMHz
		}
	}
	return 0
}

// Outcomes of an emulated run.
const (
	EmulatedCompleted = "completed"
	EmulatedFailed    = "failed"
	EmulatedBudget    = "budget"    // stopped at the emulation's budget
	EmulatedCancelled = "cancelled" // the job was cancelled or reached its limit: no result
)

// ParseEmulationRecord reads a record, refusing versions this build does
// not know.
func ParseEmulationRecord(path string, data []byte) (*EmulationRecord, error) {
	var r EmulationRecord
	if err := versioned.DecodeJSON(path, data, "migadvisor emulate", EmulationVersion, &r); err != nil {
		return nil, err
	}
	return &r, nil
}
