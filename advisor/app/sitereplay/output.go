package sitereplay

import (
	"fmt"
	"math/rand/v2"
	"strings"
)

// outputFunc writes what a job of the class prints: the lines its
// software really prints, which collect reads (banners, log lines, the
// errors it dies of). oom is the out-of-memory error's text, "" when it
// completed.
type outputFunc func(b *strings.Builder, j *Job, rng *rand.Rand, oom bool)

func gromacsOutput(b *strings.Builder, j *Job, rng *rand.Rand, _ bool) {
	fmt.Fprintf(b, "                      :-) GROMACS - gmx mdrun, 2023.3 (-:\n\n")
	fmt.Fprintf(b, "Executable:   /apps/easybuild/software/GROMACS/2023.3-foss-2023a-CUDA-12.1.1/bin/gmx\n")
	fmt.Fprintf(b, "Command line:\n  gmx mdrun -deffnm md_%d -nb gpu -pme gpu -ntomp 4\n\n", j.ID%97)
	fmt.Fprintf(b, "Reading file md_%d.tpr, VERSION 2023.3 (single precision)\n", j.ID%97)
	fmt.Fprintf(b, "1 GPU selected for this run.\nUsing 1 MPI thread\nUsing 4 OpenMP threads\n\n")
	nsDay := 118.6 / j.ratioRan() * (0.97 + 0.06*rng.Float64())
	fmt.Fprintf(b, "               Core t (s)   Wall t (s)        (%%)\n       Time:   %10.3f   %10.3f      400.0\n", 4*j.ElapsedS, j.ElapsedS)
	fmt.Fprintf(b, "                 (ns/day)    (hour/ns)\nPerformance:   %8.3f    %8.3f\n\nGROMACS reminds you: \"Everything's formal now.\"\n", nsDay, 24/nsDay)
}

func huggingFaceOutput(b *strings.Builder, j *Job, rng *rand.Rand, oom bool) {
	b.WriteString("Loading checkpoint shards: 100%|██████████| 2/2 [00:03<00:00,  1.62s/it]\n")
	b.WriteString("trainable params: 18,464,768 || all params: 1,562,179,072 || trainable%: 1.1820\n")
	for step := 1; step <= 3; step++ {
		fmt.Fprintf(b, "{'loss': %.4f, 'grad_norm': %.4f, 'learning_rate': 0.0002, 'epoch': %.2f}\n", 1.9-0.3*float64(step)+0.05*rng.Float64(), 0.4+0.1*rng.Float64(), 0.33*float64(step))
	}
	if oom {
		torchOOM(b, j)
		return
	}
	// The Trainer's throughput is the profile's: a job of more samples runs
	// longer at the same rate.
	rate := 2.4 / j.ratioRan() * (0.98 + 0.04*rng.Float64())
	fmt.Fprintf(b, "{'train_runtime': %.1f, 'train_samples_per_second': %.3f, 'train_steps_per_second': %.3f, 'train_loss': 1.21, 'epoch': 1.0}\n", j.ElapsedS-60, rate, rate/8)
}

func cifarOutput(b *strings.Builder, j *Job, rng *rand.Rand, oom bool) {
	b.WriteString("Files already downloaded and verified\nFiles already downloaded and verified\n")
	for epoch := 1; epoch <= 3; epoch++ {
		fmt.Fprintf(b, "Epoch [%d/30], Step [390/390], Loss: %.4f\n", epoch, 1.6-0.3*float64(epoch)+0.1*rng.Float64())
	}
	if oom {
		torchOOM(b, j)
		return
	}
	fmt.Fprintf(b, "Test Accuracy: %.2f %%\n", 76+3*rng.Float64())
}

func mnistOutput(b *strings.Builder, j *Job, rng *rand.Rand, oom bool) {
	b.WriteString("Downloading http://yann.lecun.com/exdb/mnist/train-images-idx3-ubyte.gz\nExtracting ./data/MNIST/raw/train-images-idx3-ubyte.gz to ./data/MNIST/raw\n")
	for epoch := 1; epoch <= 3; epoch++ {
		fmt.Fprintf(b, "Train Epoch: %d [59520/60000 (99%%)]\tLoss: %.6f\n", epoch, 0.3/float64(epoch)*(0.8+0.4*rng.Float64()))
	}
	if oom {
		torchOOM(b, j)
		return
	}
	fmt.Fprintf(b, "\nTest set: Average loss: 0.0281, Accuracy: %d/10000 (99%%)\n", 9880+rng.IntN(40))
}

func torchOutput(b *strings.Builder, j *Job, rng *rand.Rand, oom bool) {
	fmt.Fprintf(b, "rank 0: world size %d, device cuda:0\n", max(j.GPUs, 1))
	for step := 1; step <= 3; step++ {
		fmt.Fprintf(b, "step %d00 loss %.3f lr 3.0e-04\n", step, 2.5-0.4*float64(step)+0.1*rng.Float64())
	}
	if oom {
		torchOOM(b, j)
		return
	}
	b.WriteString("saved checkpoint to checkpoints/last.pt\n")
}

