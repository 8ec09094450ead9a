package slurm

import (
	"bytes"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"
)

func outputWorkloads(pairs ...string) *OutputWorkloads {
	var out []OutputWorkload
	for i := 0; i < len(pairs); i += 2 {
		out = append(out, NewOutputWorkload(pairs[i], regexp.MustCompile(pairs[i+1])))
	}
	return NewOutputWorkloads(out...)
}

// The scan names the first listed workload whose line the output holds,
// whatever the order of the lines: a ResNet on CIFAR-10 is listed before
// any job that downloads CIFAR-10, and a line of a later workload changes
// nothing once an earlier one is found.
func TestScanNamesTheWorkloadTheOutputShows(t *testing.T) {
	workloads := outputWorkloads(
		"gromacs", `:-\) GROMACS - gmx\S* mdrun`,
		"gromacs", `^Performance:\s+[\d.]+\s+[\d.]+\s*$`,
		"resnet", `ResNet\d*.*CIFAR|CIFAR.*ResNet`,
		"cifar", `cifar-10-python\.tar\.gz`,
		"mnist", `\bMNIST/raw/`,
	)
	for _, c := range []struct{ name, output, want string }{
		{"banner", "                      :-) GROMACS - gmx mdrun, 2023.3 (-:\n\nstep 0\n", "gromacs"},
		{"gmx_mpi", ":-) GROMACS - gmx_mpi mdrun, 2021.5 (-:\n", "gromacs"},
		{"performance only", "                 (ns/day)    (hour/ns)\nPerformance:      118.590        0.202\n", "gromacs"},
		// LAMMPS prints its own Performance line, in words: no GROMACS.
		{"lammps", "Performance: 12.345 ns/day, 1.944 hours/ns, 224.947 timesteps/s\n", ""},
		{"cifar, then resnet", "Downloading https://www.cs.toronto.edu/~kriz/cifar-10-python.tar.gz to ./data/cifar-10-python.tar.gz\nTraining ResNet18 on CIFAR-10\n", "resnet"},
		{"resnet, then cifar", "Training ResNet18 on CIFAR-10\nExtracting ./data/cifar-10-python.tar.gz to ./data\n", "resnet"},
		{"cifar, then mnist", "Extracting ./data/cifar-10-python.tar.gz to ./data\nExtracting ./data/MNIST/raw/train-images-idx3-ubyte.gz to ./data/MNIST/raw\n", "cifar"},
		{"fashion", "Extracting ./data/FashionMNIST/raw/train-images-idx3-ubyte.gz to ./data/FashionMNIST/raw\n", ""},
		{"nothing", "epoch 1: loss 0.3\nMIGADVISOR_WORK 100 samples\n", ""},
	} {
		ev, err := ScanOutput(strings.NewReader(c.output), ScanOptions{Workloads: workloads})
		if err != nil {
			t.Fatal(err)
		}
		if ev.Resembles != c.want {
			t.Errorf("%s: %q, want %q", c.name, ev.Resembles, c.want)
		}
	}
	ev, _ := ScanOutput(strings.NewReader(":-) GROMACS - gmx mdrun, 2023.3 (-:\n"), ScanOptions{})
	if ev.Resembles != "" {
		t.Errorf("no workloads listed, yet %q", ev.Resembles)
	}
}

// A file larger than the cap is read at its head and tail: a banner at the
// head and a line at the tail both count.
func TestScanNamesTheWorkloadOfACappedFile(t *testing.T) {
	workloads := outputWorkloads("gromacs", `^Performance:\s+[\d.]+\s+[\d.]+\s*$`, "mnist", `\bMNIST/raw/`)
	body := "Extracting ./data/MNIST/raw/t10k-labels-idx1-ubyte.gz\n" + strings.Repeat("step\n", 4096) + "Performance:      118.590        0.202\n"
	path := filepath.Join(t.TempDir(), "out")
	if err := os.WriteFile(path, []byte(body), 0o644); err != nil {
		t.Fatal(err)
	}
	ev, err := ScanFile(path, ScanOptions{MaxBytes: 1024, Workloads: workloads})
	if err != nil || !ev.Truncated || ev.Resembles != "gromacs" {
		t.Errorf("%v: truncated %v, %q", err, ev.Truncated, ev.Resembles)
	}
}

