package workloads

import (
	"strings"
	"testing"
)

func TestWriteListIsAWorkloadARow(t *testing.T) {
	var b strings.Builder
	ws := []*Workload{{Name: "gromacs_stmv", Title: "GROMACS STMV", Needs: "gmx"}, {Name: "mnist", Title: "MNIST", Needs: "PyTorch"}}
	if err := WriteList(&b, ws); err != nil {
		t.Fatal(err)
	}
	want := "WORKLOAD      TITLE         NEEDS\ngromacs_stmv  GROMACS STMV  gmx\nmnist         MNIST         PyTorch\n"
	if b.String() != want {
		t.Errorf("got:\n%s\nwant:\n%s", b.String(), want)
	}
}
