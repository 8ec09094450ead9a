// Package catalogtest holds the helpers that several packages' tests share:
// the built-in Wulver site and scripts written to a test's directory. Tests
// only; it sits beneath the layers whose tests use it.
package catalogtest

import (
	"os"
	"testing"

	"github.com/migadvisor/migadvisor/catalog"
	"github.com/migadvisor/migadvisor/slurm"
)

// Wulver is the built-in Wulver site, which most tests price and judge at.
func Wulver(t testing.TB) *catalog.Site {
	t.Helper()
	site, err := catalog.Builtin("wulver")
	if err != nil {
		t.Fatal(err)
	}
	return site
}

// WriteScript writes text to path and reads it back as a batch script.
func WriteScript(t testing.TB, path, text string) *slurm.Script {
	t.Helper()
	if err := os.WriteFile(path, []byte(text), 0o644); err != nil {
		t.Fatal(err)
	}
	s, err := slurm.ReadScript(path)
	if err != nil {
		t.Fatal(err)
	}
	return s
}