// Each line is tested against a workload's expression only when it holds
// one of the literals every match of it holds: a concatenation's longest,
// every branch's of an alternation; none where a match may hold none.
func TestOutputWorkloadGates(t *testing.T) {
	for _, c := range []struct {
		re    string
		gates []string
	}{
		{`:-\) GROMACS - gmx\S* mdrun`, []string{":-) GROMACS - gmx"}},
		{`^Files already downloaded and verified$`, []string{"Files already downloaded and verified"}},
		{`trainable params: [\d,]+ \|\| all params`, []string{"trainable params: "}},
		{`ResNet\d*.*CIFAR|CIFAR.*ResNet`, []string{"ResNet"}},
		{`ResNet.*CIFAR|cifar`, []string{"ResNet", "cifar"}},
		{`(?:peft|trl) \d`, []string{"peft", "trl"}},
		{`(?i)mnist`, nil},
		{`a?b?`, nil},
		{`[Rr]esnet`, []string{"esnet"}},
	} {
		w := NewOutputWorkload("w", regexp.MustCompile(c.re))
		var got []string
		for _, g := range w.gates {
			got = append(got, string(g))
		}
		slices.Sort(got)
		slices.Sort(c.gates)
		if !slices.Equal(got, c.gates) || w.Gated() != (len(c.gates) > 0) {
			t.Errorf("%s: gates %q, want %q", c.re, got, c.gates)
		}
	}
	// Ungated, the expression still decides.
	w := NewOutputWorkload("mnist", regexp.MustCompile(`(?i)mnist/raw`))
	if !w.matches([]byte("./data/MNIST/raw/x")) || w.matches([]byte("cifar")) {
		t.Error("an ungated expression does not decide alone")
	}
}

// FuzzOutputWorkloadGates holds the gates to what they promise on any
// line: the filter finds a gate exactly where one is in the line, and every
// line an expression matches holds one of its gates, so that no line of a
// workload is passed over.
func FuzzOutputWorkloadGates(f *testing.F) {
	ws := outputWorkloads(
		"gromacs", `:-\) GROMACS - gmx\S* mdrun\b`,
		"gromacs", `^\s+\(ns/day\)\s+\(hour/ns\)\s*$`,
		"gromacs", `^Performance:\s+[\d.]+\s+[\d.]+\s*$`,
		"llm", `trainable params: [\d,]+ \|\| all params: [\d,]+ \|\| trainable%`,
		"llm", `^\{'loss': [-+.\deE]+, '(?:grad_norm|learning_rate)': `,
		"llm", `^MIGADVISOR_VERSION (?:peft|trl|bitsandbytes) `,
		"resnet", `(?:ResNet|resnet)-?\d*\b.*\b(?:CIFAR|cifar)-?10\b`,
		"cifar", `cifar-10-python\.tar\.gz`,
		"mnist", `\bMNIST/raw/`,
		"x", `a[bc]d(?:ef)+|xy`,
	)
	for _, seed := range []string{
		":-) GROMACS - gmx mdrun, 2023.3 (-:", "Performance:      118.590        0.202", "                 (ns/day)    (hour/ns)",
		"trainable params: 1,2 || all params: 3 || trainable%: 1", "{'loss': 1.5, 'grad_norm': 0.2, ", "MIGADVISOR_VERSION peft 0.21",
		"ResNet18 on CIFAR-10", "cifar-10-python.tar.gz", "./MNIST/raw/", "acdefef", "xy", "epoch 1: loss 0.3",
	} {
		f.Add([]byte(seed))
	}
	f.Fuzz(func(t *testing.T, line []byte) {
		in := false
		for _, w := range ws.lines {
			own := slices.ContainsFunc(w.gates, func(g []byte) bool { return bytes.Contains(line, g) })
			if w.Regex.Match(line) && !own {
				t.Errorf("%s matches %q, which holds none of its gates %q", w.Regex, line, w.gates)
			}
			in = in || own
		}
		if got := ws.gates.any(line); got != in {
			t.Errorf("%q: the filter says %v, the gates %v", line, got, in)
		}
	})
}
