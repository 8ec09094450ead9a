package slurm

import (
	"fmt"
	"strconv"
	"strings"
)

// GPU request options, in the order sbatch documents them.
const (
	OptGres          = "gres"
	OptGPUs          = "gpus"
	OptGPUsPerNode   = "gpus-per-node"
	OptGPUsPerTask   = "gpus-per-task"
	OptGPUsPerSocket = "gpus-per-socket"
)

// GPURequest is one GPU request in a script: a gpu entry of --gres, or a
// --gpus* option. Count is as written (per node for --gres and --gpus-per-node,
// per task, per socket, or in total for --gpus).
type GPURequest struct {
	Option string // one of the Opt* names
	Type   string // "" when untyped
	Count  int
	Line   int
	index  int // index of the option in Script.Options
	entry  int // index of the gpu entry within a --gres list
}

// Resources is what a script asks Slurm for. Zero values mean "not given".
type Resources struct {
	Partition, QoS, Account, JobName string
	Output, Error, Array             string
	Time                             TimeLimit
	TimeLine                         int
	Nodes                            int // minimum node count
	NTasks, NTasksPerNode            int
	CPUsPerTask, CPUsPerGPU, MinCPUs int
	SocketsPerNode                   int
	MemMiB                           int64 // --mem (per node)
	MemAll                           bool  // --mem=0: all memory of each node
	MemPerCPUMiB, MemPerGPUMiB       int64
	MemLine                          int
	Exclusive                        bool
	GPUs                             []GPURequest
}

// interpret reads the effective options (the last of each, as sbatch does)
// into Resources, recording values sbatch would reject.
func (s *Script) interpret() Resources {
	var r Resources
	for i, o := range s.Options {
		if o.Component != 0 {
			continue
		}
		if err := r.apply(o, i); err != nil {
			s.problem(o.Line, "bad-value", fmt.Sprintf("%s: %v", o.Flag, err), true)
		}
	}
	r.GPUs = effectiveGPUs(r.GPUs)
	return r
}

func (r *Resources) apply(o Option, index int) error {
	var err error
	switch o.Name {
	case "partition":
		r.Partition = o.Value
	case "qos":
		r.QoS = o.Value
	case "account":
		r.Account = o.Value
	case "job-name":
		r.JobName = o.Value
	case "output":
		r.Output = o.Value
	case "error":
		r.Error = o.Value
	case "array":
		r.Array = o.Value
	case "time":
		r.Time, err = ParseTimeLimit(o.Value)
		r.TimeLine = o.Line
	case "nodes":
		lo, _, _ := strings.Cut(o.Value, "-")
		r.Nodes, err = positive(lo)
	case "ntasks":
		r.NTasks, err = positive(o.Value)
	case "ntasks-per-node":
		r.NTasksPerNode, err = positive(o.Value)
	case "cpus-per-task":
		r.CPUsPerTask, err = positive(o.Value)
	case "cpus-per-gpu":
		r.CPUsPerGPU, err = positive(o.Value)
	case "mincpus":
		r.MinCPUs, err = positive(o.Value)
	case "sockets-per-node":
		r.SocketsPerNode, err = positive(o.Value)
	case "exclusive":
		r.Exclusive = true
	case "mem":
		r.MemMiB, err = ParseMemoryMiB(o.Value)
		r.MemAll, r.MemPerCPUMiB, r.MemPerGPUMiB, r.MemLine = r.MemMiB == 0, 0, 0, o.Line
	case "mem-per-cpu":
		r.MemPerCPUMiB, err = ParseMemoryMiB(o.Value)
		r.MemMiB, r.MemAll, r.MemPerGPUMiB, r.MemLine = 0, false, 0, o.Line
	case "mem-per-gpu":
		r.MemPerGPUMiB, err = ParseMemoryMiB(o.Value)
		r.MemMiB, r.MemAll, r.MemPerCPUMiB, r.MemLine = 0, false, 0, o.Line
	case OptGres:
		var gpus []GPURequest
		gpus, err = parseGresGPUs(o.Value)
		r.GPUs = append(r.GPUs, withOrigin(gpus, o, index)...)
	case OptGPUs, OptGPUsPerNode, OptGPUsPerTask, OptGPUsPerSocket:
		var gpus []GPURequest
		gpus, err = parseGPUSpec(o.Value)
		for i := range gpus {
			gpus[i].Option = o.Name
		}
		r.GPUs = append(r.GPUs, withOrigin(gpus, o, index)...)
	}
	return err
}

func withOrigin(gpus []GPURequest, o Option, index int) []GPURequest {
	for i := range gpus {
		gpus[i].Line, gpus[i].index = o.Line, index
		if gpus[i].Option == "" {
			gpus[i].Option = o.Name
		}
	}
	return gpus
}

// effectiveGPUs keeps, for each GPU option, only the requests of its last
// occurrence: a later --gres replaces an earlier one, as in sbatch.
func effectiveGPUs(all []GPURequest) []GPURequest {
	last := map[string]int{}
	for _, g := range all {
		last[g.Option] = g.index
	}
	var out []GPURequest
	for _, g := range all {
		if g.index == last[g.Option] {
			out = append(out, g)
		}
	}
	return out
}

func positive(s string) (int, error) {
	n, err := strconv.Atoi(strings.TrimSpace(s))
	if err != nil || n < 1 {
		return 0, fmt.Errorf("%q is not a positive whole number", s)
	}
	return n, nil
}

