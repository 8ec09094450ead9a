package sacctgen

import (
	"encoding/csv"
	"errors"
	"fmt"
	"io"
	"math"
	"strconv"
	"strings"
	"time"

	"github.com/migadvisor/migadvisor/slurm"
)

// OpenB converts the pod list of Alibaba's cluster-trace-gpu-v2023
// (csv/openb_pod_list_*.csv of github.com/alibaba/clusterdata, the trace of
// the FGD paper, USENIX ATC '23) into a sacct dump that collect reads: real
// jobs' GPU requests and shares, not generated ones. The trace has no
// users, script names, time limits, GPU models of its pods or measured
// memory, so the caller says what stands in for them; the rules are
// testdata/traces/alibaba-openb/README.md's.
type OpenB struct {
	Cluster, Account, Partition, QOS string
	// GPUType is the typed GRES every GPU pod is given, gres/gpu:TYPE=N:
	// the trace's pods ran on several models and name none, so all of
	// them land on the one model of the site they are replayed on.
	GPUType string
	// GPUMemMiB is that GPU's memory: a pod granted a share of a GPU
	// (gpu_milli < 1000) is written gres/gpumem = share × GPUMemMiB.
	GPUMemMiB float64
	// Epoch is trace second 0: the trace's times are seconds from an
	// undisclosed origin.
	Epoch time.Time
	// From and Until select the pods created in [From, Until), trace
	// seconds; Until 0 keeps every pod from From on.
	From, Until int64
}

// OpenBCounts says what became of the trace's pods.
type OpenBCounts struct {
	Pods           int // rows read
	GPUPods        int // asking for at least one GPU
	NeverScheduled int // GPU pods with no scheduled_time: never ran, skipped
	OutsideWindow  int // GPU pods that ran but were created outside [From, Until)
	Jobs           int // written
	Shares         int // of Jobs, granted a share of one GPU: written with gres/gpumem
	StillRunning   int // of Jobs, running when the trace ends: written RUNNING, with no End
}

// openBColumns are the pod list's columns, in the trace's order.
var openBColumns = []string{"name", "cpu_milli", "memory_mib", "num_gpu", "gpu_milli", "gpu_spec", "qos", "pod_phase",
	"creation_time", "deletion_time", "scheduled_time"}

// openBFirstID numbers the jobs: openb-pod-0017 is job 100017, its number
// kept readable and never Slurm's job 0.
const openBFirstID = 100_000

type pod struct {
	line                             int
	num                              int
	cpuMilli, memMiB, gpus, gpuMilli int64
	qos, phase                       string
	created, deleted, scheduled      int64 // scheduled < 0: never
}

// Convert reads the pod list from r and writes the dump to w: the header
// of slurm.SacctFields with "|" (sacct --parsable2), then each GPU pod of
// the window that was scheduled, in the trace's order, as a job line and
// its batch step's, times as epoch seconds (SLURM_TIME_FORMAT=%s, which
// no reader's time zone shifts).
func (o OpenB) Convert(r io.Reader, w io.Writer) (OpenBCounts, error) {
	var c OpenBCounts
	pods, err := readPods(r)
	if err != nil {
		return c, err
	}
	// The trace stops at its last deletion: a pod still running then was
	// given that deletion_time, which is the trace's end, not the pod's.
	var traceEnd int64
	for _, p := range pods {
		traceEnd = max(traceEnd, p.deleted)
	}
	if _, err := io.WriteString(w, strings.Join(slurm.SacctFields, "|")+"\n"); err != nil {
		return c, err
	}
	c.Pods = len(pods)
	for _, p := range pods {
		if p.gpus == 0 {
			continue
		}
		c.GPUPods++
		switch {
		case p.scheduled < 0:
			// It held no GPU and has no runtime: nothing a replay or a
			// judgement can use.
			c.NeverScheduled++
			continue
		case p.created < o.From || o.Until > 0 && p.created >= o.Until:
			c.OutsideWindow++
			continue
		}
		running := p.phase == "Running" && p.deleted == traceEnd
		if err := o.writePod(w, p, running); err != nil {
			return c, err
		}
		c.Jobs++
		if p.gpuMilli < 1000 {
			c.Shares++
		}
		if running {
			c.StillRunning++
		}
	}
	return c, nil
}

func readPods(r io.Reader) ([]pod, error) {
	cr := csv.NewReader(r)
	cr.FieldsPerRecord = -1 // the header is checked by its names
	header, err := cr.Read()
	if err != nil {
		return nil, fmt.Errorf("read the pod list's header: %w", err)
	}
	if strings.Join(header, ",") != strings.Join(openBColumns, ",") {
		return nil, fmt.Errorf("the pod list's columns are %v, not the openb trace's %v", header, openBColumns)
	}
	cr.FieldsPerRecord = len(openBColumns)
	var pods []pod
	for line := 2; ; line++ {
		rec, err := cr.Read()
		if errors.Is(err, io.EOF) {
			return pods, nil
		}
		if err != nil {
			return nil, fmt.Errorf("read the pod list: %w", err)
		}
		p, err := podOf(rec)
		if err != nil {
			return nil, fmt.Errorf("pod list line %d: %w", line, err)
		}
		p.line = line
		pods = append(pods, p)
	}
}

