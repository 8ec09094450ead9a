package layers

import (
	"bufio"
	"bytes"
	"fmt"
	"go/ast"
	"go/importer"
	"go/parser"
	"go/token"
	"go/types"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"slices"
	"strings"
	"testing"
)

// engineFiles stacks the engine's files (advisor/*.go) as the package
// layers stack the packages, the wiring on top: Recommend calls select and
// prepare, judge, the slowdown, decide and change in turn, each stage
// taking the values the ones before it returned, so a later stage stands
// above an earlier one and may use what it defines (decide reads the
// evidence prepare gathered), never the reverse: prepare using judge, or
// judge using decide, runs back up. Beneath the stages are what every
// stage reads (the job's GPUs, memory, emulated runs, a run, the next step
// as data, units and words). A file may use only what the files listed
// after it define. Files not listed (advise, gather, price, submission,
// the text, workloads, peers) use the engine: it uses none of them.
var engineFiles = []string{
	"recommend.go", // the pipeline: Recommend calls each stage in turn
	"change.go",    // 5: the script's lines for the decision
	"decide.go",    // 4: the profile recommended, why, and the next step
	"slowdown.go",  // 3: profiles too slow beside the fastest left out
	"judge.go",     // 2: one profile judged on the evidence
	"prepare.go",   // 1: the evidence: runs, memory need, points, scaling
	"gpuuse.go",    // what follows from a job's GPUs
	"memory.go",    // what held a run's memory
	"emulated.go",  // emulated runs
	"evidence.go",  // a run, as the engine weighs it
	"next.go",      // the next step, as data
	"units.go",     // work units and words
}

// TestNoCallRunsBackUpTheEngine type-checks advisor and reports every use
// (a call, or a function passed as a value) in one of engineFiles of a
// function or method declared in a file listed before it, or in a file of
// advisor not listed: those use the engine, and it runs without them.
func TestNoCallRunsBackUpTheEngine(t *testing.T) {
	rank := map[string]int{}
	for i, f := range engineFiles {
		rank[f] = i
		if _, err := os.Stat(filepath.Join("../../advisor", f)); err != nil {
			t.Errorf("engineFiles lists %s, which advisor does not have", f)
		}
	}
	for _, u := range engineUses(t) {
		from, inEngine := rank[u.from]
		to, toEngine := rank[u.to]
		switch {
		case !inEngine:
		case !toEngine:
			t.Errorf("%s: %s uses %s, defined in %s, a file that uses the engine", u.pos, u.from, u.name, u.to)
		case to < from:
			t.Errorf("%s: %s uses %s, defined in %s, which stands above it (a later stage, or the wiring): the use runs back up", u.pos, u.from, u.name, u.to)
		}
	}
}

// engineUse is a use in one file of advisor of a function or method
// declared in another.
type engineUse struct {
	pos, from, to, name string
}

// engineUses are the uses in one file of advisor of a function or method
// declared in another, as go/types resolves them on the package's files
// (tests left out), its imports read from the compiler's export data.
func engineUses(t *testing.T) []engineUse {
	t.Helper()
	watchSources(t)
	fset := token.NewFileSet()
	names, err := filepath.Glob("../../advisor/*.go")
	if err != nil {
		t.Fatal(err)
	}
	var files []*ast.File
	for _, name := range names {
		if strings.HasSuffix(name, "_test.go") {
			continue
		}
		f, err := parser.ParseFile(fset, name, nil, parser.SkipObjectResolution)
		if err != nil {
			t.Fatal(err)
		}
		files = append(files, f)
	}
	exports := exportData(t)
	conf := types.Config{Importer: importer.ForCompiler(fset, "gc", func(path string) (io.ReadCloser, error) {
		file, ok := exports[path]
		if !ok {
			return nil, fmt.Errorf("no export data for %s", path)
		}
		return os.Open(file)
	})}
	info := &types.Info{Uses: map[*ast.Ident]types.Object{}}
	pkg, err := conf.Check(module+"advisor", fset, files, info)
	if err != nil {
		t.Fatal(err)
	}
	var uses []engineUse
	for id, obj := range info.Uses {
		fn, ok := obj.(*types.Func)
		if !ok || fn.Pkg() != pkg {
			continue
		}
		from, to := filepath.Base(fset.Position(id.Pos()).Filename), filepath.Base(fset.Position(fn.Pos()).Filename)
		if from != to {
			uses = append(uses, engineUse{pos: fset.Position(id.Pos()).String(), from: from, to: to, name: fn.Name()})
		}
	}
	slices.SortFunc(uses, func(a, b engineUse) int { return strings.Compare(a.pos, b.pos) })
	return uses
}

// exportData maps each package advisor imports, directly or not, to the
// file of its export data, as go list -export builds it.
func exportData(t *testing.T) map[string]string {
	t.Helper()
	gobin := filepath.Join(runtime.GOROOT(), "bin", "go")
	cmd := exec.Command(gobin, "list", "-export", "-deps", "-f", "{{.ImportPath}} {{.Export}}", "./advisor")
	cmd.Dir = "../.."
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("go list -export: %v", err)
	}
	exports := map[string]string{}
	sc := bufio.NewScanner(bytes.NewReader(out))
	for sc.Scan() {
		if path, file, ok := strings.Cut(sc.Text(), " "); ok && file != "" {
			exports[path] = file
		}
	}
	return exports
}
