package history

import (
	"context"
	"encoding/json"
	"fmt"
	"time"

	"github.com/migadvisor/migadvisor/slurm"
)

// RecordOutput stores what a job's output file showed, replacing an earlier scan.
func (s *Store) RecordOutput(ctx context.Context, cluster, key, path string, size int64, mtime time.Time, ev *slurm.OutputEvidence) error {
	var gpuOOM, gpuText, hostText any
	var gpuLine, gpuNeed any
	if o := ev.GPUOOM; o != nil {
		gpuOOM, gpuText, gpuNeed = o.Source, o.Text, knownF(o.NeedMiB)
		if o.Line > 0 {
			gpuLine = o.Line
		}
	}
	if ev.HostOOM != nil {
		hostText = ev.HostOOM.Text
	}
	metrics, err := jsonColumn(ev.Metrics)
	if err != nil {
		return err
	}
	versions, err := jsonColumn(ev.Versions)
	if err != nil {
		return err
	}
	settings, err := jsonColumn(ev.Settings)
	if err != nil {
		return err
	}
	var errFile, errLine, errText any
	if e := ev.FirstError; e != nil {
		errFile, errText = e.File, e.Text
		if e.Line > 0 {
			errLine = e.Line
		}
	}
	var work, unit, source any
	if ev.Work >= 0 || ev.WorkSource != "" {
		work, unit, source = ev.Work, ev.WorkUnit, ev.WorkSource
	}
	_, err = s.db.ExecContext(ctx, `INSERT OR REPLACE INTO outputs(cluster, job_key, path, size, mtime, truncated,
		gpu_oom, gpu_oom_line, gpu_oom_text, gpu_need_mib, host_oom, host_oom_text, time_limit, cancelled,
		work, work_unit, work_source, metrics, gpu_peak_mib, gpu_total_mib, gpu_device,
		gpu_used_peak_mib, gpu_profile, gpu_util, gpu_util_mean, gpu_util_max, gpu_samples, gpu_source, versions,
		gpu_mem_util_mean, gpu_mem_util_max, error_file, error_line, error_text, settings, resembles)
		VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`,
		cluster, key, path, size, mtime.Unix(), ev.Truncated, gpuOOM, gpuLine, gpuText, gpuNeed,
		ev.HostOOM != nil, hostText, ev.TimeLimit, ev.Cancelled, work, unit, source, metrics,
		knownF(ev.GPUPeakMiB), knownF(ev.GPUTotalMiB), nullIfEmpty(ev.GPUDevice),
		knownF(ev.GPUUsedPeakMiB), nullIfEmpty(ev.GPUProfile), nullIfEmpty(ev.GPUUtil), knownF(ev.GPUUtilMean),
		knownF(ev.GPUUtilMax), gpuSamples(ev), nullIfEmpty(ev.GPUSource), versions,
		knownF(ev.GPUMemUtilMean), knownF(ev.GPUMemUtilMax), errFile, errLine, errText, settings, nullIfEmpty(ev.Resembles))
	if err != nil {
		return fmt.Errorf("record output of job %s: %w", key, err)
	}
	return nil
}

// jsonColumn is a map as a JSON object for a TEXT column, NULL when empty.
func jsonColumn[V any](m map[string]V) (any, error) {
	if len(m) == 0 {
		return nil, nil
	}
	b, err := json.Marshal(m)
	if err != nil {
		return nil, err
	}
	return string(b), nil
}

func gpuSamples(ev *slurm.OutputEvidence) any {
	if ev.GPUSource == "" {
		return nil
	}
	return ev.GPUSamples
}

func nullIfEmpty(s string) any {
	if s == "" {
		return nil
	}
	return s
}

// ScannedOutput is the file an earlier collect scanned for a job.
type ScannedOutput struct {
	Path  string
	Size  int64
	MTime time.Time
}

// SaidMissing reports whether this is NoteOutputsMissing's note that the
// job's output was looked for, not found, and said so: no file.
func (o ScannedOutput) SaidMissing() bool { return o.Path == "" && o.Size == missingSize }

// missingSize is the size NoteOutputsMissing records: no file has it.
const missingSize = -1

// NoteOutputsMissing records that the output of each job of keys (cluster,
// job key) was looked for and not found, and that the user was told, so
// that the next collect does not tell it again. The note is a row of
// outputs with no path and every figure unknown, which reads as no output
// at all (a JobRecord with no OutputPath, as without the row) and which a
// scan that finds the file replaces (RecordOutput); a job with a scan
// already keeps it.
func (s *Store) NoteOutputsMissing(ctx context.Context, keys [][2]string) error {
	if len(keys) == 0 {
		return nil
	}
	tx, err := s.db.BeginTx(ctx, nil)
	if err != nil {
		return fmt.Errorf("note missing outputs: %w", err)
	}
	defer tx.Rollback()
	for _, k := range keys {
		if _, err := tx.ExecContext(ctx, `INSERT OR IGNORE INTO outputs(cluster, job_key, path, size, mtime, truncated, host_oom, time_limit, cancelled)
			VALUES (?, ?, '', ?, 0, 0, 0, 0, 0)`, k[0], k[1], missingSize); err != nil {
			return fmt.Errorf("note missing outputs: %w", err)
		}
	}
	return tx.Commit()
}

// ScannedOutputs lists the output files already scanned, by cluster and job key.
func (s *Store) ScannedOutputs(ctx context.Context) (map[[2]string]ScannedOutput, error) {
	rows, err := s.db.QueryContext(ctx, `SELECT cluster, job_key, path, size, mtime FROM outputs`)
	if err != nil {
		return nil, fmt.Errorf("list scanned outputs: %w", err)
	}
	defer rows.Close()
	out := map[[2]string]ScannedOutput{}
	for rows.Next() {
		var c, k string
		var o ScannedOutput
		var mt int64
		if err := rows.Scan(&c, &k, &o.Path, &o.Size, &mt); err != nil {
			return nil, err
		}
		o.MTime = time.Unix(mt, 0)
		out[[2]string{c, k}] = o
	}
	return out, rows.Err()
}
