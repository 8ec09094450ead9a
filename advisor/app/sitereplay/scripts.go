package sitereplay

import (
	"bytes"
	"fmt"
	"strings"
	"time"
)

// commands are what each class's script runs, after its #SBATCH lines:
// the modules it loads and its program, as its users write them. A
// compiled code runs its binary; the frameworks run through Python (the
// script says "python", never which framework: the output says that).
var commands = map[string]string{
	"gromacs":   "module load GROMACS/2023.3-foss-2023a-CUDA-12.1.1\ngmx mdrun -deffnm md -nb gpu -pme gpu -ntomp $SLURM_CPUS_PER_TASK",
	"qlora":     "module load Anaconda3\nconda activate llm\npython finetune_qlora.py --model Qwen/Qwen2.5-1.5B --lora-r 16",
	"resnet":    "module load Anaconda3\nconda activate torch\npython train_cifar.py --arch resnet18 --epochs 30",
	"deepcnn":   "module load Anaconda3\nconda activate torch\npython train_cifar.py --arch cnn8 --epochs 30",
	"mnist":     "module load Anaconda3\nconda activate torch\npython mnist.py --epochs 14",
	"matmul":    "module load Anaconda3\nconda activate cupy\npython gemm_bench.py --sizes 8192,16384,32768",
	"jax":       "module load Anaconda3\nconda activate jax\npython train.py --config configs/vit_b16.py",
	"keras":     "module load Anaconda3\nconda activate tf\npython train_seg.py --epochs 20",
	"solver":    "module load foss/2023a CUDA/12.1.1\nsrun ./flowsolve -i case.cfg",
	"bigmodel":  "module load Anaconda3\nconda activate llm\npython train.py --model meta-llama/Llama-2-7b-hf",
	"spiky":     "module load foss/2023a CUDA/12.1.1\n./postproc --snapshots 412 --fft",
	"fixedtime": "module load Anaconda3\nconda activate torch\npython hpo_search.py --time-budget 3h55m",
	"midmodel":  "module load Anaconda3\nconda activate torch\npython train_unet.py --size big",
	"ddp":       "module load Anaconda3\nconda activate torch\ntorchrun --nproc_per_node=2 train_ddp.py",
	"cpu":       "module load Anaconda3\npython preprocess.py --shards 64",
}

// script is the batch script of a job: #SBATCH lines for what it asked
// (they differ from run to run: a script's work is its body), then its
// class's command. An OnDemand app writes a script of its own, in the
// session's own directory; salloc runs none.
func script(j *Job) (string, bool) {
	switch {
	case j.Session && !strings.HasPrefix(j.Name, "sys/dashboard/"):
		return "", false
	case j.Session:
		return fmt.Sprintf("#!/bin/bash\n#SBATCH --job-name=%s\n#SBATCH --output=/home/%s/ondemand/data/sys/dashboard/batch_connect/sys/jupyter/output/%d/output.log\n"+
			"#SBATCH --partition=gpu\n#SBATCH --gres=gpu:%s:1\n#SBATCH --cpus-per-task=%d\n#SBATCH --mem=%dG\n#SBATCH --time=%d\n"+
			"cd /home/%s/ondemand/data/sys/dashboard/batch_connect/sys/jupyter/output/%d\n./script.sh\n",
			j.Name, j.User, j.ID, gresType[j.ProfileIndex()], j.CPUs, j.MemGB, j.LimitMin, j.User, j.ID), true
	}
	var b strings.Builder
	fmt.Fprintf(&b, "#!/bin/bash\n#SBATCH --job-name=%s\n", j.Name)
	if j.GPUs > 0 {
		fmt.Fprintf(&b, "#SBATCH --partition=gpu\n#SBATCH --gres=gpu:%s:%d\n", gresType[j.ProfileIndex()], j.GPUs)
	}
	// Each user's script works in its own directory, on its own input:
	// two scripts of one class are two scripts.
	fmt.Fprintf(&b, "#SBATCH --cpus-per-task=%d\n#SBATCH --mem=%dG\n#SBATCH --time=%d\n\ncd %s\n%s\n", j.CPUs, j.MemGB, j.LimitMin,
		workDir(j), commands[j.Class])
	return b.String(), true
}

// writeScripts writes `sacct --batch-script` of the month's jobs, as sacct
// prints it, asked by JobIDRaw: a job started before storedFrom has no
// script stored (AccountingStoreFlags=job_script set after it ran: "NONE"),
// nor has an salloc session; storedFrom zero writes none at all.
func (m *Month) writeScripts(storedFrom time.Time) []byte {
	var b bytes.Buffer
	for _, j := range m.Jobs {
		fmt.Fprintf(&b, "Batch Script for %d\n%s\n", j.ID, strings.Repeat("-", 80))
		text, ok := script(j)
		if !ok || j.Start.Before(storedFrom) {
			text = "NONE\n"
		}
		b.WriteString(text)
		b.WriteString("\n")
	}
	return b.Bytes()
}
