package accuracy

import (
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/migadvisor/migadvisor/catalog"
	"github.com/migadvisor/migadvisor/catalog/catalogtest"
)

func TestCompareTablesScoresASetPerTable(t *testing.T) {
	site, err := catalog.ModelSite("A100-40GB")
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	write := func(name, text string) string {
		file := filepath.Join(dir, name)
		if err := os.WriteFile(file, []byte(text), 0o644); err != nil {
			t.Fatal(err)
		}
		return file
	}
	lab := write("lab.csv", "job,profile,time (s)\nresnet,1g.5gb,1800\nresnet,3g.20gb,720\nresnet,full,450\n")
	single := write("single.csv", "job,profile,time (s)\na,1g.5gb,10\nb,full,3\n")
	var left []string
	rows, err := CompareTables(site, []string{single, lab}, func(table string) { left = append(left, table) })
	if err != nil || len(rows) == 0 || rows[len(rows)-1].Set != "lab" || rows[len(rows)-1].Protocol != Overall {
		t.Fatalf("rows %+v, %v", rows, err)
	}
	if !slices.Equal(left, []string{single}) {
		t.Errorf("left out %q", left)
	}
	for _, c := range []struct {
		name   string
		site   *catalog.Site
		tables []string
		err    string
	}{
		{"no set to score", site, []string{single}, "no table has a job measured on two profiles or more"},
		{"no such file", site, []string{filepath.Join(dir, "none.csv")}, "none.csv"},
		{"no reference benchmarks", site, nil, "has no built-in reference benchmarks"},
	} {
		if _, err := CompareTables(c.site, c.tables, func(string) {}); err == nil || !strings.Contains(err.Error(), c.err) {
			t.Errorf("%s: %v, want %q", c.name, err, c.err)
		}
	}
	rows, err = CompareTables(catalogtest.Wulver(t), nil, nil)
	if err != nil || rows[0].Set != "wulver workloads" {
		t.Errorf("the reference benchmarks: %v, %+v", err, rows)
	}
}
