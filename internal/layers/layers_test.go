package layers

import (
	"bufio"
	"bytes"
	"encoding/json"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"slices"
	"strings"
	"testing"
)

const module = "github.com/migadvisor/migadvisor/"

// rank orders the packages: a package may import only packages of a lower
// rank. Within a layer, the subpackages the engine stands on come before
// it, and those that use it after.
var rank = map[string]float64{
	"slurm":                            0,
	"slurm/sacctgen":                   0.5,
	"slurm/slurmtest":                  0.5,
	"catalog":                          1,
	"catalog/catalogtest":              1.5,
	"advisor/base/history":             2,
	"advisor/base/history/historytest": 2.1,
	"advisor/base/history/mariadb":     2.2,
	"advisor/base/runmodel":            2.5,
	"advisor/base/memory":              2.6,
	"advisor/base/outcome":             2.65, // how a job ended; uses memory's low-risk share
	"advisor/base/lint":                2.7,
	"advisor/base/session":             2.8,  // interactive sessions, keyed by user and job name
	"advisor/base/replay":              2.9,  // a queue replayed on a layout of slices as Slurm's backfill starts it; the standard library alone
	"advisor/base/replay/fidelity":     2.95, // a history's queue replayed and its waits set against the recorded ones
	"advisor":                          3,
	"advisor/app/joblist":              3.2, // a job as history lists it, with the engine's price
	"advisor/app/index":                3.5,
	"advisor/app/savings":              3.7,
	"advisor/app/plan":                 3.8, // the site's MIG layout from its demand: savings' judgement, replayed on candidate layouts
	"advisor/app/collect":              4,
	"advisor/app/wrapper":              4,
	"advisor/app/report":               4,
	"advisor/app/accuracy":             4,
	"advisor/app/sitereplay":           4, // a month with known truth; the report and the rules scored on it
	"advisor/app/doctor":               4, // a site's setup checked: the site file, what publish wrote, notices, what a submission goes through
	"bench/gpu":                        5,
	"bench/workloads":                  5,
	"bench/monitor":                    5.5,
	"bench/emulate":                    5,
	"bench":                            6,
	"cmd/migadvisor":                   7,
	"cmd/migadvisor-monitor":           7,
	"cmd/migadvisor-sbatch":            7,
}

// testHelpers serve tests alone, each from beneath the package it stands
// on: that package's external tests may import it (slurm's read sacctgen's
// dumps), as Go allows, and no code but a test or another helper does.
var testHelpers = map[string]bool{
	"slurm/sacctgen":                   true,
	"slurm/slurmtest":                  true,
	"catalog/catalogtest":              true,
	"advisor/base/history/historytest": true,
}

// internal packages serve every layer, so they import none of the layers,
// only each other; the test helpers that need one sit beneath it
// (slurm/sacctgen, catalog/catalogtest).
const internalMaxRank = -1

type pkg struct {
	ImportPath                         string
	Imports, TestImports, XTestImports []string
}

func goList(t *testing.T, args ...string) []pkg {
	t.Helper()
	watchSources(t)
	gobin := filepath.Join(runtime.GOROOT(), "bin", "go")
	cmd := exec.Command(gobin, append([]string{"list", "-json=ImportPath,Imports,TestImports,XTestImports"}, args...)...)
	cmd.Dir = "../.."
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("go list %v: %v", args, err)
	}
	var pkgs []pkg
	dec := json.NewDecoder(bytes.NewReader(out))
	for dec.More() {
		var p pkg
		if err := dec.Decode(&p); err != nil {
			t.Fatal(err)
		}
		pkgs = append(pkgs, p)
	}
	return pkgs
}

