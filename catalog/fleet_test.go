package catalog

import (
	"os"
	"strings"
	"testing"
)

func TestGPULayoutReadsTheSitesNames(t *testing.T) {
	site, err := Builtin("wulver")
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct{ text, want, err string }{
		{"full", "full", ""},
		{" FULL ", "full", ""},
		{"1g.10gb, 1g.10gb,2g.20gb,3g.40gb", "3g.40gb,2g.20gb,1g.10gb,1g.10gb", ""},
		{"a100_10g,a100_40g", "3g.40gb,1g.10gb", ""}, // the Slurm types that ask for them
		{"3g.40gb,3g.40gb", "3g.40gb,3g.40gb", ""},
		{"3g.40gb,3g.40gb,1g.10gb", "", "memory slices"},
		{"2g.20gb,2g.20gb,2g.20gb,1g.10gb,1g.10gb", "", "compute slices"},
		{"3g.40gb,full", "", "whole GPU"},
		{"4g.40gb", "", "not a profile of the site"},
		{"3g.40gb,,1g.10gb", "", "empty profile"},
	} {
		got, err := site.GPULayout(c.text)
		if c.err != "" {
			if err == nil || !strings.Contains(err.Error(), c.err) {
				t.Errorf("GPULayout(%q) = %v, %v; want an error saying %q", c.text, got, err, c.err)
			}
			continue
		}
		if err != nil || strings.Join(got, ",") != c.want {
			t.Errorf("GPULayout(%q) = %v, %v; want %s", c.text, got, err, c.want)
		}
	}
}

// A [[gpu_nodes]] the GPU cannot hold is refused at its line.
func TestGPUNodesAreCheckedAtTheirLine(t *testing.T) {
	base, err := os.ReadFile("sites/wulver.toml")
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct{ add, key, want string }{
		{"[[gpu_nodes]]\ncount = 2\ngpus = 4\nlayout = \"3g.40gb,3g.40gb,2g.20gb\"\n", "layout", "memory slices"},
		{"[[gpu_nodes]]\ncount = 0\ngpus = 4\nlayout = \"full\"\n", "count", "count must be 1 node or more"},
		{"[[gpu_nodes]]\ncount = 1\ngpus = 0\nlayout = \"full\"\n", "gpus", "gpus must be 1 GPU per node or more"},
	} {
		data := string(base) + "\n" + c.add
		_, err := Parse("site.toml", []byte(data))
		fe, ok := err.(*FileError)
		if !ok || !strings.Contains(fe.Msg, c.want) {
			t.Errorf("%q: %v, want a file error saying %q", c.add, err, c.want)
			continue
		}
		lines := strings.Split(data, "\n")
		if fe.Line < 1 || fe.Line > len(lines) || !strings.HasPrefix(lines[fe.Line-1], c.key+" =") {
			t.Errorf("%q: line %d (%q) is not the key's", c.add, fe.Line, lines[max(fe.Line-1, 0)])
		}
		if fe.Line <= strings.Count(string(base), "\n") {
			t.Errorf("%q: line %d is in the site's own lines, not the added [[gpu_nodes]]", c.add, fe.Line)
		}
	}
}