func fixedTimeOutput(b *strings.Builder, j *Job, rng *rand.Rand, oom bool) {
	torchOutput(b, j, rng, oom)
	fmt.Fprintf(b, "slurmstepd: error: *** JOB %d ON n0104 CANCELLED AT 2026-10-15T12:00:00 DUE TO TIME LIMIT ***\n", j.ID)
}

// torchOOM is PyTorch's out-of-memory error, as it prints it on a slice.
func torchOOM(b *strings.Builder, j *Job) {
	usable := usableGiB[j.ProfileIndex()]
	tried := j.NeedGiB - usable + 0.6
	fmt.Fprintf(b, "Traceback (most recent call last):\n  File \"/home/%s/train.py\", line 88, in <module>\n", j.User)
	packages := "/apps/conda/envs/torch/lib/python3.11/site-packages"
	if j.ID%2 == 0 { // in NGC's container, run by Apptainer
		packages = "/usr/local/lib/python3.10/dist-packages"
	}
	fmt.Fprintf(b, "    loss.backward()\n  File \"%s/torch/_tensor.py\", line 522, in backward\n", packages)
	fmt.Fprintf(b, "torch.OutOfMemoryError: CUDA out of memory. Tried to allocate %.2f GiB. GPU 0 has a total capacity of %.2f GiB of which %.2f MiB is free. Including non-PyTorch memory, this process has %.2f GiB memory in use. Of the allocated memory %.2f GiB is allocated by PyTorch, and 22.00 MiB is reserved by PyTorch but unallocated.\n",
		tried, usable, 14.0, usable-0.02, usable-0.6)
}

func cupyOutput(b *strings.Builder, j *Job, _ *rand.Rand, _ bool) {
	fmt.Fprintf(b, "cupy %s on NVIDIA A100-SXM4-80GB\n", "13.3.0")
	for n := 8192; n <= 32768; n *= 2 {
		fmt.Fprintf(b, "n=%d fp32 %.1f TFLOP/s\n", n, 18.9*float64(n)/32768/j.ratioRan()*7.4)
	}
}

func jaxOutput(b *strings.Builder, j *Job, rng *rand.Rand, _ bool) {
	b.WriteString("jax devices: [CudaDevice(id=0)]\n")
	for epoch := 1; epoch <= 3; epoch++ {
		fmt.Fprintf(b, "epoch %d train_loss=%.4f eval_acc=%.4f\n", epoch, 0.9/float64(epoch)+0.05*rng.Float64(), 0.8+0.05*float64(epoch))
	}
}

// kerasOutput is Keras 3 as it lands in a file: on Linux it redraws its
// bar even where stdout is no terminal, each update after backspaces and
// a carriage return on the same line, in colour; every other job's first
// epoch line is the verbose=2 form. TensorFlow says how much of the device
// it mapped.
func kerasOutput(b *strings.Builder, j *Job, rng *rand.Rand, _ bool) {
	b.WriteString("I0000 00:00:1760000000.123456   81234 gpu_device.cc:2022] Created device /job:localhost/replica:0/task:0/device:GPU:0 with 78915 MB memory:  -> device: 0, name: NVIDIA A100-SXM4-80GB, pci bus id: 0000:07:00.0, compute capability: 8.0\n")
	const bar, done = "\x1b[37m━━━━━━━━━━━━━━━━━━━━\x1b[0m", "\x1b[32m━━━━━━━━━━━━━━━━━━━━\x1b[0m\x1b[37m\x1b[0m"
	for epoch := 1; epoch <= 3; epoch++ {
		secs, ms, acc, loss := 40+rng.IntN(10), 26+rng.IntN(5), 0.6+0.1*float64(epoch), 1.1-0.2*float64(epoch)
		if j.ID%2 == 0 {
			fmt.Fprintf(b, "Epoch %d/20\n1563/1563 - %ds - %dms/step - accuracy: %.4f - loss: %.4f\n", epoch, secs, ms, acc, loss)
			continue
		}
		fmt.Fprintf(b, "Epoch %d/20\n\r\x1b[1m   1/1563\x1b[0m %s \x1b[1m2:14\x1b[0m 86ms/step - accuracy: 0.1000 - loss: 2.3026%s", epoch, bar, strings.Repeat("\x08", 40))
		fmt.Fprintf(b, "\r\x1b[1m1563/1563\x1b[0m %s \x1b[1m%ds\x1b[0m %dms/step - accuracy: %.4f - loss: %.4f\n", done, secs, ms, acc, loss)
	}
}

func solverOutput(b *strings.Builder, j *Job, rng *rand.Rand, _ bool) {
	b.WriteString("FlowSolve 4.2.1 (CUDA backend)\nmesh: 48M cells, 6 fields\n")
	for it := 1; it <= 3; it++ {
		fmt.Fprintf(b, "iter %5d residual %.3e dt %.2e\n", it*1000, 1e-3/float64(it*it)*(1+rng.Float64()), 2e-4)
	}
	b.WriteString("converged\n")
}

func postprocOutput(b *strings.Builder, j *Job, rng *rand.Rand, _ bool) {
	b.WriteString("postproc: reading 412 snapshots\n")
	fmt.Fprintf(b, "postproc: FFT of %d^3 grid on the GPU\npostproc: wrote spectra.h5\n", 1024+128*rng.IntN(2))
}
