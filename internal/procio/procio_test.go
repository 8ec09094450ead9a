package procio

import (
	"os"
	"testing"
)

// A file read grows rchar by its size and syscr by the calls; a counter
// the kernel does not keep is -1.
func TestCountGrowsWithARead(t *testing.T) {
	if Count("rchar") < 0 {
		t.Fatal("/proc/self/io has no rchar: the tests that use it cannot check what they read")
	}
	f, err := os.CreateTemp(t.TempDir(), "data")
	if err != nil {
		t.Fatal(err)
	}
	f.Write(make([]byte, 100_000))
	f.Close()
	chars, calls := Count("rchar"), Count("syscr")
	if _, err := os.ReadFile(f.Name()); err != nil {
		t.Fatal(err)
	}
	if got := Count("rchar") - chars; got < 100_000 {
		t.Errorf("rchar grew by %d reading 100,000 bytes", got)
	}
	if Count("syscr") <= calls {
		t.Error("syscr did not grow with a read")
	}
	if n := Count("no_such_counter"); n != -1 {
		t.Errorf("an unknown counter: %d", n)
	}
}
