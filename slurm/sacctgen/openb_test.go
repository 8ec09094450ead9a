package sacctgen_test

import (
	"bytes"
	"errors"
	"io"
	"strings"
	"testing"
	"time"

	"github.com/migadvisor/migadvisor/slurm"
	"github.com/migadvisor/migadvisor/slurm/sacctgen"
)

// openBRows are rows of the trace's csv/openb_pod_list_default.csv
// (alibaba/clusterdata, cluster-trace-gpu-v2023), verbatim: a share still
// running when the trace ends (its deletion_time the trace's last), a
// CPU-only pod, eight whole GPUs that succeeded, shares deleted while
// running, a pod that never left Pending, a share that failed, and a pod
// that asked for no memory.
const openBRows = `name,cpu_milli,memory_mib,num_gpu,gpu_milli,gpu_spec,qos,pod_phase,creation_time,deletion_time,scheduled_time
openb-pod-0001,6000,12288,1,460,,LS,Running,427061,12902960,427061
openb-pod-0005,20000,65536,0,0,,LS,Running,2759674,12902960,2759676
openb-pod-0017,88000,327680,8,1000,,Burstable,Succeeded,9437497,10769854,9437497
openb-pod-0027,1000,2048,1,320,,BE,Running,9941376,9972429,9941376
openb-pod-0059,11908,47104,1,470,,LS,Running,10000836,10002563,10000838
openb-pod-0061,11908,47104,1,1000,,BE,Pending,10001278,10001403,
openb-pod-0062,3152,5600,1,810,,BE,Failed,10001573,10014257,10001606
openb-pod-1523,14000,0,1,1000,,Burstable,Succeeded,10611842,10615828,10611842
`

var openBEpoch = time.Date(2023, 1, 1, 0, 0, 0, 0, time.UTC)

func openB() sacctgen.OpenB {
	return sacctgen.OpenB{Cluster: "c1", Account: "openb", Partition: "gpu", QOS: "standard", GPUType: "a100",
		GPUMemMiB: 81920, Epoch: openBEpoch}
}

// convertOpenB converts rows and reads the dump back as collect does.
func convertOpenB(t *testing.T, o sacctgen.OpenB, rows string) (sacctgen.OpenBCounts, map[string]*slurm.AcctJob) {
	t.Helper()
	var dump bytes.Buffer
	c, err := o.Convert(strings.NewReader(rows), &dump)
	if err != nil {
		t.Fatal(err)
	}
	r, err := slurm.NewSacctReader(&dump)
	if err != nil {
		t.Fatal(err)
	}
	jobs := map[string]*slurm.AcctJob{}
	for {
		j, err := r.Next()
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			t.Fatal(err)
		}
		jobs[j.ID] = j
	}
	if s := r.Skipped; len(s) != 0 {
		t.Fatalf("the reader skipped %v of the dump:\n%s", s, dump.String())
	}
	return c, jobs
}

func at(sec int64) time.Time { return openBEpoch.Add(time.Duration(sec) * time.Second) }

