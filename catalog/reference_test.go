package catalog

import (
	"math"
	"strings"
	"testing"

	"github.com/migadvisor/migadvisor/slurm"
)

func wulverReference(t *testing.T) *ReferenceSet {
	t.Helper()
	set, ok := ReferenceFor(wulver(t))
	if !ok {
		t.Fatal("no reference set for wulver")
	}
	return set
}

func TestReferenceSetReadsEveryPublishedRow(t *testing.T) {
	set := wulverReference(t)
	want := map[string]int{"gromacs_performance": 4, "llm-finetuning": 4, "pytorch_cifar10_resnet": 3,
		"pytorch_cifar10_deepcnn": 3, "pytorch_mnist_simplecnn": 3, "llm-finetuning@a5945c9": 4}
	if len(set.Benchmarks) != len(want) {
		t.Fatalf("%d benchmarks, want %d", len(set.Benchmarks), len(want))
	}
	for _, b := range set.Benchmarks {
		if len(b.Rows) != want[b.Name] {
			t.Errorf("%s: %d rows, want %d", b.Name, len(b.Rows), want[b.Name])
		}
	}
}

func TestReferenceRowsMapLabelsAndUnits(t *testing.T) {
	set := wulverReference(t)
	gmx, _ := set.Benchmark("gromacs_performance")
	r, ok := gmx.Row("2g.20gb")
	if !ok || r.Label != "A100_20gb MIG" || r.Seconds != 265.995 {
		t.Fatalf("gromacs 2g.20gb row = %+v", r)
	}
	// 81.205 ns/day for 265.995 s is 0.25 ns: the same system on every profile.
	for _, row := range gmx.Rows {
		if math.Abs(row.Work-0.25) > 0.001 {
			t.Errorf("gromacs %s: %.4f ns, want 0.25", row.Profile, row.Work)
		}
	}
	llm, _ := set.Benchmark("llm-finetuning")
	r, _ = llm.Row("1g.10gb")
	if math.Abs(r.Seconds-1.092*3600) > 1e-6 || math.Abs(r.Work-0.166327) > 1e-9 {
		t.Fatalf("llm 1g.10gb row = %+v", r)
	}
	if math.Abs(r.AllocatedMiB-5416.9) > 0.1 || math.Abs(r.PeakMiB-8554.5) > 0.1 {
		t.Errorf("llm 1g.10gb memory: allocated %.1f, reserved %.1f MiB", r.AllocatedMiB, r.PeakMiB)
	}
	old, _ := set.Benchmark("llm-finetuning@a5945c9")
	if old.IsPrior() {
		t.Error("the superseded LLM run must not be a prior")
	}
	for _, row := range old.Rows {
		if (row.Profile == "1g.10gb") != row.OOM {
			t.Errorf("old llm %s (%q): OOM = %v", row.Profile, row.Label, row.OOM)
		}
	}
	if r, _ := old.Row("full"); r.Label != "80gb (full)" || r.Seconds != 180.81 {
		t.Errorf("old llm full row = %+v", r)
	}
}

func TestReferenceRecognisesWorkloads(t *testing.T) {
	set := wulverReference(t)
	cases := map[string]string{
		"srun gmx_mpi mdrun -deffnm md -nb gpu":                   "gromacs_performance",
		"gmx mdrun -s topol.tpr":                                  "gromacs_performance",
		"from peft import LoraConfig, get_peft_model":             "llm-finetuning",
		"python train.py --dataset cifar10 --model resnet18":      "pytorch_cifar10_resnet",
		"python cifar10_deepcnn.py":                               "pytorch_cifar10_deepcnn",
		"torchvision.datasets.MNIST(root)":                        "pytorch_mnist_simplecnn",
		"python simulate.py --steps 100":                          "",
		"echo 'no gpu code here'; sleep 10 # mdrunner is not gmx": "",
	}
	for text, want := range cases {
		b, ok := set.Recognise(text)
		got := ""
		if ok {
			got = b.Name
		}
		if got != want {
			t.Errorf("Recognise(%q) = %q, want %q", text, got, want)
		}
	}
}

