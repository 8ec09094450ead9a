package lint

import (
	"fmt"
	"path/filepath"
	"strconv"
	"strings"

	"github.com/migadvisor/migadvisor/internal/lazyre"
	"github.com/migadvisor/migadvisor/slurm"
)

// MultiGPU says whether a script uses several GPUs, which one MIG slice
// cannot stand in for: a CUDA process sees one MIG device, and slices have
// no NVLink or PCIe peer-to-peer, so NCCL cannot join them.
//
// n is the least number of GPUs the script uses when that is more than one,
// else 0; line (1-based) and why say where and how, e.g. "#SBATCH
// --gres=gpu:a100:2 asks for 2 GPUs". It looks, in this order, at:
//   - the GPUs the script asks Slurm for: --gres=gpu:2, --gpus=2,
//     --gpus-per-node=2, several nodes with GPUs, --gpus-per-task with
//     several tasks;
//   - its commands that start several GPU processes: torchrun and python -m
//     torch.distributed.run or .launch (--nproc_per_node, --nnodes),
//     accelerate launch (--num_processes, --num_machines, --multi_gpu),
//     deepspeed (--num_gpus, --num_nodes), horovodrun -np, srun with GPUs per
//     task or --gpus, a program's --gpus/--num_gpus/--ngpus, and
//     CUDA_VISIBLE_DEVICES naming several devices.
//
// Counts must be literal numbers, or variables the script sets to one
// (NGPUS=4, ${NGPUS:-4}); a count taken from the allocation
// ($SLURM_GPUS_ON_NODE, --nproc_per_node=gpu) follows the slice and is one.
// Commands that only print (echo, printf, cat) and comments are not read.
func MultiGPU(s *slurm.Script) (n, line int, why string) {
	if n, line, why := requestedGPUs(s); n > 1 {
		return n, line, why
	}
	vars := map[string]string{}
	for _, cmd := range s.Commands() {
		if n, why := commandGPUs(cmd.Words, vars); n > 1 {
			return n, cmd.Line, why
		}
	}
	return 0, 0, ""
}

// requestedGPUs reads the GPUs the #SBATCH lines ask for.
func requestedGPUs(s *slurm.Script) (n, line int, why string) {
	res := s.Resources
	total := res.GPUCount()
	if total <= 1 || len(res.GPUs) == 0 {
		return 0, 0, ""
	}
	g := res.GPUs[0]
	option := "--" + g.Option
	for _, o := range s.Options {
		if o.Line == g.Line && o.Name == g.Option && o.Component == 0 {
			option = "--" + o.Name + "=" + o.Value
			break
		}
	}
	switch {
	case g.Option == slurm.OptGPUsPerTask && res.Tasks() > 1:
		why = fmt.Sprintf("#SBATCH %s with %d tasks asks for %d GPUs", option, res.Tasks(), total)
	case g.Option != slurm.OptGPUs && res.NodeCount() > 1:
		why = fmt.Sprintf("#SBATCH %s on %d nodes asks for %d GPUs", option, res.NodeCount(), total)
	default:
		why = fmt.Sprintf("#SBATCH %s asks for %d GPUs", option, total)
	}
	return total, g.Line, why
}

// launchers are the commands whose flags say how many GPU processes run.
var launchers = map[string]bool{"torchrun": true, "accelerate": true, "deepspeed": true, "horovodrun": true,
	"srun": true, "mpirun": true, "mpiexec": true, "lightning": true}

// gpuCount is what one command line says about the GPUs it uses.
type gpuCount struct {
	perNode, total, nodes, tasks, perTask  int
	perNodeBy, totalBy, nodesBy, perTaskBy string // the command and flag that said it
	multi                                  string // accelerate's --multi_gpu
}

// commandGPUs reads how many GPUs one simple command starts processes on,
// and records the variables it sets for the commands after it.
func commandGPUs(words []string, vars map[string]string) (int, string) {
	i := 0
	for i < len(words) && (slurm.CommandPrefix(words[i]) || words[i] == "export") {
		i++
	}
	for ; i < len(words); i++ {
		name, written, ok := slurm.Assignment(words[i])
		if !ok {
			break
		}
		value := expand(written, vars)
		if name == "CUDA_VISIBLE_DEVICES" {
			if n := listCount(value); n > 1 {
				return n, words[i] + " names " + strconv.Itoa(n) + " GPUs"
			}
		}
		vars[name] = value
	}
	if i == len(words) || slurm.PrintOnly(filepath.Base(words[i])) {
		return 0, ""
	}
	return readCounts(words[i:], vars).gpus()
}

