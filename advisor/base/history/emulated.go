package history

import (
	"context"
	"database/sql"
	"encoding/json"
	"fmt"

	"github.com/migadvisor/migadvisor/slurm"
)

// EmulatedRun is one run of a job's emulation (migadvisor emulate): the
// job's command run once for a MIG profile on a whole GPU, under the CUDA
// MPS limits that stand for the profile's slice (its share of the SMs, its
// usable memory), with what its own output showed. MPS partitions SMs, not
// the memory system: an emulated slice keeps the whole GPU's bandwidth.
type EmulatedRun struct {
	// Profile is the profile emulated; the whole GPU's ("full") ran with
	// no limits, and "plain" is the one run made when MPS could not be used.
	Profile string
	// GPU is the device that ran it ("NVIDIA H100 80GB HBM3"), "" if unknown.
	GPU string
	// Percentage is the MPS active-thread percentage (the share of the
	// SMs), 100 for a run with no MPS limits.
	Percentage int
	// MemLimit is the device memory cap (CUDA_MPS_PINNED_DEVICE_MEM_LIMIT:
	// "0=9728M"), "" for none.
	MemLimit string
	// Outcome is how the run ended: completed, failed, or budget (stopped
	// at the emulation's time budget).
	Outcome string
	// ExitStatus is the run's exit status (128+N when signal N ended it).
	ExitStatus int
	// Seconds is how long the run took.
	Seconds float64
	// SMShare and BandwidthShare are the share of the whole GPU's SMs (at
	// the clock it ran at) and copy bandwidth the run had, measured; 0:
	// not measured (the run is taken at its profile's shares).
	SMShare, BandwidthShare float64
	// Evidence is what the run's output (and the monitor's summary of it)
	// showed, as a job's output evidence: its GPU OOM, its peak GPU
	// memory. Its figures are slurm.Unknown where it showed none.
	Evidence slurm.OutputEvidence
}

// PeakMiB is the run's peak GPU memory, the job's own (the rule of
// slurm.JobPeakMiB, which the evidence's figure follows); nil when the
// monitor measured none.
func (e *EmulatedRun) PeakMiB() *float64 {
	if e.Evidence.GPUSource == "" || e.Evidence.GPUPeakMiB < 0 {
		return nil
	}
	v := e.Evidence.GPUPeakMiB
	return &v
}

// OOM is "gpu" when the run's output shows a GPU out-of-memory error (the
// emulated slice's memory was too small), "host" for a host-memory kill,
// "" otherwise.
func (e *EmulatedRun) OOM() string {
	switch {
	case e.Evidence.GPUOOM != nil:
		return slurm.OOMGPU
	case e.Evidence.HostOOM != nil:
		return slurm.OOMHost
	}
	return ""
}

// RecordEmulated stores the runs of the emulation that job key of cluster
// ran, in one transaction, replacing the runs recorded for it before (none
// clears them). Their order is kept: the emulation's, smallest profile
// first.
func (s *Store) RecordEmulated(ctx context.Context, cluster, key string, runs []EmulatedRun) error {
	tx, err := s.db.BeginTx(ctx, nil)
	if err != nil {
		return fmt.Errorf("record emulated runs of job %s: %w", key, err)
	}
	defer tx.Rollback()
	if _, err := tx.ExecContext(ctx, `DELETE FROM emulated_runs WHERE cluster = ? AND job_key = ?`, cluster, key); err != nil {
		return fmt.Errorf("record emulated runs of job %s: %w", key, err)
	}
	for _, r := range runs {
		ev, err := json.Marshal(&r.Evidence)
		if err != nil {
			return fmt.Errorf("record emulated run %s of job %s: %w", r.Profile, key, err)
		}
		if _, err := tx.ExecContext(ctx, `INSERT OR REPLACE INTO emulated_runs(cluster, job_key, profile, gpu, sm_pct, mem_limit,
			outcome, exit_status, seconds, evidence, sm_share, bw_share) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`,
			cluster, key, r.Profile, r.GPU, r.Percentage, r.MemLimit, r.Outcome, r.ExitStatus, r.Seconds, string(ev),
			nullIfZero(r.SMShare), nullIfZero(r.BandwidthShare)); err != nil {
			return fmt.Errorf("record emulated run %s of job %s: %w", r.Profile, key, err)
		}
	}
	if err := tx.Commit(); err != nil {
		return fmt.Errorf("record emulated runs of job %s: %w", key, err)
	}
	return nil
}

func nullIfZero(v float64) any {
	if v <= 0 {
		return nil
	}
	return v
}

