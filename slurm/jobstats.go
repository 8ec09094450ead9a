package slurm

import (
	"bytes"
	"compress/gzip"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"maps"
	"slices"
	"strconv"
	"strings"
)

// Princeton's jobstats keeps a summary of each job's CPU and GPU use in
// Slurm's AdminComment, written by a slurmctld epilog: "JS1:" and the
// base64 of the gzip of its JSON (jobstats' docs/setup/summaries.md), or
// "JS1:Short" and "JS1:None" for a job with no data. Its GPU memory is the
// largest of samples taken every 30 s or so (the exporter's scrape), so it
// can miss a short spike: a lower bound of the peak, not the peak.

// jobstatsPrefix starts every summary jobstats writes.
const jobstatsPrefix = "JS1:"

// The bounds of one summary: a job's is a few kB (jobstats' docs: under 5,000
// characters for the largest jobs), so anything far beyond is refused rather
// than decoded, and a gzip bomb stops at the limit.
const (
	maxJobstatsField   = 1 << 20 // characters of AdminComment
	maxJobstatsDecoded = 8 << 20 // bytes of JSON
)

// ErrNotJobstats means an AdminComment holds something other than a
// jobstats summary (a site may use the field for its own notes).
var ErrNotJobstats = errors.New("not a jobstats summary")

// Jobstats is what a jobstats summary says of a job's GPUs.
type Jobstats struct {
	GPUs []JobstatsGPU // one per GPU the job had, by node and minor number
	// NoData: the summary says jobstats has nothing for the job (JS1:Short,
	// a job too short to be sampled; JS1:None).
	NoData bool
}

// JobstatsGPU is one GPU of a job, as the exporter saw it: on a MIG slice
// its memory is the slice's, and there is no utilization (Utilization < 0).
type JobstatsGPU struct {
	Node        string
	Minor       string
	UsedMiB     float64 // the largest sample of GPU memory in use
	TotalMiB    float64
	Utilization float64 // mean, %; -1 when not reported
}

// PeakMiB is the largest GPU memory any of the job's GPUs was seen using;
// 0 when the summary has no GPU.
func (j *Jobstats) PeakMiB() float64 {
	var peak float64
	for _, g := range j.GPUs {
		peak = max(peak, g.UsedMiB)
	}
	return peak
}

// jobstatsJSON is the summary's JSON: per node, GPU figures keyed by the
// GPU's minor number, memory in bytes.
type jobstatsJSON struct {
	Nodes map[string]struct {
		GPUTotalMemory map[string]float64 `json:"gpu_total_memory"`
		GPUUsedMemory  map[string]float64 `json:"gpu_used_memory"`
		GPUUtilization map[string]float64 `json:"gpu_utilization"`
	} `json:"nodes"`
}

// DecodeJobstats reads a jobstats summary from an AdminComment. An empty
// field is no summary (nil, nil); a field that is not one is
// ErrNotJobstats; a summary that cannot be read, or is larger than any job
// makes, is an error that says which. It never reads more than its bounds.
func DecodeJobstats(field string) (*Jobstats, error) {
	var d jobstatsDecoder
	return d.decode(field)
}

// jobstatsDecoder decodes summaries one after another with one gzip
// reader, which a million jobs' summaries would otherwise each allocate.
type jobstatsDecoder struct {
	zr  *gzip.Reader
	raw []byte       // the field, base64-decoded
	in  bytes.Reader // over raw
	buf bytes.Buffer // the JSON
}

func (d *jobstatsDecoder) decode(field string) (*Jobstats, error) {
	field = strings.TrimSpace(field)
	switch {
	case field == "":
		return nil, nil
	case !strings.HasPrefix(field, jobstatsPrefix):
		return nil, ErrNotJobstats
	case field == jobstatsPrefix+"Short" || field == jobstatsPrefix+"None":
		return &Jobstats{NoData: true}, nil
	case len(field) > maxJobstatsField:
		return nil, fmt.Errorf("jobstats summary of %d characters: refused (a job's is a few thousand)", len(field))
	}
	enc := field[len(jobstatsPrefix):]
	d.raw = slices.Grow(d.raw[:0], base64.StdEncoding.DecodedLen(len(enc)))[:base64.StdEncoding.DecodedLen(len(enc))]
	n, err := base64.StdEncoding.Decode(d.raw, []byte(enc))
	if err != nil {
		return nil, fmt.Errorf("jobstats summary: not base64: %w", err)
	}
	d.in.Reset(d.raw[:n])
	if d.zr == nil {
		d.zr, err = gzip.NewReader(&d.in)
	} else {
		err = d.zr.Reset(&d.in)
	}
	if err != nil {
		d.zr = nil
		return nil, fmt.Errorf("jobstats summary: not gzip: %w", err)
	}
	d.buf.Reset()
	if _, err := d.buf.ReadFrom(io.LimitReader(d.zr, maxJobstatsDecoded+1)); err != nil {
		return nil, fmt.Errorf("jobstats summary: %w", err)
	}
	data := d.buf.Bytes()
	if len(data) > maxJobstatsDecoded {
		return nil, fmt.Errorf("jobstats summary over %d MiB once decompressed: refused", maxJobstatsDecoded>>20)
	}
	var js jobstatsJSON
	if err := json.Unmarshal(data, &js); err != nil {
		return nil, fmt.Errorf("jobstats summary: %w", err)
	}
	j := js.gpus()
	for _, g := range j.GPUs {
		if g.UsedMiB < 0 || g.TotalMiB < 0 {
			return nil, fmt.Errorf("jobstats summary: GPU %s on %s uses %.0f MiB of %.0f: below 0", g.Minor, g.Node, g.UsedMiB, g.TotalMiB)
		}
	}
	return j, nil
}

// gpus are the summary's GPUs, in order of node and minor number.
func (js jobstatsJSON) gpus() *Jobstats {
	out := &Jobstats{}
	for _, node := range slices.Sorted(maps.Keys(js.Nodes)) {
		n := js.Nodes[node]
		minors := slices.Collect(maps.Keys(n.GPUUsedMemory))
		slices.SortFunc(minors, func(a, b string) int {
			x, errA := strconv.Atoi(a)
			y, errB := strconv.Atoi(b)
			if errA != nil || errB != nil {
				return strings.Compare(a, b)
			}
			return x - y
		})
		for _, minor := range minors {
			g := JobstatsGPU{Node: node, Minor: minor, UsedMiB: n.GPUUsedMemory[minor] / (1 << 20),
				TotalMiB: n.GPUTotalMemory[minor] / (1 << 20), Utilization: -1}
			if u, ok := n.GPUUtilization[minor]; ok {
				g.Utilization = u
			}
			out.GPUs = append(out.GPUs, g)
		}
	}
	return out
}
