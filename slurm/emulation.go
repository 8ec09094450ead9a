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
	Version int           `json:"version"`
	Site    string        `json:"site"`
	JobID   string        `json:"job_id,omitempty"`
	GPU     string        `json:"gpu,omitempty"` // the device the runs saw, as the monitor named it
	Command []string      `json:"command"`
	Started string        `json:"started"` // RFC 3339, UTC
	Runs    []EmulatedRun `json:"runs"`
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
