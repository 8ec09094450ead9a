// Package sacctgen generates large sacct dumps for benchmarks: records shaped
// like the dev cluster's real ones (testdata/sacct), a job line followed by its
// .batch and .extern steps, streamed so a million jobs never sit in memory.
package sacctgen

import (
	"bytes"
	"compress/gzip"
	"encoding/base64"
	"fmt"
	"io"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/migadvisor/migadvisor/slurm"
)

var (
	states = []string{"COMPLETED", "COMPLETED", "COMPLETED", "FAILED", "TIMEOUT", "OUT_OF_MEMORY", "CANCELLED by 1234", "COMPLETED"}
	exits  = []string{"0:0", "0:0", "0:0", "1:0", "0:0", "0:125", "0:0", "0:0"}
	gpus   = []string{"a100_10g", "a100_20g", "a100_40g", "a100", ""}
)

// runningEvery makes one job in 200 still running, as in a cluster's
// accounting over a window: most jobs have ended.
const runningEvery = 200

// Reader streams a dump of n jobs (3 lines each) plus the header, with
// migadvisor's field list and the given delimiter ("|" or slurm.SacctDelimiter).
type Reader struct {
	// Jobstats: the GPU jobs that ended carry a jobstats summary in their
	// AdminComment, as at a site that runs Princeton's jobstats.
	Jobstats bool
	// Lean: a site's own lean --format (LeanFields: 16 columns, no steps'
	// usage, no comment), each job's line and its batch step's only, 50
	// users and 977 job names: many runs of each script.
	Lean bool

	n, i  int
	first int
	delim string
	buf   []byte
}

// FirstJobID is the id of the first job of New's dumps.
const FirstJobID = 1_000_000

// New returns a dump of n jobs, numbered from FirstJobID.
func New(n int, delim string) *Reader { return NewFrom(FirstJobID, n, delim) }

// NewFrom returns a dump of n jobs numbered from first: dumps from different
// firsts hold different jobs, and overlapping ones the same records. first
// is at least FirstJobID.
func NewFrom(first, n int, delim string) *Reader {
	r := &Reader{n: n, first: first, delim: delim}
	r.buf = []byte(strings.Join(slurm.SacctFields, delim) + "\n")
	return r
}

// NewLean returns a lean dump of n jobs (Reader.Lean), numbered from
// FirstJobID.
func NewLean(n int, delim string) *Reader {
	r := &Reader{n: n, first: FirstJobID, delim: delim, Lean: true}
	r.buf = []byte(strings.Join(LeanFields, delim) + "\n")
	return r
}

// LeanFields are the columns of a lean dump: what a site that saves its
// own sacct --format keeps of a job, enough to price it and name it.
var LeanFields = []string{"JobIDRaw", "JobID", "User", "Account", "Partition", "State", "ExitCode", "Submit", "Start", "End",
	"ElapsedRaw", "TimelimitRaw", "AllocCPUS", "ReqMem", "AllocTRES", "JobName"}

// Lines is the number of lines the dump holds, header included.
func (r *Reader) Lines() int {
	if r.Lean {
		return 1 + 2*r.n
	}
	return 1 + 3*r.n
}

func (r *Reader) Read(p []byte) (int, error) {
	for len(r.buf) < len(p) && r.i < r.n {
		r.buf = r.appendJob(r.buf, r.i)
		r.i++
	}
	if len(r.buf) == 0 {
		return 0, io.EOF
	}
	k := copy(p, r.buf)
	r.buf = r.buf[:copy(r.buf, r.buf[k:])]
	return k, nil
}

func (r *Reader) appendJob(b []byte, n int) []byte {
	if r.Lean {
		return r.appendLeanJob(b, n)
	}
	id := r.first + n
	i := id - FirstJobID // a job's record depends on its id alone
	state, exit, gpu, cpus, tres, start, elapsed := jobOf(i)
	d := r.delim
	times := ts(start-30) + d + ts(start) + d + ts(start+elapsed)
	line := func(jobID, user, part, qos, st, ex, limit, ntasks, reqMem, rss, alloc, req, usage, work, admin, name string) {
		for k, f := range []string{jobID, jobID, "wulver", user, "ab12", part, qos, st, ex, times, strconv.Itoa(elapsed), limit, "1",
			strconv.Itoa(cpus), ntasks, reqMem, rss, alloc, req, usage, "n0042", work, admin, name} {
			if k > 0 {
				b = append(b, d...)
			}
			b = append(b, f...)
		}
		b = append(b, '\n')
	}
	jid := strconv.Itoa(id)
	admin := ""
	if r.Jobstats && gpu != "" && state != "RUNNING" {
		admin = JobstatsSummary(gpu, i)
	}
	line(jid, "user"+strconv.Itoa(i%500), "gpu", "standard", state, exit, "4320", "", strconv.Itoa(4000*cpus)+"M", "", tres, tres, "",
		"/project/ab12/user/run"+strconv.Itoa(i%100), admin, "train-"+strconv.Itoa(i%1000))
	rss := strconv.Itoa(100_000+(i*7919)%4_000_000) + "K"
	usage := "cpu=00:10:00,energy=0,fs/disk=8309,mem=" + rss + ",pages=0,vmem=" + rss
	line(jid+".batch", "", "", "", strings.Fields(state)[0], exit, "", "1", "", rss, tres, "", usage, "", "", "batch")
	line(jid+".extern", "", "", "", "COMPLETED", "0:0", "", "1", "", "108K", tres, "", "cpu=00:00:00,mem=108K", "", "", "extern")
	return b
}