// A job's output says which reference benchmark it is, by the lines each
// one's tools print (as they print them): the scan names the first
// benchmark of the set whose line it holds, and lines of other codes, other
// data sets or no code of note name none. Every line is gated by a
// literal, so that a scan of every job's output stays cheap.
func TestReferenceRecognisesOutputs(t *testing.T) {
	workloads := OutputWorkloads(wulver(t))
	for _, w := range workloads.Lines() {
		if !w.Gated() {
			t.Errorf("%s: %s holds no literal every match holds: it would run on every line of every output", w.Name, w.Regex)
		}
	}
	cases := map[string]string{
		"                      :-) GROMACS - gmx mdrun, 2023.3 (-:\n":                                            "gromacs_performance",
		"GROMACS:      gmx mdrun, version 2021.5-plumed\n":                                                       "gromacs_performance",
		"               Core t (s)   Wall t (s)        (%)\n                 (ns/day)    (hour/ns)\n":            "gromacs_performance",
		"Performance:      118.590        0.202\n":                                                               "gromacs_performance",
		"trainable params: 18,464,768 || all params: 1,562,179,072 || trainable%: 1.1820\n":                      "llm-finetuning",
		"Loading checkpoint shards: 100%|██████████| 2/2 [00:03<00:00,  1.52s/it]\n":                             "llm-finetuning",
		"{'loss': 1.8754, 'grad_norm': 0.4114, 'learning_rate': 0.0002, 'epoch': 0.04}\n":                        "llm-finetuning",
		"{'loss': 2.1, 'learning_rate': 5e-05, 'epoch': 0.5}\n":                                                  "llm-finetuning",
		"{'train_runtime': 961.3, 'train_samples_per_second': 1.04, 'epoch': 1.0}\n":                             "llm-finetuning",
		"MIGADVISOR_VERSION peft 0.21.0\n":                                                                       "llm-finetuning",
		"==> Building model..\nTraining ResNet18 on CIFAR-10, 200 epochs\n":                                      "pytorch_cifar10_resnet",
		"Files already downloaded and verified\nresnet18 on cifar10: epoch 1\n":                                  "pytorch_cifar10_resnet",
		"Downloading https://www.cs.toronto.edu/~kriz/cifar-10-python.tar.gz to ./data/cifar-10-python.tar.gz\n": "pytorch_cifar10_deepcnn",
		"Files already downloaded and verified\n":                                                                "pytorch_cifar10_deepcnn",
		"data: 50000 training and 10000 test images (synthetic) in 0.7 s\n":                                      "pytorch_cifar10_deepcnn",
		"Extracting ./data/MNIST/raw/train-images-idx3-ubyte.gz to ./data/MNIST/raw\n":                           "pytorch_mnist_simplecnn",
		"Downloading http://yann.lecun.com/exdb/mnist/train-images-idx3-ubyte.gz\n":                              "pytorch_mnist_simplecnn",
		"data: 60000 training and 10000 test images (synthetic) in 0.3 s\n":                                      "pytorch_mnist_simplecnn",
		// LAMMPS, FashionMNIST, an ImageNet ResNet and plain PyTorch are
		// none of them.
		"Performance: 12.345 ns/day, 1.944 hours/ns, 224.947 timesteps/s\n":            "",
		"Extracting ./data/FashionMNIST/raw/train-images-idx3-ubyte.gz\n":              "",
		"Downloading: \"https://download.pytorch.org/models/resnet50-0676ba61.pth\"\n": "",
		"epoch 1/10: loss 1.9174\nMIGADVISOR_VERSION torch 2.11.0\n":                   "",
	}
	for output, want := range cases {
		ev, err := slurm.ScanOutput(strings.NewReader(output), slurm.ScanOptions{Workloads: workloads})
		if err != nil {
			t.Fatal(err)
		}
		if ev.Resembles != want {
			t.Errorf("%q: %q, want %q", output, ev.Resembles, want)
		}
	}
	if got := OutputWorkloads(&Site{Name: "nowhere"}); got != nil {
		t.Errorf("a site with no reference set: %d lines", len(got.Lines()))
	}
}

func TestCapacityIsTheGeometricMeanOfSMAndBandwidthShares(t *testing.T) {
	s := wulver(t)
	for name, want := range map[string]float64{
		"1g.10gb": math.Sqrt(14.0 / 108 / 8), "2g.20gb": math.Sqrt(28.0 / 108 / 4),
		"3g.40gb": math.Sqrt(42.0 / 108 / 2), "full": 1,
	} {
		if got := s.Capacity(profile(t, s, name)); math.Abs(got-want) > 1e-12 {
			t.Errorf("Capacity(%s) = %g, want %g", name, got, want)
		}
	}
}

// Profiles are found by name inside a label, as the whole GPU, then by
// the nominal memory the site's tables use, where only one profile has it.
func TestProfileForLabel(t *testing.T) {
	wulver := wulver(t)
	for label, want := range map[string]string{
		"1g.10gb": "1g.10gb", "MIG 2G.20GB": "2g.20gb", "A100 3g.40gb": "3g.40gb", "3g.40gb:1": "3g.40gb",
		"full": "full", "Whole GPU": "full", "no MIG": "full", "non-MIG A100": "full", "A100:1": "full",
		"A100_10gb MIG": "1g.10gb", "A100_20GB": "2g.20gb", "A100_80gb full GPU": "full", "80gb (full)": "full",
	} {
		if p, ok := wulver.ProfileForLabel(label); !ok || p.Name != want {
			t.Errorf("%q: %v, want %s", label, p, want)
		}
	}
	for _, label := range []string{"", "v100", "A100_30gb"} {
		if p, ok := wulver.ProfileForLabel(label); ok {
			t.Errorf("%q is %s", label, p.Name)
		}
	}
	a40, err := ModelSite("A100-40GB")
	if err != nil {
		t.Fatal(err)
	}
	for _, label := range []string{"A100_10gb", "A100_20gb MIG"} { // 1g.10gb and 2g.10gb; 3g.20gb and 4g.20gb
		if p, ok := a40.ProfileForLabel(label); ok {
			t.Errorf("%q on an A100-40GB is taken for %s, one of two", label, p.Name)
		}
	}
}
