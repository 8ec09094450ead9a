package slurm

import (
	"fmt"
	"strings"
	"testing"
)

// The lines each framework prints of itself name the software the job ran,
// which decides what its GPU memory peak proves.
func TestScanOutputNamesTheSoftwareFromItsOwnLines(t *testing.T) {
	cases := []struct {
		name, output string
		want         map[string]string
	}{
		{"PyTorch traceback", "Traceback (most recent call last):\n  File \"/opt/conda/lib/python3.11/site-packages/torch/nn/modules/module.py\", line 1751, in _wrapped_call_impl\n", map[string]string{SoftwarePyTorch: "", SoftwarePython: ""}},
		{"PyTorch Lightning banner", "GPU available: True (cuda), used: True\nTPU available: False, using: 0 TPU cores\n", map[string]string{SoftwareLightning: ""}},
		{"TensorFlow's device line", "2025-01-07 10:12:01.123456: I tensorflow/core/common_runtime/gpu/gpu_device.cc:2021] Created device /job:localhost/replica:0/task:0/device:GPU:0 with 78868 MB memory:  -> device: 0, name: NVIDIA A100-SXM4-80GB, pci bus id: 0000:07:00.0, compute capability: 8.0\n", map[string]string{SoftwareTensorFlow: ""}},
		{"JAX error", "jaxlib.xla_extension.XlaRuntimeError: INTERNAL: something\n", map[string]string{SoftwareJAX: ""}},
		{"GROMACS banner with its version", "                 :-) GROMACS - gmx mdrun, 2023.3 (-:\n", map[string]string{SoftwareGROMACS: "2023.3"}},
		{"the job's own version line wins", "MIGADVISOR_VERSION torch 2.11.0\n  File \"/x/site-packages/torch/cuda/__init__.py\", line 3\n", map[string]string{SoftwarePyTorch: "2.11.0"}},
		{"a version line after the traceback", "  File \"/x/site-packages/torch/cuda/__init__.py\", line 3\nMIGADVISOR_VERSION torch 2.11.0\n", map[string]string{SoftwarePyTorch: "2.11.0"}},
		// Hugging Face: transformers' progress and its Trainer's log
		// lines, PEFT's count of what it trains, a traceback through TRL.
		{"Hugging Face checkpoint shards", "Loading checkpoint shards: 100%|██████████| 2/2 [00:03<00:00,  1.52s/it]\n", map[string]string{SoftwareTransformers: ""}},
		{"Hugging Face Trainer's log", "{'loss': 1.8731, 'grad_norm': 0.4562, 'learning_rate': 0.0002, 'epoch': 0.25}\n", map[string]string{SoftwareTransformers: ""}},
		{"Hugging Face Trainer's log, quoted, after tqdm's bar", " 12%|█▎        | 25/200 [00:41<04:46,  1.64s/it]\r{'loss': '1.873', 'grad_norm': '0.4562', 'learning_rate': '0.0002', 'epoch': '0.12'}\n", map[string]string{SoftwareTransformers: ""}},
		{"Hugging Face Trainer's evaluation", "{'eval_loss': 0.412, 'eval_accuracy': 0.88, 'eval_runtime': 12.3, 'eval_samples_per_second': 81.3, 'eval_steps_per_second': 10.2, 'epoch': 1.0}\n", map[string]string{SoftwareTransformers: ""}},
		{"a program's own dict of a loss", "{'loss': 0.5, 'acc': 0.9, 'epoch': 3}\n", nil},
		{"Hugging Face Trainer's summary", "{'train_runtime': 612.3, 'train_samples_per_second': 3.27, 'train_steps_per_second': 0.41, 'train_loss': 1.62, 'epoch': 1.0}\n", map[string]string{SoftwareTransformers: ""}},
		{"PEFT's trainable parameters", "trainable params: 4,194,304 || all params: 3,504,607,232 || trainable%: 0.1197\n", map[string]string{SoftwarePEFT: ""}},
		{"a TRL traceback", "  File \"/home/u/.venv/lib/python3.11/site-packages/trl/trainer/sft_trainer.py\", line 451, in train\n", map[string]string{SoftwareTRL: ""}},
		// Lightning, through Python's logging and with its model summary.
		{"Lightning through logging", "INFO:lightning.pytorch.utilities.rank_zero:GPU available: True (cuda), used: True\n", map[string]string{SoftwareLightning: ""}},
		{"Lightning's device line", "LOCAL_RANK: 0 - CUDA_VISIBLE_DEVICES: [0]\n", map[string]string{SoftwareLightning: ""}},
		{"Lightning's model summary", "  | Name    | Type             | Params | Mode \n", map[string]string{SoftwareLightning: ""}},
		// Keras' progress lines: Keras 3's bar, Keras 2's, verbose=2.
		{"Keras 3 progress", "Epoch 1/10\n469/469 ━━━━━━━━━━━━━━━━━━━━ 5s 10ms/step - accuracy: 0.9213 - loss: 0.2710\n", map[string]string{SoftwareKeras: ""}},
		{"Keras 2 progress", "469/469 [==============================] - 5s 10ms/step - loss: 0.2710 - accuracy: 0.9213\n", map[string]string{SoftwareKeras: ""}},
		{"Keras verbose=2", "5000/5000 - 12s - 2ms/step - loss: 2.0454 - mae: 1.7862\n", map[string]string{SoftwareKeras: ""}},
		{"an epoch line alone says nothing", "Epoch 1/10\nepoch 1: loss 0.3\n", nil},
		{"a program's own count of steps", "step 100/1000 - loss 0.3 - 12ms/step\n 100/1000 - 2s - 12ms/step\n", nil},
		// The bars as they land in a file: redrawn after backspaces and a
		// carriage return on one line, Keras 3's in colour (Keras 3.5),
		// Keras 2's (tf.keras 2.15) with an ETA until the epoch's last.
		{"Keras 3 progress in a file", "Epoch 1/10\n\r\x1b[1m  1/469\x1b[0m \x1b[37m━━━━━━━━━━━━━━━━━━━━\x1b[0m \x1b[1m8:49\x1b[0m 1s/step - accuracy: 0.1016 - loss: 2.3240\x08\x08\x08\x08\x08\x08\x08\x08\r\x1b[1m469/469\x1b[0m \x1b[32m━━━━━━━━━━━━━━━━━━━━\x1b[0m\x1b[37m\x1b[0m \x1b[1m5s\x1b[0m 10ms/step - accuracy: 0.9213 - loss: 0.2710\n", map[string]string{SoftwareKeras: ""}},
		{"Keras 2 progress in a file", "Epoch 1/10\n\r  1/469 [..............................] - ETA: 3:20 - loss: 2.3026 - accuracy: 0.1016\x08\x08\x08\x08\x08\x08\r469/469 [==============================] - 5s 10ms/step - loss: 0.2710 - accuracy: 0.9213\n", map[string]string{SoftwareKeras: ""}},
		{"Keras 2 progress longer than a line is read", strings.Repeat("\r 13/469 [>.............................] - ETA: 1s - loss: 2.1 - accuracy: 0.2"+strings.Repeat("\x08", 80), 500) + "\n", map[string]string{SoftwareKeras: ""}},
		{"tf.keras 2 verbose=2", "469/469 - 5s - loss: 0.2710 - accuracy: 0.9213 - 5s/epoch - 10ms/step\n", map[string]string{SoftwareKeras: ""}},
		{"Keras 3 model summary", "┃ Layer (type)                    ┃ Output Shape           ┃       Param # ┃\n", map[string]string{SoftwareKeras: ""}},
		// JAX's devices as it prints them, old and new.
		{"JAX devices", "[CudaDevice(id=0)]\n", map[string]string{SoftwareJAX: ""}},
		{"JAX devices, older", "devices: [StreamExecutorGpuDevice(id=0, process_index=0, slice_index=0)]\n", map[string]string{SoftwareJAX: ""}},
		{"JAX 0.4.20's devices", "[cuda(id=0), cuda(id=1)]\n", map[string]string{SoftwareJAX: ""}},
		// Slurm's gres as squeue and sinfo print it, which a device as JAX
		// 0.4's str wrote the same.
		{"a GPU as Slurm writes it", "gpu:1\n", nil},
		// XLA's lines: JAX and TensorFlow print them alike.
		{"XLA service", "I0000 00:00:1743640581.557432  670254 service.cc:148] XLA service 0x7fa3e4019580 initialized for platform CUDA (this does not guarantee that XLA will be used). Devices:\nI0000 00:00:1743640581.558096  670254 service.cc:156]   StreamExecutor device (0): NVIDIA A100-SXM4-80GB, Compute Capability 8.0\n", map[string]string{SoftwareXLA: ""}},
		{"XLA under TensorFlow", "2021-11-03 15:57:14.968438: I tensorflow/compiler/xla/service/service.cc:168] XLA service 0x562341070250 initialized for platform CUDA (this does not guarantee that XLA will be used). Devices:\n", map[string]string{SoftwareTensorFlow: "", SoftwareXLA: ""}},
		// CuPy: its out-of-memory error and tracebacks through its modules.
		{"CuPy out of memory", "cupy.cuda.memory.OutOfMemoryError: Out of memory allocating 1,073,741,824 bytes (allocated so far: 8,589,934,592 bytes).\n", map[string]string{SoftwareCuPy: ""}},
		{"CuPy traceback", "  File \"cupy/_core/core.pyx\", line 1,476, in cupy._core.core._ndarray_base.__add__\n", map[string]string{SoftwareCuPy: ""}},
		// Compiled codes' banners, with their versions (NAMD 3.0.1, LAMMPS
		// 2Aug2023 update 3); a Python script after LAMMPS that fails.
		{"NAMD's banner", "Charm++> Running in SMP mode: 1 processes, 8 worker threads (PEs) + 1 comm threads per process\nInfo: NAMD 3.0.1 for Linux-x86_64-multicore-CUDA\n", map[string]string{SoftwareNAMD: "3.0.1"}},
		{"LAMMPS' banner, then a Python traceback", "LAMMPS (2 Aug 2023 - Update 3)\nTotal wall time: 0:01:23\nTraceback (most recent call last):\n  File \"/home/u/analyze.py\", line 3, in <module>\nModuleNotFoundError: No module named 'MDAnalysis'\n", map[string]string{SoftwareLAMMPS: "2 Aug 2023 - Update 3", SoftwarePython: ""}},
		// Interpreters: a Python traceback, R's and Julia's errors.
		{"a Python traceback", "Traceback (most recent call last):\n  File \"/home/u/train.py\", line 12, in <module>\n", map[string]string{SoftwarePython: ""}},
		{"R stopped", "Error in solve.default(m) : system is computationally singular\nExecution halted\n", map[string]string{SoftwareR: ""}},
		{"Julia stopped", "ERROR: LoadError: Out of GPU memory trying to allocate 7.451 GiB\n", map[string]string{SoftwareJulia: ""}},
		// Containers' packages live in dist-packages (NGC's PyTorch image,
		// Python 3.10), and torchrun's log lines (PyTorch 2.5) name them
		// from site-packages on.
		{"PyTorch warning from a container", "/usr/local/lib/python3.10/dist-packages/torch/utils/data/dataloader.py:617: UserWarning: This DataLoader will create 16 worker processes in total.\n", map[string]string{SoftwarePyTorch: ""}},
		{"torchrun's log line, from site-packages on", "W1126 22:01:25.726000 3361578 site-packages/torch/distributed/run.py:792] *****************************************\n", map[string]string{SoftwarePyTorch: ""}},
		{"torchvision's warning", "/home/u/.venv/lib/python3.11/site-packages/torchvision/models/_utils.py:208: UserWarning: The parameter 'pretrained' is deprecated since 0.13 and may be removed in the future, please use 'weights' instead.\n", map[string]string{SoftwarePyTorch: ""}},
		{"a transformers traceback in a container", "  File \"/usr/local/lib/python3.10/dist-packages/transformers/trainer.py\", line 1938, in train\n", map[string]string{SoftwareTransformers: ""}},
		{"an Accelerate traceback", "  File \"/home/u/.venv/lib/python3.11/site-packages/accelerate/accelerator.py\", line 2151, in backward\n", map[string]string{SoftwareAccelerate: ""}},
		{"a JAX traceback in a container", "  File \"/usr/local/lib/python3.10/dist-packages/jax/_src/interpreters/pxla.py\", line 1177, in __call__\n", map[string]string{SoftwareJAX: ""}},
		{"a TensorFlow traceback in a container", "  File \"/usr/local/lib/python3.11/dist-packages/tensorflow/python/eager/execute.py\", line 53, in quick_execute\n", map[string]string{SoftwareTensorFlow: ""}},
		{"a CuPy traceback in a container", "  File \"/usr/local/lib/python3.10/dist-packages/cupy/_core/_routines_math.pyx\", line 12\n", map[string]string{SoftwareCuPy: ""}},
		// PyTorch's own lines since 2.4: torchrun's and dynamo's log lines
		// from its source tree, c10d's warning with torchrun's rank prefix,
		// torch.load's FutureWarning, torchvision's download of weights,
		// 2.8's AcceleratorError.
		{"torchrun's log line", "W1114 17:59:52.294000 3097815 torch/distributed/run.py:774] Setting OMP_NUM_THREADS environment variable for each process to be 1 in default\n", map[string]string{SoftwarePyTorch: ""}},
		{"dynamo's log line", "W0312 10:00:00.123000 140123 torch/_dynamo/convert_frame.py:844] [0/8] torch._dynamo hit config.cache_size_limit (8)\n", map[string]string{SoftwarePyTorch: ""}},
		{"c10d's warning", "[rank0]:[W530 08:34:35.154236112 ProcessGroupNCCL.cpp:1250] Warning: WARNING: process group has NOT been destroyed before we destruct ProcessGroupNCCL.\n", map[string]string{SoftwarePyTorch: ""}},
		{"torch.load's warning", "/home/u/proj/train.py:41: FutureWarning: You are using `torch.load` with `weights_only=False` (the current default value), which uses the default pickle module implicitly.\n", map[string]string{SoftwarePyTorch: ""}},
		{"torchvision's download", "Downloading: \"https://download.pytorch.org/models/resnet50-0676ba61.pth\" to /home/u/.cache/torch/hub/checkpoints/resnet50-0676ba61.pth\n", map[string]string{SoftwarePyTorch: ""}},
		{"PyTorch 2.8's device error", "torch.AcceleratorError: CUDA error: out of memory\n", map[string]string{SoftwarePyTorch: ""}},
		{"a rank's traceback", "[rank0]: Traceback (most recent call last):\n[rank0]:   File \"/home/u/train.py\", line 88, in <module>\n", map[string]string{SoftwarePython: ""}},
		{"srun --label's traceback", "0: Traceback (most recent call last):\n", map[string]string{SoftwarePython: ""}},
		// vLLM (0.4 to 0.11): the platform it found, its engine's start with
		// its version, a V1 engine's lines, its share of the device.
		{"vLLM's start", "INFO 09-01 08:52:22 __init__.py:190] Automatically detected platform cuda.\n(EngineCore_DP0 pid=41565) INFO 10-06 15:56:35 [core.py:77] Initializing a V1 LLM engine (v0.11.0) with config: model='/home/u/models/Qwen3-8B', speculative_config=None\n", map[string]string{SoftwareVLLM: "0.11.0"}},
		{"vLLM 0.4's engine", "INFO 05-04 14:43:16 llm_engine.py:98] Initializing an LLM engine (v0.4.1) with config: model='Meta-Llama-3-8B-Instruct', speculative_config=None, tokenizer='Meta-Llama-3-8B-Instruct'\n", map[string]string{SoftwareVLLM: "0.4.1"}},
		{"vLLM's share of the device", "INFO 07-02 17:08:07 [worker.py:267] the current vLLM instance can use total_gpu_memory (79.15GiB) x gpu_memory_utilization (0.70) = 55.09GiB\n", map[string]string{SoftwareVLLM: ""}},
		// Hugging Face's warnings and headers (transformers 4.4x),
		// Accelerate's (0.3x) and DeepSpeed's (0.14) log lines.
		{"transformers' new weights", "Some weights of BertForSequenceClassification were not initialized from the model checkpoint at bert-base-uncased and are newly initialized: ['classifier.bias', 'classifier.weight']\n", map[string]string{SoftwareTransformers: ""}},
		{"transformers' Trainer header", "***** Running training *****\n  Num examples = 25,000\n", map[string]string{SoftwareTransformers: ""}},
		{"transformers' generation", "Setting `pad_token_id` to `eos_token_id`:2 for open-end generation.\n", map[string]string{SoftwareTransformers: ""}},
		{"accelerate launch's defaults", "The following values were not passed to `accelerate launch` and had defaults used instead:\n", map[string]string{SoftwareAccelerate: ""}},
		{"Accelerate's kernel warning", "Detected kernel version 4.18.0, which is below the recommended minimum of 5.5.0; this can cause the process to hang. It is recommended to upgrade the kernel to the minimum version or higher.\n", map[string]string{SoftwareAccelerate: ""}},
		{"DeepSpeed's log lines", "[2024-09-15 00:13:05,386] [INFO] [real_accelerator.py:203:get_accelerator] Setting ds_accelerator to cuda (auto detect)\n[2024-09-15 00:13:20,111] [INFO] [logging.py:96:log_dist] [Rank 0] DeepSpeed info: version=0.14.4, git-hash=unknown, git-branch=unknown\n", map[string]string{SoftwareDeepSpeed: "0.14.4"}},
		// Lightning 2's lines.
		{"Lightning's Tensor Cores advice", "You are using a CUDA device ('NVIDIA A100-SXM4-80GB') that has Tensor Cores. To properly utilize them, you should set `torch.set_float32_matmul_precision('medium' | 'high')`\n", map[string]string{SoftwareLightning: ""}},
		{"Lightning's end of a fit", "`Trainer.fit` stopped: `max_epochs=10` reached.\n", map[string]string{SoftwareLightning: ""}},
		{"Lightning's bar", "Epoch 0: 100%|██████████| 1563/1563 [00:30<00:00, 51.2it/s, v_num=0, train_loss=0.300]\n", map[string]string{SoftwareLightning: ""}},
		// XLA's own copies: jaxlib's (0.4.2x), TensorFlow's (2.15 on); newer
		// JAX's errors, which replace jaxlib.xla_extension's.
		{"jaxlib's XLA log line", "2024-05-28 04:48:02.870689: W external/xla/xla/service/gpu/nvptx_compiler.cc:760] The NVIDIA driver's CUDA version is 12.4 which is older than the ptxas CUDA version (12.5.40).\n", map[string]string{SoftwareJAX: ""}},
		{"JAX's JaxRuntimeError", "jax.errors.JaxRuntimeError: INTERNAL: cuSolver internal error\n", map[string]string{SoftwareJAX: ""}},
		{"jaxlib._jax's errors", "jaxlib._jax.XlaRuntimeError: INTERNAL: no supported devices found for platform CUDA\n", map[string]string{SoftwareJAX: ""}},
		{"TensorFlow's XLA log line", "2024-10-30 15:24:48.318121: E external/local_xla/xla/stream_executor/cuda/cuda_fft.cc:477] Unable to register cuFFT factory: Attempting to register factory for plugin cuFFT when one has already been registered\n", map[string]string{SoftwareTensorFlow: ""}},
		// Julia through CUDA.jl 5.
		{"Julia's stack through CUDA.jl", "Stacktrace:\n  [1] macro expansion\n    @ ~/.julia/packages/CUDA/35NC6/src/compiler/execution.jl:110 [inlined]\n    @ CUDA ~/.julia/packages/CUDA/35NC6/lib/cudadrv/libcuda.jl:30\n", map[string]string{SoftwareJulia: ""}},
		{"Julia's script", "in expression starting at /home/u/run.jl:12\n", map[string]string{SoftwareJulia: ""}},
		{"words that only mention it", "loading the torch of the tensorflow-free jax-less pipeline\nepoch 1 loss 0.3\nprint(jax.devices()) said cuda:0\ntraceback of nothing\n", nil},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			ev, err := ScanOutput(strings.NewReader(c.output), ScanOptions{})
			if err != nil {
				t.Fatal(err)
			}
			if len(ev.Versions) != len(c.want) {
				t.Fatalf("versions %q, want %q", ev.Versions, c.want)
			}
			for k, v := range c.want {
				if got, ok := ev.Versions[k]; !ok || got != v {
					t.Errorf("versions %q, want %s=%q", ev.Versions, k, v)
				}
			}
		})
	}
}

