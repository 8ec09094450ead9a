package history

import (
	"cmp"
	"encoding/binary"
	"math"
	"slices"
	"time"

	"github.com/migadvisor/migadvisor/slurm"
)

// rowOutcome is what writing a row did.
type rowOutcome byte

// The outcomes writeRows reports, as rows_cgo.go's C numbers them.
const (
	rowNew       rowOutcome = iota // inserted
	rowUpdated                     // an existing job's record changed
	rowUnchanged                   // the job's record was as read (or a stub met a full record)
	rowUsage                       // steps alone: their usage raised the job's, where higher
)

// count adds a row's outcome to st.
func (st *ImportStats) count(o rowOutcome, stub bool) {
	switch {
	case o == rowUsage:
		st.Partial++
	case o == rowNew:
		st.New++
	case o == rowUpdated:
		st.Updated++
	case stub:
		st.Stubs++
	default:
		st.Unchanged++
	}
}

// rowBatch is a batch of jobs as the writer binds them: each job's row
// (rowBuf), what its outcome is counted by, and its jobstats counts.
type rowBatch struct {
	rows  rowBuf
	jobs  []rowJob
	stats ImportStats // the jobstats summaries read: counted once the batch commits
}

// rowJob is what a job's row is counted and reported by.
type rowJob struct {
	id   string
	stub bool
}

func (b *rowBatch) reset() {
	b.rows, b.jobs, b.stats = b.rows[:0], b.jobs[:0], ImportStats{}
}

// add appends the job's row: its usage alone for steps without their job
// line, else every column of jobColumns.
func (b *rowBatch) add(j *slurm.AcctJob, opt ImportOptions) {
	cluster := j.Cluster
	if cluster == "" {
		cluster = opt.Cluster
	}
	b.jobs = append(b.jobs, rowJob{id: j.ID, stub: j.Stub()})
	if !j.HasJobLine {
		b.rows = b.rows.kind(rowKindUsage).text(cluster).text(j.Key).
			float(j.MaxRSSMiB).float(j.GPUMemMiB).float(j.GPUUtil)
		return
	}
	switch st := &b.stats; {
	case j.Jobstats != nil:
		st.Jobstats++
	case j.JobstatsErr != nil:
		if st.BadJobstats++; len(st.BadJobstatsJobs) < MaxBadJobstatsKept {
			st.BadJobstatsJobs = append(st.BadJobstatsJobs, BadSummary{j.ID, j.JobstatsErr.Error()})
		}
	}
	profile := ""
	if opt.Profile != nil && j.GPUCount > 0 {
		profile = opt.Profile(j.GPUType, j.GPUCount)
	}
	limit := int64(-1)
	switch {
	case j.TimeLimit.Unlimited:
		limit = 0
	case j.TimeLimit.Duration > 0:
		limit = int64(j.TimeLimit.Duration / time.Minute)
	}
	peak, total, util := jobstatsFigures(j)
	b.rows = b.rows.kind(rowKindJob).text(cluster).text(j.Key).
		text(j.ID).text(j.ArrayJob).text(j.Name).text(j.User).text(j.Account).text(j.Partition).text(j.QOS).
		text(j.NodeList).text(j.WorkDir).text(j.State).text(j.CancelledBy).
		count(int64(j.ExitCode)).count(int64(j.ExitSignal)).time(j.Submit).time(j.Start).time(j.End).
		count(int64(knownDuration(j.Elapsed))).count(limit).count(int64(j.Nodes)).count(int64(j.CPUs)).
		float(j.ReqMemMiB).float(j.MaxRSSMiB).
		text(j.GPUType).integer(int64(j.GPUCount)).text(profile).float(j.GPUMemMiB).float(j.GPUUtil).
		flag(j.Stub()).flag(unsettled(j)).
		float(peak).float(total).float(util)
}

// knownDuration is d in whole seconds, or Unknown.
func knownDuration(d time.Duration) time.Duration {
	if d < 0 {
		return slurm.Unknown
	}
	return d / time.Second
}

// jobstatsFigures are what the job's jobstats summary says of its GPUs:
// the largest memory in use, MiB, the total of the GPU that peaked (a
// slice's on MIG), and the mean utilization of the GPUs that report one
// (none on MIG); Unknown where it says nothing.
func jobstatsFigures(j *slurm.AcctJob) (peak, total, util float64) {
	peak, total, util = slurm.Unknown, slurm.Unknown, slurm.Unknown
	if j.Jobstats == nil || len(j.Jobstats.GPUs) == 0 {
		return peak, total, util
	}
	top := slices.MaxFunc(j.Jobstats.GPUs, func(a, b slurm.JobstatsGPU) int { return cmp.Compare(a.UsedMiB, b.UsedMiB) })
	peak, total = top.UsedMiB, top.TotalMiB
	var sum float64
	n := 0
	for _, g := range j.Jobstats.GPUs {
		if g.Utilization >= 0 {
			sum, n = sum+g.Utilization, n+1
		}
	}
	if n > 0 {
		util = sum / float64(n)
	}
	return peak, total, util
}

// unsettled reports whether a job's record may still change: it has not
// ended, or it is slurmdbd's placeholder. Computed here, not in SQL: an
// index condition on the state list would cost every insert a third more.
func unsettled(j *slurm.AcctJob) bool {
	return j.Stub() || slurm.ActiveState(j.State)
}

// rowBuf holds rows to write as writeRows reads them (rows_cgo.go): each a
// kind byte, then its values in the order they are bound, each a type
// byte and its bytes (a number's 8 in the machine's order, a text's
// length in 4 and then the text). Building it is the reader's work, done
// beside the writer's; binding it is one call into SQLite per batch
// instead of one per value.
type rowBuf []byte

// The kinds of row and of value, as rows_cgo.go's C reads them.
const (
	rowKindJob   byte = iota // every column of jobColumns
	rowKindUsage             // a job's usage from its steps: max_rss_mib, gpu_mem_mib, gpu_util
)

const (
	valNull byte = iota
	valInt
	valFloat
	valText
)

func (r rowBuf) kind(k byte) rowBuf { return append(r, k) }

func (r rowBuf) null() rowBuf { return append(r, valNull) }

func (r rowBuf) integer(v int64) rowBuf {
	return binary.NativeEndian.AppendUint64(append(r, valInt), uint64(v))
}

// count is n, or NULL where it is negative (slurm.Unknown).
func (r rowBuf) count(n int64) rowBuf {
	if n < 0 {
		return r.null()
	}
	return r.integer(n)
}

// float is f, or NULL where it is negative (slurm.Unknown).
func (r rowBuf) float(f float64) rowBuf {
	if f < 0 {
		return r.null()
	}
	return binary.NativeEndian.AppendUint64(append(r, valFloat), math.Float64bits(f))
}

func (r rowBuf) text(s string) rowBuf {
	r = binary.NativeEndian.AppendUint32(append(r, valText), uint32(len(s)))
	return append(r, s...)
}

func (r rowBuf) flag(b bool) rowBuf {
	if b {
		return r.integer(1)
	}
	return r.integer(0)
}

// time is t in unix seconds, or NULL for the zero time (Unknown, None).
func (r rowBuf) time(t time.Time) rowBuf {
	if t.IsZero() {
		return r.null()
	}
	return r.integer(t.Unix())
}