// watchSources stats every Go file of the module, so that go test's cache,
// which cannot see into the go list it runs, reruns this test when an
// import changes.
func watchSources(t *testing.T) {
	t.Helper()
	err := filepath.WalkDir("../..", func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() && (d.Name() == "testdata" || strings.HasPrefix(d.Name(), ".") && path != "../..") {
			return filepath.SkipDir
		}
		if strings.HasSuffix(path, ".go") || d.Name() == "go.mod" {
			_, err = os.Stat(path)
		}
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
}

func rankOf(t *testing.T, path string) (float64, bool) {
	rel := strings.TrimPrefix(path, module)
	if strings.HasPrefix(rel, "internal/") {
		return -1, true
	}
	r, ok := rank[rel]
	if !ok {
		t.Errorf("%s has no place in the layers: add it to rank in internal/layers and to docs/ARCHITECTURE.md", rel)
	}
	return r, ok
}

func TestNoImportRunsUpTheLayers(t *testing.T) {
	for _, tags := range []string{"", "slurm", "noreport", "gpu"} {
		for _, p := range goList(t, "-tags", tags, "./...") {
			from, ok := rankOf(t, p.ImportPath)
			if !ok {
				continue
			}
			// Tests stand where their package does: a test that needs a
			// layer above it belongs up there.
			for _, imp := range slices.Concat(p.Imports, p.TestImports, p.XTestImports) {
				if !strings.HasPrefix(imp, module) || imp == p.ImportPath { // an external test imports its package
					continue
				}
				to, ok := rankOf(t, imp)
				if !ok {
					continue
				}
				switch {
				case from < 0 && to > internalMaxRank:
					t.Errorf("%s imports %s: internal packages stand on no layer", p.ImportPath, imp)
				case testHelpers[strings.TrimPrefix(imp, module)] && strings.HasPrefix(imp, p.ImportPath+"/") && slices.Contains(p.XTestImports, imp):
					// the package's external tests use the helper beneath it
				case from >= 0 && to >= 0 && to >= from:
					t.Errorf("%s imports %s, which is not below it (tags %q)", p.ImportPath, imp, tags)
				}
			}
			for _, imp := range p.Imports {
				if testHelpers[strings.TrimPrefix(imp, module)] && !testHelpers[strings.TrimPrefix(p.ImportPath, module)] {
					t.Errorf("%s imports %s, a helper for tests alone", p.ImportPath, imp)
				}
			}
		}
	}
}

// The wrapper binary runs on every submission: it must not load NVML,
// plotting or the monitor (make build's bin/migadvisor-sbatch).
func TestWrapperBinaryStaysLean(t *testing.T) {
	watchSources(t)
	gobin := filepath.Join(runtime.GOROOT(), "bin", "go")
	cmd := exec.Command(gobin, "list", "-deps", "-tags", "noreport", "./cmd/migadvisor")
	cmd.Dir = "../.."
	out, err := cmd.Output()
	if err != nil {
		t.Fatal(err)
	}
	var heavy []string
	sc := bufio.NewScanner(bytes.NewReader(out))
	for sc.Scan() {
		dep := sc.Text()
		if strings.Contains(dep, "go-nvml") || strings.HasPrefix(dep, "gonum.org/") || dep == module+"advisor/app/report" || dep == module+"bench/monitor" {
			heavy = append(heavy, dep)
		}
	}
	if len(heavy) > 0 {
		slices.Sort(heavy)
		t.Errorf("the wrapper binary (-tags noreport) links %s", strings.Join(heavy, ", "))
	}
}

// A path says its layer (issue 43): what the engine stands on sits under
// advisor/base, what uses it under advisor/app, the engine at advisor.
func TestAPathSaysItsLayer(t *testing.T) {
	engine := rank["advisor"]
	for path, r := range rank {
		switch {
		case strings.HasPrefix(path, "advisor/base/") && r >= engine:
			t.Errorf("%s sits under advisor/base but ranks %v, not beneath the engine (%v)", path, r, engine)
		case strings.HasPrefix(path, "advisor/app/") && r <= engine:
			t.Errorf("%s sits under advisor/app but ranks %v, not above the engine (%v)", path, r, engine)
		case strings.HasPrefix(path, "advisor/") && !strings.HasPrefix(path, "advisor/base/") && !strings.HasPrefix(path, "advisor/app/"):
			t.Errorf("%s: a package of advisor sits under advisor/base (beneath the engine) or advisor/app (using it)", path)
		}
	}
}
