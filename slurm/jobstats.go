package slurm

import (
	"bytes"
	"compress/gzip"
	"encoding/base64"
	"errors"
	"fmt"
	"io"
	"maps"
	"math"
	"slices"
	"strconv"
	"strings"

	"github.com/valyala/fastjson"
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
	Nodes map[string]jobstatsNode `json:"nodes"`
}

// jobstatsNode is one node's GPU figures, keyed by minor number.
type jobstatsNode struct {
	GPUTotalMemory map[string]float64 `json:"gpu_total_memory"`
	GPUUsedMemory  map[string]float64 `json:"gpu_used_memory"`
	GPUUtilization map[string]float64 `json:"gpu_utilization"`
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
	// json parses the summaries' JSON, keeping its buffers from one to
	// the next: encoding/json's reflection into maps was 3.5 µs of a
	// summary's 7.5 (fastjson, 0.5 µs), a third of a collect's CPU where
	// every GPU job has one.
	json fastjson.Parser
	zr   *gzip.Reader
	raw  []byte       // the field, base64-decoded
	in   bytes.Reader // over raw
	buf  bytes.Buffer // the JSON
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
	js, err := d.parseJSON(data)
	if err != nil {
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

// parseJSON reads the summary's JSON as encoding/json would read it into
// jobstatsJSON: an object (or null) whose "nodes", where present and not
// null, is an object of nodes, each an object (or null) whose GPU figures
// are objects of numbers (or null, read as 0); a key given twice keeps its
// last value; anything else is ignored.
func (d *jobstatsDecoder) parseJSON(data []byte) (jobstatsJSON, error) {
	js := jobstatsJSON{Nodes: map[string]jobstatsNode{}}
	// The parser checks only what it reads; the validator, all of it.
	if err := fastjson.ValidateBytes(data); err != nil {
		return js, fmt.Errorf("not JSON: %w", err)
	}
	v, err := d.json.ParseBytes(data)
	if err != nil {
		return js, fmt.Errorf("not JSON: %w", err)
	}
	summary, err := objectOrNull(v, "the summary")
	if err != nil || summary == nil {
		return js, err
	}
	nodes, err := objectOrNull(summary.Get("nodes"), "nodes")
	if err != nil || nodes == nil {
		return js, err
	}
	o, _ := nodes.Object()
	o.Visit(func(name []byte, nv *fastjson.Value) {
		if err != nil {
			return
		}
		var node *fastjson.Value
		if node, err = objectOrNull(nv, "node "+string(name)); err != nil {
			return
		}
		n := jobstatsNode{}
		if node != nil {
			for _, f := range []struct {
				key string
				to  *map[string]float64
			}{{"gpu_total_memory", &n.GPUTotalMemory}, {"gpu_used_memory", &n.GPUUsedMemory}, {"gpu_utilization", &n.GPUUtilization}} {
				if *f.to, err = numbersOf(node.Get(f.key), f.key); err != nil {
					return
				}
			}
		}
		js.Nodes[string(name)] = n
	})
	return js, err
}

// objectOrNull is v when it is an object, nil when it is absent or null,
// and an error naming what when it is anything else.
func objectOrNull(v *fastjson.Value, what string) (*fastjson.Value, error) {
	switch {
	case v == nil || v.Type() == fastjson.TypeNull:
		return nil, nil
	case v.Type() != fastjson.TypeObject:
		return nil, fmt.Errorf("%s is a %s, not an object", what, v.Type())
	}
	return v, nil
}

// numbersOf reads an object of numbers, keyed by GPU minor number; nil
// for one absent or null.
func numbersOf(v *fastjson.Value, what string) (map[string]float64, error) {
	v, err := objectOrNull(v, what)
	if err != nil || v == nil {
		return nil, err
	}
	out := map[string]float64{}
	o, _ := v.Object()
	o.Visit(func(k []byte, x *fastjson.Value) {
		if err != nil {
			return
		}
		switch x.Type() {
		case fastjson.TypeNull:
			out[string(k)] = 0
		case fastjson.TypeNumber:
			f := x.GetFloat64()
			if math.IsInf(f, 0) || math.IsNaN(f) {
				err = fmt.Errorf("%s of GPU %s is out of range", what, k)
				return
			}
			out[string(k)] = f
		default:
			err = fmt.Errorf("%s of GPU %s is a %s, not a number", what, k, x.Type())
		}
	})
	return out, err
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