// jobOf is what both dumps say of job i (its id less FirstJobID): its
// state and exit code, GPU type, CPUs, TRES, start and elapsed seconds.
func jobOf(i int) (state, exit, gpu string, cpus int, tres string, start, elapsed int) {
	state, exit, gpu = states[i%len(states)], exits[i%len(states)], gpus[i%len(gpus)]
	if i%runningEvery == runningEvery-1 {
		state, exit = "RUNNING", "0:0"
	}
	cpus = 1 + i%8
	tres = "billing=" + strconv.Itoa(cpus) + ",cpu=" + strconv.Itoa(cpus)
	if gpu != "" {
		tres += ",gres/gpu:" + gpu + "=1,gres/gpu=1"
	}
	tres += ",mem=" + strconv.Itoa(4000*cpus) + "M,node=1"
	return state, exit, gpu, cpus, tres, 1_790_000_000 + i*7, 60 + i%7200
}

// appendLeanJob appends job n's two lines in LeanFields' columns.
func (r *Reader) appendLeanJob(b []byte, n int) []byte {
	id := r.first + n
	i := id - FirstJobID
	state, exit, _, cpus, tres, start, elapsed := jobOf(i)
	d := r.delim
	jid := strconv.Itoa(id)
	line := func(jobID, user, account, part, st, limit, reqMem, name string) {
		for k, f := range []string{jobID, jobID, user, account, part, st, exit, ts(start - 30), ts(start), ts(start + elapsed),
			strconv.Itoa(elapsed), limit, strconv.Itoa(cpus), reqMem, tres, name} {
			if k > 0 {
				b = append(b, d...)
			}
			b = append(b, f...)
		}
		b = append(b, '\n')
	}
	line(jid, "user"+strconv.Itoa(i%50), "ab12", "gpu", state, "4320", strconv.Itoa(4000*cpus)+"M", "train-"+strconv.Itoa(i%977))
	line(jid+".batch", "", "ab12", "", strings.Fields(state)[0], "", "", "batch")
	return b
}

// ts formats a unix time the way sacct prints it (UTC here, for speed).
func ts(unix int) string {
	return time.Unix(int64(unix), 0).UTC().Format("2006-01-02T15:04:05")
}

// Bytes is the whole dump of n jobs in memory.
func Bytes(n int, delim string) []byte {
	data, _ := io.ReadAll(New(n, delim))
	return data
}

// slices are the GPU memory of each generated GPU type, MiB.
var sliceMiB = map[string]int{"a100_10g": 9728, "a100_20g": 19968, "a100_40g": 40448, "a100": 81920}

// JobstatsSummary is the AdminComment jobstats writes for job i on one GPU
// of type gpu: a slice's memory and no utilization (as on MIG), the whole
// GPU's with it, the peak in use between 1 and 9 GiB by i.
func JobstatsSummary(gpu string, i int) string {
	total, used := int64(sliceMiB[gpu])<<20, int64(1+i%9)<<30
	gpuStats := fmt.Sprintf(`"gpu_total_memory":{"0":%d},"gpu_used_memory":{"0":%d}`, total, used)
	if gpu == "a100" {
		gpuStats += fmt.Sprintf(`,"gpu_utilization":{"0":%d}`, 20+i%80)
	}
	js := fmt.Sprintf(`{"gpus":1,"nodes":{"n0042":{"cpus":4,%s,"total_memory":17179869184,"total_time":120.5,"used_memory":1073741824}},"total_time":%d}`,
		gpuStats, 60+i%7200)
	var b bytes.Buffer
	zw := gzipWriters.Get().(*gzip.Writer) // a writer is a megabyte: a million would be garbage
	zw.Reset(&b)
	zw.Write([]byte(js))
	zw.Close()
	gzipWriters.Put(zw)
	return "JS1:" + base64.StdEncoding.EncodeToString(b.Bytes())
}

var gzipWriters = sync.Pool{New: func() any { return gzip.NewWriter(nil) }}