func podOf(rec []string) (pod, error) {
	p := pod{qos: rec[6], phase: rec[7], scheduled: -1}
	num, ok := strings.CutPrefix(rec[0], "openb-pod-")
	n, err := strconv.Atoi(num)
	if !ok || err != nil || n < 0 {
		return p, fmt.Errorf("pod name %q is not openb-pod-NNNN", rec[0])
	}
	p.num = n
	ints := []struct {
		col  int
		into *int64
	}{{1, &p.cpuMilli}, {2, &p.memMiB}, {3, &p.gpus}, {4, &p.gpuMilli}, {8, &p.created}, {9, &p.deleted}}
	for _, f := range ints {
		v, err := strconv.ParseInt(rec[f.col], 10, 64)
		if err != nil || v < 0 {
			return p, fmt.Errorf("%s %q is not a count", openBColumns[f.col], rec[f.col])
		}
		*f.into = v
	}
	if rec[10] != "" {
		if p.scheduled, err = strconv.ParseInt(rec[10], 10, 64); err != nil || p.scheduled < p.created || p.scheduled > p.deleted {
			return p, fmt.Errorf("scheduled_time %q is not between creation_time and deletion_time", rec[10])
		}
	}
	switch p.phase {
	case "Pending", "Running", "Succeeded", "Failed":
	default:
		return p, fmt.Errorf("pod_phase %q is none of Pending, Running, Succeeded, Failed", p.phase)
	}
	if p.gpus > 0 && (p.gpuMilli < 1 || p.gpuMilli > 1000 || p.gpuMilli < 1000 && p.gpus > 1) {
		// The trace's README: a share only ever of one GPU.
		return p, fmt.Errorf("gpu_milli %d on %d GPUs is neither whole GPUs nor a share of one", p.gpuMilli, p.gpus)
	}
	return p, nil
}

// writePod writes the pod's job line and its batch step's.
func (o OpenB) writePod(w io.Writer, p pod, running bool) error {
	id := strconv.Itoa(openBFirstID + p.num)
	cpus := (p.cpuMilli + 999) / 1000 // a share of a core still takes a core
	// A pod that asked for no memory (Kubernetes' BestEffort) has no
	// ReqMem: Slurm's --mem=0 would be the whole node.
	reqMem, mem := "", ""
	if p.memMiB > 0 {
		reqMem = strconv.FormatInt(p.memMiB, 10) + "M"
		mem = ",mem=" + reqMem
	}
	gpus := strconv.FormatInt(p.gpus, 10)
	tres := fmt.Sprintf("billing=%d,cpu=%d,gres/gpu:%s=%s,gres/gpu=%s%s,node=1", cpus, cpus, o.GPUType, gpus, gpus, mem)
	// The rule of the fixture's README: the runtime rounded up to the next
	// hour, at least one; the trace has no limit.
	elapsed := p.deleted - p.scheduled
	limit := max(1, (elapsed+3599)/3600) * 60
	state, exit, step := openBState(p.phase, running)
	end := o.at(p.deleted)
	if running {
		end = "Unknown"
	}
	// A share's grant bounds what the pod could hold of the GPU's memory:
	// Slurm's gres/gpumem peak read as that upper bound. A whole GPU's
	// grant bounds nothing below the GPU, so none is written.
	usage := ""
	if p.gpuMilli < 1000 {
		usage = fmt.Sprintf("gres/gpumem=%dM", int64(math.Round(float64(p.gpuMilli)/1000*o.GPUMemMiB)))
	}
	user := "openb-" + strings.ToLower(p.qos)
	name := fmt.Sprintf("%sgpu-%dm", gpus, p.gpuMilli)
	times := []string{o.at(p.created), o.at(p.scheduled), end, strconv.FormatInt(elapsed, 10)}
	// JobIDRaw JobID Cluster User Account Partition QOS State ExitCode Submit Start End ElapsedRaw TimelimitRaw
	// NNodes AllocCPUS NTasks ReqMem MaxRSS AllocTRES ReqTRES TRESUsageInMax NodeList WorkDir AdminComment JobName
	job := []string{id, id, o.Cluster, user, o.Account, o.Partition, o.QOS, state, exit}
	job = append(job, times...)
	job = append(job, strconv.FormatInt(limit, 10), "1", strconv.FormatInt(cpus, 10), "", reqMem, "", tres, tres, "", "", "", "", name)
	batch := []string{id + ".batch", id + ".batch", o.Cluster, "", o.Account, "", "", step, exit}
	batch = append(batch, times...)
	batch = append(batch, "", "1", strconv.FormatInt(cpus, 10), "1", "", "", tres, "", usage, "", "", "", "batch")
	_, err := io.WriteString(w, strings.Join(job, "|")+"\n"+strings.Join(batch, "|")+"\n")
	return err
}

// openBState is the Slurm state and exit code of a pod by its last phase,
// and its batch step's state.
func openBState(phase string, running bool) (job, exit, step string) {
	switch {
	case running:
		return "RUNNING", "0:0", "RUNNING"
	case phase == "Succeeded":
		return "COMPLETED", "0:0", "COMPLETED"
	case phase == "Failed": // the trace keeps no exit code
		return "FAILED", "1:0", "FAILED"
	}
	// Running (or Pending, yet scheduled) when deleted: ended by its
	// owner, as scancel ends a job (SIGTERM).
	return "CANCELLED", "0:15", "CANCELLED"
}

func (o OpenB) at(sec int64) string {
	return strconv.FormatInt(o.Epoch.Unix()+sec, 10)
}
