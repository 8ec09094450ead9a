package accuracy

import (
	"math"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/migadvisor/migadvisor/advisor/runmodel"
	"github.com/migadvisor/migadvisor/catalog/catalogtest"
)

// The reference workloads emulated on an H100 (scripts/device/emulate-
// workloads.sh, testdata/nvml/h100-emulate-workloads): the ratios between
// Wulver's profiles, as they ran and as the runtime model corrects them
// from the shares each emulated slice was measured to have, against the
// ratios Wulver published for the real A100 slices.
func TestAccuracyOfEmulation(t *testing.T) {
	site := catalogtest.Wulver(t)
	published := map[string]Case{}
	for _, c := range append(ReferenceCases(site), wulverMatmul(t, site)...) {
		published[c.Name] = c
	}
	metric := func(name string) *regexp.Regexp {
		return regexp.MustCompile(`^MIGADVISOR_METRIC ` + name + ` ([\d.]+)`)
	}
	// A streaming kernel on a real slice has the slice's share of the
	// memory system: its memory slices (an A100 1g.10gb, 1 of 8).
	bandwidth := Case{Name: "a slice's share of bandwidth"}
	for _, p := range site.Profiles {
		bandwidth.Points = append(bandwidth.Points, runmodel.Point{Profile: p.Name, Shares: site.Shares(&p), Seconds: 1 / site.Shares(&p).Bandwidth})
	}
	published[bandwidth.Name] = bandwidth
	workloads := []struct {
		dir, name, published string
		rate                 *regexp.Regexp
	}{
		{"fp16", "", "matrix_multiplication FP16", regexp.MustCompile(`^rate fp16 ([\d.]+)`)},
		{"matmul", "matrix_multiplication FP16, beside copies", "matrix_multiplication FP16", regexp.MustCompile(`^rate fp16 ([\d.]+)`)},
		{"matmul", "", "matrix_multiplication FP32", regexp.MustCompile(`^rate tf32 ([\d.]+)`)},
		{"stream", "copy", bandwidth.Name, regexp.MustCompile(`^rate copy ([\d.]+)`)},
		{"stream", "triad", bandwidth.Name, regexp.MustCompile(`^rate triad ([\d.]+)`)},
		{"mnist", "", "pytorch_mnist_simplecnn", metric("samples_per_s")},
		{"deepcnn", "", "pytorch_cifar10_deepcnn", metric("samples_per_s")},
		{"resnet", "", "pytorch_cifar10_resnet", metric("samples_per_s")},
		{"llm", "llm-finetuning, bf16 LoRA", "llm-finetuning", metric("tokens_per_s")},
	}
	var rows []Ratio
	for _, w := range workloads {
		pub, ok := published[w.published]
		if !ok {
			t.Fatalf("no published %s", w.published)
		}
		name := w.name
		if name == "" {
			name = w.published
		}
		dirs, _ := filepath.Glob(filepath.Join("..", "..", "testdata", "nvml", "h100-emulate-workloads", w.dir+"*"))
		c, err := ReadEmulations(site, name, w.rate, dirs...)
		if err != nil {
			t.Fatal(err)
		}
		got := CompareEmulation(site, c, pub)
		if len(got) == 0 {
			t.Fatalf("%s: nothing to compare (%d emulated points)", w.published, len(c.Points))
		}
		rows = append(rows, got...)
	}
	var out strings.Builder
	if err := PrintRatios(&out, rows); err != nil {
		t.Fatal(err)
	}
	t.Log("\n" + out.String())

	// The kernels, each as Wulver ran it (or a slice's share of bandwidth),
	// and the two CNNs, explained by the GPU's busy time (by their wall
	// times alone, 24% and 30% off on 1g.10gb): within the 15% of
	// every ratio. The ResNet and the LoRA are reported, not held to it:
	// neither is Wulver's workload (see README).
	kernels := map[string]bool{"matrix_multiplication FP16": true, "matrix_multiplication FP16, beside copies": true,
		"matrix_multiplication FP32": true, "copy": true, "triad": true,
		"pytorch_mnist_simplecnn": true, "pytorch_cifar10_deepcnn": true}
	var plain, corrected float64
	for _, r := range rows {
		plain += math.Abs(r.PlainError())
		corrected += math.Abs(r.CorrectedError())
		if kernels[r.Workload] && math.Abs(r.CorrectedError()) > 0.15 {
			t.Errorf("%s %s: corrected %+.0f%% off the published ratio", r.Workload, r.Profile, 100*r.CorrectedError())
		}
	}
	if n := float64(len(rows)); corrected > plain || corrected/n > 0.10 {
		t.Errorf("corrected ratios %.0f%% off on average, as emulated %.0f%%: want the correction better, and within 10%%", 100*corrected/n, 100*plain/n)
	}
}