// readCounts reads the count flags of a command, each credited to the
// launcher it follows (srun torchrun --nproc_per_node=4: torchrun's).
func readCounts(words []string, vars map[string]string) gpuCount {
	c := gpuCount{nodes: 1, tasks: 1}
	name, launcher := commandName(words), filepath.Base(words[0])
	for j := 0; j < len(words); j++ {
		if base := filepath.Base(words[j]); j > 0 && (launchers[base] || strings.HasPrefix(base, "python")) {
			name, launcher = commandName(words[j:]), base
		}
		flag, value, attached := strings.Cut(words[j], "=")
		written := words[j]
		if launcher == "srun" && len(flag) > 2 && (strings.HasPrefix(flag, "-n") || strings.HasPrefix(flag, "-G")) && flag[1] != '-' {
			flag, value, attached = flag[:2], flag[2:], true // -n4
		}
		if !attached && j+1 < len(words) {
			value = words[j+1]
			written += " " + value
		}
		v := expand(value, vars)
		by := name + " " + written
		switch flag {
		case "--nproc_per_node", "--nproc-per-node", "--num_gpus", "--num-gpus", "--ngpus", "--n_gpus", "--n-gpus",
			"--gpus_per_node", "--gpus-per-node", "--trainer.devices", "--trainer.gpus":
			if n := listCount(v); n > c.perNode {
				c.perNode, c.perNodeBy = n, by
			}
		case "--num_processes", "--num-processes", "--gpus":
			if n := listCount(v); n > c.total {
				c.total, c.totalBy = n, by
			}
		case "-np", "-G":
			if n := listCount(v); (launcher == "horovodrun" && flag == "-np" || launcher == "srun" && flag == "-G") && n > c.total {
				c.total, c.totalBy = n, by
			}
		case "--nnodes", "--num_nodes", "--num-nodes", "--num_machines", "--num-machines":
			lo, _, _ := strings.Cut(v, ":")
			if n, err := strconv.Atoi(lo); err == nil && n > c.nodes {
				c.nodes, c.nodesBy = n, by
			}
		case "--multi_gpu", "--multi-gpu":
			c.multi = name + " " + words[j]
		case "-n", "--ntasks":
			if n, err := strconv.Atoi(v); err == nil && launcher == "srun" {
				c.tasks = n
			}
		case "--gpus-per-task":
			if n := listCount(v); n > 0 && launcher == "srun" {
				c.perTask, c.perTaskBy = n, by
			}
		case "--gres":
			for _, e := range slurm.ParseGresList(v) {
				if n, err := strconv.Atoi(e.Count); err == nil && e.Name == "gpu" && launcher == "srun" && n > c.perNode {
					c.perNode, c.perNodeBy = n, by
				}
			}
		}
	}
	return c
}

// gpus is the least number of GPUs the counts add up to, and why.
func (c gpuCount) gpus() (int, string) {
	switch {
	case c.perTask > 0 && c.tasks*c.perTask > 1:
		return c.tasks * c.perTask, fmt.Sprintf("%s with %d tasks runs on %d GPUs", c.perTaskBy, c.tasks, c.tasks*c.perTask)
	case c.total > 1:
		return c.total, fmt.Sprintf("%s runs %d GPU processes", c.totalBy, c.total)
	case c.perNode > 0 && c.perNode*c.nodes > 1:
		if c.nodes > 1 {
			return c.perNode * c.nodes, fmt.Sprintf("%s on %d nodes runs %d GPU processes", c.perNodeBy, c.nodes, c.perNode*c.nodes)
		}
		return c.perNode, fmt.Sprintf("%s runs %d GPU processes", c.perNodeBy, c.perNode)
	case c.nodes > 1:
		return c.nodes, fmt.Sprintf("%s runs on %d nodes, with a GPU on each", c.nodesBy, c.nodes)
	case c.multi != "":
		return 2, c.multi + " runs a process on each GPU"
	}
	return 0, ""
}

// commandName is how a command is known: "torchrun", "accelerate launch",
// "python -m torch.distributed.run", "python train.py".
func commandName(words []string) string {
	name := filepath.Base(words[0])
	switch {
	case len(words) > 1 && name == "accelerate":
		return name + " " + words[1]
	case len(words) > 2 && strings.HasPrefix(name, "python") && words[1] == "-m":
		return name + " -m " + words[2]
	case len(words) > 1 && strings.HasPrefix(name, "python") && !strings.HasPrefix(words[1], "-"):
		return name + " " + words[1]
	}
	return name
}

var reVariable = lazyre.New(`^\$\{?([A-Za-z_][A-Za-z0-9_]*)(?::?-([^}]*))?\}?$`)

// expand gives a word's value where it is a variable the script set to a
// literal ($NGPUS, ${NGPUS}, ${NGPUS:-4}); other words are as written.
func expand(word string, vars map[string]string) string {
	m := reVariable.FindStringSubmatch(word)
	if m == nil {
		return word
	}
	if v, ok := vars[m[1]]; ok {
		return v
	}
	return m[2]
}

// listCount reads a count ("4") or a device list ("0,1,2"); 0 if neither.
func listCount(v string) int {
	if n, err := strconv.Atoi(v); err == nil {
		return n
	}
	parts := strings.Split(v, ",")
	if len(parts) < 2 {
		return 0
	}
	for _, p := range parts {
		if _, err := strconv.Atoi(p); err != nil && !strings.HasPrefix(p, "GPU-") && !strings.HasPrefix(p, "MIG-") {
			return 0
		}
	}
	return len(parts)
}
