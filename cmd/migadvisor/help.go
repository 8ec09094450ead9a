package main

import (
	"embed"
	"strings"
)

// The commands' long help lives in help/<command>.txt: prose that docs
// writers edit without touching Go, and that 'make reference' renders into
// docs/reference through --help.
//
//go:embed help/*.txt
var helpFiles embed.FS

// helpText is the long help of a command, by its path joined with '-'
// ("benchmark-run"); a missing file is a build mistake that the reference
// test catches.
func helpText(name string) string {
	b, err := helpFiles.ReadFile("help/" + name + ".txt")
	if err != nil {
		panic("migadvisor: no help text help/" + name + ".txt")
	}
	return strings.TrimSuffix(string(b), "\n")
}