// GresEntry is one element of a --gres list: name[:type][:count].
type GresEntry struct {
	Name, Type, Count string
	Raw               string
}

// ParseGresList splits a --gres value ("gpu:a100:1,lscratch:100") into entries.
func ParseGresList(v string) []GresEntry {
	var out []GresEntry
	for _, raw := range strings.Split(v, ",") {
		raw = strings.TrimSpace(raw)
		if raw == "" {
			continue
		}
		parts := strings.Split(raw, ":")
		e := GresEntry{Name: parts[0], Raw: raw}
		switch len(parts) {
		case 1:
		case 2:
			if isCount(parts[1]) {
				e.Count = parts[1]
			} else {
				e.Type = parts[1]
			}
		default:
			e.Type, e.Count = strings.Join(parts[1:len(parts)-1], ":"), parts[len(parts)-1]
		}
		out = append(out, e)
	}
	return out
}

func isCount(s string) bool {
	if s == "" {
		return false
	}
	for i, c := range s {
		if c < '0' || c > '9' {
			// a count may carry a K/M/G suffix for countable GRES such as lscratch
			return i > 0 && i == len(s)-1 && strings.ContainsRune("kKmMgGtT", c)
		}
	}
	return true
}

func parseGresGPUs(v string) ([]GPURequest, error) {
	if strings.EqualFold(v, "none") {
		return nil, nil
	}
	var out []GPURequest
	for i, e := range ParseGresList(v) {
		if e.Name != "gpu" {
			continue
		}
		n := 1
		if e.Count != "" {
			var err error
			if n, err = strconv.Atoi(e.Count); err != nil || n < 0 {
				return nil, fmt.Errorf("GPU count %q in %q is not a whole number", e.Count, e.Raw)
			}
		}
		out = append(out, GPURequest{Option: OptGres, Type: e.Type, Count: n, entry: i})
	}
	return out, nil
}

// parseGPUSpec parses a --gpus* value: "[type:]count[,[type:]count...]".
func parseGPUSpec(v string) ([]GPURequest, error) {
	var out []GPURequest
	for _, part := range strings.Split(v, ",") {
		typ, count, hasType := strings.Cut(strings.TrimSpace(part), ":")
		if !hasType {
			typ, count = "", typ
		}
		n, err := strconv.Atoi(count)
		if err != nil || n < 0 {
			return nil, fmt.Errorf("GPU count %q is not a whole number", count)
		}
		out = append(out, GPURequest{Type: typ, Count: n})
	}
	return out, nil
}

// NodeCount is the number of nodes the job asks for (at least 1).
func (r Resources) NodeCount() int {
	return max(r.Nodes, 1)
}

// Tasks is the number of tasks Slurm will allocate.
func (r Resources) Tasks() int {
	switch {
	case r.NTasks > 0:
		return r.NTasks
	case r.NTasksPerNode > 0:
		return r.NTasksPerNode * r.NodeCount()
	default:
		return r.NodeCount()
	}
}

// GPUCount is the total number of GPUs (or MIG slices) the job asks for.
func (r Resources) GPUCount() int {
	total := 0
	for _, g := range r.GPUs {
		switch g.Option {
		case OptGPUs:
			total += g.Count
		case OptGPUsPerTask:
			total += g.Count * r.Tasks()
		case OptGPUsPerSocket:
			total += g.Count * max(r.SocketsPerNode, 1) * r.NodeCount()
		default: // --gres and --gpus-per-node are per node
			total += g.Count * r.NodeCount()
		}
	}
	return total
}

// GPUTypes lists the distinct GPU types requested ("" for an untyped request).
func (r Resources) GPUTypes() []string {
	var types []string
	seen := map[string]bool{}
	for _, g := range r.GPUs {
		if !seen[g.Type] && g.Count > 0 {
			seen[g.Type] = true
			types = append(types, g.Type)
		}
	}
	return types
}

// CPUs is the total number of CPUs the job is allocated, before --exclusive.
func (r Resources) CPUs() int {
	cpus := r.Tasks() * max(r.CPUsPerTask, 1)
	if r.CPUsPerGPU > 0 {
		cpus = max(cpus, r.CPUsPerGPU*r.GPUCount())
	}
	return max(cpus, r.MinCPUs*r.NodeCount())
}

// CPUsPerNode is the largest number of CPUs the job needs on one node.
func (r Resources) CPUsPerNode() int {
	n := r.NodeCount()
	return (r.CPUs() + n - 1) / n
}

// MemoryMiB is the job's total memory request. defaultPerCPU applies when the
// script names no memory (the site's DefMemPerCPU); nodeMiB is the memory of
// one node, used for --mem=0.
func (r Resources) MemoryMiB(defaultPerCPU, nodeMiB int64) int64 {
	switch {
	case r.MemAll:
		return nodeMiB * int64(r.NodeCount())
	case r.MemMiB > 0:
		return r.MemMiB * int64(r.NodeCount())
	case r.MemPerCPUMiB > 0:
		return r.MemPerCPUMiB * int64(r.CPUs())
	case r.MemPerGPUMiB > 0:
		return r.MemPerGPUMiB * int64(r.GPUCount())
	default:
		return defaultPerCPU * int64(r.CPUs())
	}
}
