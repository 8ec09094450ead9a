package history

import (
	"context"
	"fmt"
	"slices"
	"time"
)

// QueueWait is the median time jobs of some GPU types waited to start.
type QueueWait struct {
	MedianS float64
	Jobs    int // how many jobs it is the median of
}

// QueueWait reads the wait (Start − Submit) of the newest jobs, at most
// limit, submitted since a time and asking for one of the GPU types. The
// index holds every column it reads (schema 17): limit entries side by
// side, not a row of the table per job.
func (s *Store) QueueWait(ctx context.Context, gpuTypes []string, since time.Time, limit int) (QueueWait, error) {
	var waits []float64
	for _, t := range gpuTypes {
		rows, err := s.db.QueryContext(ctx, `SELECT start - submit FROM jobs INDEXED BY jobs_by_gpu_type
			WHERE gpu_type = ? AND submit >= ? AND start IS NOT NULL AND start >= submit AND stub = 0
			ORDER BY submit DESC LIMIT ?`, t, since.Unix(), limit)
		if err != nil {
			return QueueWait{}, fmt.Errorf("read queue waits: %w", err)
		}
		for rows.Next() {
			var w float64
			if err := rows.Scan(&w); err != nil {
				rows.Close()
				return QueueWait{}, err
			}
			waits = append(waits, w)
		}
		rows.Close()
		if err := rows.Err(); err != nil {
			return QueueWait{}, err
		}
	}
	if len(waits) == 0 {
		return QueueWait{}, nil
	}
	slices.Sort(waits)
	n := len(waits)
	m := waits[n/2]
	if n%2 == 0 {
		m = (waits[n/2-1] + waits[n/2]) / 2
	}
	return QueueWait{MedianS: m, Jobs: n}, nil
}
