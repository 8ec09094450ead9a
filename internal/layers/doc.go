// Package layers holds no code: its test checks the design card's layering
// on the real import graph (cmd → bench → advisor → catalog → slurm, each
// importing only those below it), so that CI fails on an import that runs
// back up the layers.
package layers
