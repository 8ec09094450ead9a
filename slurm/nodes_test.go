package slurm

import (
	"os"
	"reflect"
	"strings"
	"testing"
)

// The dev cluster's node, as its scontrol printed it, and the forms sites
// write: sockets after a count, untyped GPUs, other GRES, no GRES.
func TestParseGPUNodes(t *testing.T) {
	dev, err := os.ReadFile("../testdata/scontrol/show-node-devcluster-22.05.txt")
	if err != nil {
		t.Fatal(err)
	}
	nodes, err := ParseGPUNodes(string(dev))
	if err != nil {
		t.Fatal(err)
	}
	want := []GPUNode{{Name: "vm", GPUs: map[string]int{"a100_10g": 2, "a100_20g": 1, "a100_40g": 1, "a100": 1}}}
	if !reflect.DeepEqual(nodes, want) {
		t.Errorf("dev cluster: %+v, want %+v", nodes, want)
	}
	text := strings.Join([]string{
		"NodeName=gpu01 Arch=x86_64 Gres=gpu:a100:4(S:0-1) State=IDLE",
		"NodeName=gpu02 Gres=gpu:nvidia_a100_3g.40gb:4(S:0),gpu:nvidia_a100_1g.10gb:8(S:1),shard:gpu:16 State=IDLE",
		"NodeName=gpu03 Gres=gpu:2 State=IDLE",
		"NodeName=cpu01 Gres=(null) State=IDLE",
	}, "\n")
	nodes, err = ParseGPUNodes(text)
	if err != nil {
		t.Fatal(err)
	}
	want = []GPUNode{
		{Name: "gpu01", GPUs: map[string]int{"a100": 4}},
		{Name: "gpu02", GPUs: map[string]int{"nvidia_a100_3g.40gb": 4, "nvidia_a100_1g.10gb": 8}},
		{Name: "gpu03", GPUs: map[string]int{"": 2}},
	}
	if !reflect.DeepEqual(nodes, want) {
		t.Errorf("%+v, want %+v", nodes, want)
	}
	for _, bad := range []string{"Gres=gpu:a100:4", "NodeName=x Gres=gpu:a100:many", "NodeName=x Gres=gpu:a:b:c:4"} {
		if _, err := ParseGPUNodes(bad); err == nil {
			t.Errorf("%q: no error", bad)
		}
	}
}
