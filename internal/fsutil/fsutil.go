// Package fsutil answers the questions about paths that several layers ask:
// whether two names are one file, and a path made absolute where it can be.
package fsutil

import (
	"os"
	"path/filepath"
)

// SameFile reports whether a and b both exist and are one file (through
// links and different spellings alike).
func SameFile(a, b string) bool {
	ia, err := os.Stat(a)
	if err != nil {
		return false
	}
	ib, err := os.Stat(b)
	return err == nil && os.SameFile(ia, ib)
}

// SamePath is SameFile for paths that may not exist yet: where either is
// missing, it compares their absolute, cleaned names.
func SamePath(a, b string) bool {
	if SameFile(a, b) {
		return true
	}
	return Abs(a) == Abs(b)
}

// Abs is p made absolute and clean, or p as it is when the working
// directory cannot be read.
func Abs(p string) string {
	if a, err := filepath.Abs(p); err == nil {
		return a
	}
	return p
}