// emulatedColumns are an emulated run's columns, as scanEmulated reads
// them; a schema before schemaRanAt has no measured shares.
func (s *Store) emulatedColumns() string {
	shares := "e.sm_share, e.bw_share"
	if s.schema < schemaRanAt {
		shares = "NULL, NULL"
	}
	return `e.cluster, e.job_key, e.profile, coalesce(e.gpu, ''), coalesce(e.sm_pct, 0), coalesce(e.mem_limit, ''),
	coalesce(e.outcome, ''), coalesce(e.exit_status, 0), coalesce(e.seconds, 0), e.evidence, ` + shares
}

// emulatedByTable is how many jobs' emulated runs are read by reading the
// whole table rather than looking each job up: emulations are few beside
// jobs, and a list of keys this long costs more to build and walk.
const emulatedByTable = 10_000

// fillEmulated gives each record its emulated runs, in one query for them
// all; a schema before schemaEmulated (read-only) has none.
func (s *Store) fillEmulated(ctx context.Context, recs []JobRecord) error {
	return s.fillEmulatedFrom(ctx, s.db, recs)
}

// querier is what reads: the history's pool, or one connection of it.
type querier interface {
	QueryContext(ctx context.Context, query string, args ...any) (*sql.Rows, error)
	QueryRowContext(ctx context.Context, query string, args ...any) *sql.Row
}

// fillEmulatedFrom is fillEmulated through q.
func (s *Store) fillEmulatedFrom(ctx context.Context, q querier, recs []JobRecord) error {
	if s.schema < schemaEmulated || len(recs) == 0 {
		return nil
	}
	at := make(map[[2]string][]int, len(recs))
	var keys [][2]string
	for i := range recs {
		k := [2]string{recs[i].Cluster, recs[i].Key}
		if _, seen := at[k]; !seen {
			keys = append(keys, k)
		}
		at[k] = append(at[k], i)
	}
	var rows *sql.Rows
	var err error
	if len(keys) > emulatedByTable {
		rows, err = q.QueryContext(ctx, `SELECT `+s.emulatedColumns()+` FROM emulated_runs e ORDER BY e.rowid`)
	} else {
		// The keys as one JSON array of [cluster, key] pairs: the statement
		// is the same whatever their number, and each is a primary-key
		// lookup (CROSS JOIN keeps the list the outer loop).
		list, jerr := json.Marshal(keys)
		if jerr != nil {
			return fmt.Errorf("read emulated runs: %w", jerr)
		}
		rows, err = q.QueryContext(ctx, `SELECT `+s.emulatedColumns()+` FROM json_each(?) k CROSS JOIN emulated_runs e
			ON e.cluster = json_extract(k.value, '$[0]') AND e.job_key = json_extract(k.value, '$[1]')
			ORDER BY k.key, e.rowid`, string(list))
	}
	if err != nil {
		return fmt.Errorf("read emulated runs: %w", err)
	}
	defer rows.Close()
	for rows.Next() {
		var k [2]string
		run, err := scanEmulated(rows, &k)
		if err != nil {
			return fmt.Errorf("read emulated runs: %w", err)
		}
		for _, i := range at[k] {
			recs[i].Emulated = append(recs[i].Emulated, run)
		}
	}
	if err := rows.Err(); err != nil {
		return fmt.Errorf("read emulated runs: %w", err)
	}
	return nil
}

// scanEmulated reads a row of emulatedColumns, its job's cluster and key
// into key.
func scanEmulated(rows *sql.Rows, key *[2]string) (EmulatedRun, error) {
	var r EmulatedRun
	var evidence sql.NullString
	var sm, bw sql.NullFloat64
	if err := rows.Scan(&key[0], &key[1], &r.Profile, &r.GPU, &r.Percentage, &r.MemLimit, &r.Outcome, &r.ExitStatus,
		&r.Seconds, &evidence, &sm, &bw); err != nil {
		return r, err
	}
	r.SMShare, r.BandwidthShare = sm.Float64, bw.Float64
	r.Evidence = unknownEvidence()
	if evidence.Valid && evidence.String != "" {
		if err := json.Unmarshal([]byte(evidence.String), &r.Evidence); err != nil {
			return r, fmt.Errorf("job %s, emulated %s: evidence: %w", key[1], r.Profile, err)
		}
	}
	return r, nil
}

// unknownEvidence is evidence of nothing: every figure slurm.Unknown, as a
// scan of an empty output gives it (a figure the stored JSON lacks stays
// unknown).
func unknownEvidence() slurm.OutputEvidence {
	const u = slurm.Unknown
	return slurm.OutputEvidence{Work: u, GPUPeakMiB: u, GPUUsedPeakMiB: u, GPUTotalMiB: u, GPUUtilMean: u, GPUUtilMax: u,
		GPUMemUtilMean: u, GPUMemUtilMax: u}
}