// JAX's preallocation under a memory cap (captured on the H100 under
// migadvisor emulate, testdata/nvml/h100-memory-holders/prealloc) logs each
// refused size as an error, CUDA_ERROR_OUT_OF_MEMORY included, takes less
// and completes: no GPU OOM, and the output says JAX ran.
func TestScanFileJAXPreallocationBackingOffIsNoOOM(t *testing.T) {
	ev, err := ScanFile("../testdata/nvml/h100-memory-holders/prealloc/1g.10gb.out", ScanOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if ev.GPUOOM != nil {
		t.Errorf("an OOM in a run that completed: %+v", ev.GPUOOM)
	}
	if v, ok := ev.Versions[SoftwareJAX]; !ok || v != "0.11.2" {
		t.Errorf("versions %q", ev.Versions)
	}
	if ev.GPUPeakMiB != 9314 {
		t.Errorf("peak %v", ev.GPUPeakMiB)
	}
}

// The first line that reads as an error is kept, with its line: what a
// script that fails for a reason of its own says first about it.
func TestScanOutputKeepsTheFirstErrorLine(t *testing.T) {
	cases := []struct{ output, want string }{
		{"epoch 1\nTraceback (most recent call last):\n  File \"t.py\", line 1, in <module>\n    import not_a_module\nModuleNotFoundError: No module named 'not_a_module'\nValueError: later\n",
			"5:ModuleNotFoundError: No module named 'not_a_module'"},
		{"srun: error: gpu01: task 0: Exited with exit code 2\n", "1:srun: error: gpu01: task 0: Exited with exit code 2"},
		{"/var/spool/slurmd/job42/slurm_script: line 8: 1234 Segmentation fault      (core dumped) ./solver\n",
			"1:/var/spool/slurmd/job42/slurm_script: line 8: 1234 Segmentation fault      (core dumped) ./solver"},
		{"Segmentation fault (core dumped)\n", "1:Segmentation fault (core dumped)"},
		// A rank's error under torchrun (PyTorch 2.4), srun --label's.
		{"[rank1]: torch.OutOfMemoryError: CUDA out of memory. Tried to allocate 1.95 GiB.\n", "1:[rank1]: torch.OutOfMemoryError: CUDA out of memory. Tried to allocate 1.95 GiB."},
		{"3: ValueError: bad shape\n", "1:3: ValueError: bad shape"},
		{"error_rate 0.12\nErrors: 0\n    raise ValueError(x)\nno errors here\n", ""},
	}
	for _, c := range cases {
		ev, err := ScanOutput(strings.NewReader(c.output), ScanOptions{})
		if err != nil {
			t.Fatal(err)
		}
		got := ""
		if e := ev.FirstError; e != nil {
			got = fmt.Sprintf("%d:%s", e.Line, e.Text)
		}
		if got != c.want {
			t.Errorf("%q: %q, want %q", c.output, got, c.want)
		}
	}
}

// A --no-prealloc variant exports the settings before the script's first
// command, says so, keeps the script's fingerprint, and its run's output
// says what it ran with.
func TestWithoutPreallocation(t *testing.T) {
	data := []byte("#!/bin/bash\n#SBATCH --gres=gpu:a100:1\npython3 train.py\n")
	out, err := WithoutPreallocation("job.sh", data)
	if err != nil {
		t.Fatal(err)
	}
	text := string(out)
	if !strings.Contains(text, "export XLA_PYTHON_CLIENT_ALLOCATOR=platform  "+AutoMarker+"\n") ||
		strings.Index(text, "export TF_FORCE_GPU_ALLOW_GROWTH=true") > strings.Index(text, "python3 train.py") {
		t.Errorf("variant:\n%s", text)
	}
	if Parse("job.sh", out).Fingerprint() != Parse("job.sh", data).Fingerprint() {
		t.Error("the block changed the script's fingerprint")
	}
	if !IsSweepVariant(out) || IsSweepVariant(data) {
		t.Error("a --no-prealloc variant is a sweep's variant, the script is not")
	}
	ev, err := ScanFile("../testdata/nvml/h100-memory-holders/prealloc/whole-noprealloc.out", ScanOptions{})
	if err != nil || ev.Settings["XLA_PYTHON_CLIENT_ALLOCATOR"] != "platform" || ev.Settings["TF_FORCE_GPU_ALLOW_GROWTH"] != "true" {
		t.Errorf("settings %v, %v", ev.Settings, err)
	}
}
