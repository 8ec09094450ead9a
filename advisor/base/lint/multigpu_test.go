package lint

import (
	"testing"

	"github.com/migadvisor/migadvisor/slurm"
)

const header = "#!/bin/bash\n#SBATCH --partition=gpu\n#SBATCH --time=01:00:00\n"

// Every way a script asks for or uses several GPUs is seen, with its line
// and why; scripts that use one GPU are not flagged.
func TestMultiGPU(t *testing.T) {
	cases := []struct {
		name   string
		script string
		n      int
		line   int
		why    string
	}{
		{"gres count", header + "#SBATCH --gres=gpu:a100:2\npython train.py\n",
			2, 4, "#SBATCH --gres=gpu:a100:2 asks for 2 GPUs"},
		{"gpus", header + "#SBATCH --gpus=4\npython train.py\n",
			4, 4, "#SBATCH --gpus=4 asks for 4 GPUs"},
		{"gpus per node", header + "#SBATCH --gpus-per-node=2\npython train.py\n",
			2, 4, "#SBATCH --gpus-per-node=2 asks for 2 GPUs"},
		{"several nodes", header + "#SBATCH --nodes=2\n#SBATCH --gres=gpu:a100:1\nsrun python train.py\n",
			2, 5, "#SBATCH --gres=gpu:a100:1 on 2 nodes asks for 2 GPUs"},
		{"gpus per task", header + "#SBATCH --ntasks=4\n#SBATCH --gpus-per-task=1\nsrun python train.py\n",
			4, 5, "#SBATCH --gpus-per-task=1 with 4 tasks asks for 4 GPUs"},
		{"two slices", header + "#SBATCH --gres=gpu:a100_10g:2\npython train.py\n",
			2, 4, "#SBATCH --gres=gpu:a100_10g:2 asks for 2 GPUs"},
		{"torchrun", header + "#SBATCH --gres=gpu:a100:1\nmodule load cuda\ntorchrun --standalone --nproc_per_node=4 train.py --epochs 3\n",
			4, 6, "torchrun --nproc_per_node=4 runs 4 GPU processes"},
		{"torchrun over lines, from a variable", header + "#SBATCH --gres=gpu:a100:1\nNGPUS=${NGPUS:-2}\ntorchrun \\\n  --nnodes 1 \\\n  --nproc-per-node $NGPUS \\\n  train.py\n",
			2, 6, "torchrun --nproc-per-node $NGPUS runs 2 GPU processes"},
		{"torchrun on nodes", header + "#SBATCH --gres=gpu:a100:1\nsrun torchrun --nnodes=2 --nproc_per_node=gpu train.py\n",
			2, 5, "torchrun --nnodes=2 runs on 2 nodes, with a GPU on each"},
		{"torch.distributed.launch", header + "python -m torch.distributed.launch --nproc_per_node 8 --use_env train.py\n",
			8, 4, "python -m torch.distributed.launch --nproc_per_node 8 runs 8 GPU processes"},
		{"torch.distributed.run", header + "python3 -m torch.distributed.run --nproc-per-node=2 train.py\n",
			2, 4, "python3 -m torch.distributed.run --nproc-per-node=2 runs 2 GPU processes"},
		{"accelerate", header + "accelerate launch --num_processes 2 finetune.py\n",
			2, 4, "accelerate launch --num_processes 2 runs 2 GPU processes"},
		{"accelerate multi_gpu", header + "accelerate launch --multi_gpu finetune.py\n",
			2, 4, "accelerate launch --multi_gpu runs a process on each GPU"},
		{"deepspeed", header + "deepspeed --num_gpus=4 train.py --deepspeed ds.json\n",
			4, 4, "deepspeed --num_gpus=4 runs 4 GPU processes"},
		{"srun tasks with GPUs", header + "#SBATCH --gres=gpu:a100:1\nsrun -n4 --gpus-per-task=1 ./md\n",
			4, 5, "srun --gpus-per-task=1 with 4 tasks runs on 4 GPUs"},
		{"horovod", header + "horovodrun -np 4 python train.py\n",
			4, 4, "horovodrun -np 4 runs 4 GPU processes"},
		{"program flag", header + "python train.py --gpus 2 --epochs 3\n",
			2, 4, "python train.py --gpus 2 runs 2 GPU processes"},
		{"visible devices", header + "export CUDA_VISIBLE_DEVICES=0,1\npython train.py\n",
			2, 4, "CUDA_VISIBLE_DEVICES=0,1 names 2 GPUs"},
		{"after a list operator", header + "cd run && torchrun --nproc_per_node=2 train.py\n",
			2, 4, "torchrun --nproc_per_node=2 runs 2 GPU processes"},

		// One GPU, however it is written.
		{"nproc 1", header + "#SBATCH --gres=gpu:a100:1\ntorchrun --nproc_per_node=1 train.py\n", 0, 0, ""},
		{"nproc from the allocation", header + "#SBATCH --gres=gpu:a100_10g:1\ntorchrun --nproc_per_node=$SLURM_GPUS_ON_NODE train.py\n", 0, 0, ""},
		{"nproc gpu", header + "#SBATCH --gres=gpu:a100_10g:1\ntorchrun --nproc_per_node=gpu train.py\n", 0, 0, ""},
		{"echoed", header + "#SBATCH --gres=gpu:a100:1\necho \"try torchrun --nproc_per_node=4\"\npython train.py\n", 0, 0, ""},
		{"commented", header + "#SBATCH --gres=gpu:a100:1\n# torchrun --nproc_per_node=4 train.py\npython train.py  # --gpus 2 later\n", 0, 0, ""},
		{"late directive", header + "#SBATCH --gres=gpu:a100:1\npython train.py\n#SBATCH --gres=gpu:a100:4\n", 0, 0, ""},
		{"MPI ranks sharing a GPU", header + "#SBATCH --ntasks-per-node=8\n#SBATCH --gres=gpu:a100_10g:1\nsrun -n 8 gmx_mpi mdrun -deffnm md\nmpirun -np 8 ./lmp\n", 0, 0, ""},
		{"installing deepspeed", header + "pip install deepspeed accelerate\ndeepspeed train.py\n", 0, 0, ""},
		{"monitor block", header + "#SBATCH --gres=gpu:a100:1\nexec migadvisor monitor -- bash \"$0\" --gpus 4  # migadvisor:auto\npython train.py\n", 0, 0, ""},
	}
	for _, c := range cases {
		n, line, why := MultiGPU(slurm.Parse("job.sh", []byte(c.script)))
		if n != c.n || line != c.line || why != c.why {
			t.Errorf("%s: got %d, line %d, %q; want %d, line %d, %q", c.name, n, line, why, c.n, c.line, c.why)
		}
	}
}