// Each pod becomes the job the fixture's README says: its times, its
// state by its last phase, its CPUs rounded up, its memory, its GPUs
// typed, and a share's grant as gres/gpumem, as slurm's reader reads them.
func TestOpenBMapping(t *testing.T) {
	c, jobs := convertOpenB(t, openB(), openBRows)
	want := sacctgen.OpenBCounts{Pods: 8, GPUPods: 7, NeverScheduled: 1, Jobs: 6, Shares: 4, StillRunning: 1}
	if c != want {
		t.Errorf("counts %+v, want %+v", c, want)
	}
	if len(jobs) != 6 || jobs["100005"] != nil || jobs["100061"] != nil {
		t.Fatalf("jobs %v: want the six GPU pods that were scheduled", keys(jobs))
	}
	type job struct {
		user, name, state  string
		exit               int
		submit, start, end int64 // trace seconds; end < 0: none
		limitMin, cpus     int
		memMiB             float64
		gpus               int
		gpuMemMiB          float64
	}
	for id, w := range map[string]job{
		// Running when the trace ends: no End, its time so far.
		"100001": {"openb-ls", "1gpu-460m", "RUNNING", 0, 427061, 427061, -1, 3466 * 60, 6, 12288, 1, 37683},
		"100017": {"openb-burstable", "8gpu-1000m", "COMPLETED", 0, 9437497, 9437497, 10769854, 371 * 60, 88, 327680, 8, -1},
		"100027": {"openb-be", "1gpu-320m", "CANCELLED", 0, 9941376, 9941376, 9972429, 9 * 60, 1, 2048, 1, 26214},
		"100059": {"openb-ls", "1gpu-470m", "CANCELLED", 0, 10000836, 10000838, 10002563, 60, 12, 47104, 1, 38502},
		"100062": {"openb-be", "1gpu-810m", "FAILED", 1, 10001573, 10001606, 10014257, 4 * 60, 4, 5600, 1, 66355},
	} {
		j := jobs[id]
		if j == nil {
			t.Errorf("job %s missing", id)
			continue
		}
		end := time.Time{}
		if w.end >= 0 {
			end = at(w.end)
		}
		elapsed := w.end - w.start
		if w.end < 0 {
			elapsed = 12902960 - w.start
		}
		if j.User != w.user || j.Name != w.name || j.State != w.state || j.ExitCode != w.exit || j.Cluster != "c1" ||
			j.Partition != "gpu" || j.QOS != "standard" || j.Account != "openb" {
			t.Errorf("job %s: %s %s %s %d %s %s %s %s", id, j.User, j.Name, j.State, j.ExitCode, j.Cluster, j.Partition, j.QOS, j.Account)
		}
		if !j.Submit.Equal(at(w.submit)) || !j.Start.Equal(at(w.start)) || !j.End.Equal(end) || j.Elapsed != time.Duration(elapsed)*time.Second {
			t.Errorf("job %s: submit %v start %v end %v elapsed %v", id, j.Submit, j.Start, j.End, j.Elapsed)
		}
		if j.TimeLimit.Duration != time.Duration(w.limitMin)*time.Minute || j.CPUs != w.cpus || j.ReqMemMiB != w.memMiB || j.Nodes != 1 {
			t.Errorf("job %s: limit %v, %d CPUs, %g MiB, %d nodes", id, j.TimeLimit.Duration, j.CPUs, j.ReqMemMiB, j.Nodes)
		}
		if j.GPUType != "a100" || j.GPUCount != w.gpus || j.GPUMemMiB != w.gpuMemMiB || j.GPUUtil != slurm.Unknown {
			t.Errorf("job %s: %d × %s, gres/gpumem %g MiB, util %g", id, j.GPUCount, j.GPUType, j.GPUMemMiB, j.GPUUtil)
		}
	}
	// A pod that asked for no memory has no ReqMem (Slurm's 0 is the whole
	// node); its CPUs, GPU and times are kept.
	if j := jobs["101523"]; j == nil || j.ReqMemMiB != slurm.Unknown || j.CPUs != 14 || j.GPUCount != 1 || j.State != "COMPLETED" {
		t.Errorf("pod 1523: %+v", j)
	}
}

// The window selects pods by creation_time, [From, Until); the trace's end
// stays the whole file's, so a pod deleted before it is never RUNNING.
func TestOpenBWindow(t *testing.T) {
	o := openB()
	o.From, o.Until = 9941376, 10001573
	c, jobs := convertOpenB(t, o, openBRows)
	if c.Jobs != 2 || c.OutsideWindow != 4 || c.NeverScheduled != 1 || c.StillRunning != 0 || jobs["100027"] == nil || jobs["100059"] == nil {
		t.Errorf("counts %+v, jobs %v", c, keys(jobs))
	}
	o.From, o.Until = 10001573, 0
	if c, _ := convertOpenB(t, o, openBRows); c.Jobs != 2 || c.OutsideWindow != 4 {
		t.Errorf("from 10001573 on: %+v", c)
	}
}

// A file that is not the trace's pod list, or a row the mapping cannot
// read, stops the conversion with the line: a fixture made of half a
// trace would be tested as if whole.
func TestOpenBRefusesWhatItCannotMap(t *testing.T) {
	header, _, _ := strings.Cut(openBRows, "\n")
	for _, tc := range []struct{ rows, want string }{
		{"name,cpu_milli\nx,1\n", "columns"},
		{header + "\nopenb-pod-0001,6000,12288,1,460,,LS,Running,427061,12902960\n", "line 2"},
		{header + "\npod-1,6000,12288,1,460,,LS,Running,1,2,1\n", `pod name "pod-1"`},
		{header + "\nopenb-pod-0001,6000,-1,1,460,,LS,Running,1,2,1\n", `memory_mib "-1"`},
		{header + "\nopenb-pod-0001,6000,1,2,460,,LS,Running,1,2,1\n", "gpu_milli 460 on 2 GPUs"},
		{header + "\nopenb-pod-0001,6000,1,1,460,,LS,Evicted,1,2,1\n", `pod_phase "Evicted"`},
		{header + "\nopenb-pod-0001,6000,1,1,460,,LS,Running,5,9,3\n", `scheduled_time "3"`},
	} {
		_, err := openB().Convert(strings.NewReader(tc.rows), io.Discard)
		if err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%q: %v, want an error naming %s", tc.rows, err, tc.want)
		}
	}
}

func keys(m map[string]*slurm.AcctJob) []string {
	var ks []string
	for k := range m {
		ks = append(ks, k)
	}
	return ks
}
