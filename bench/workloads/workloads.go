// Package workloads holds migadvisor's reference workloads: published site
// benchmarks (the Wulver suite) as job templates and the programs they run,
// embedded in the binary so that 'migadvisor benchmark' can write and
// submit them anywhere.
package workloads

import (
	"bytes"
	"embed"
	"fmt"
	"os"
	"path"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"text/template"

	"github.com/BurntSushi/toml"

	"github.com/migadvisor/migadvisor/internal/atomicfile"
	"github.com/migadvisor/migadvisor/internal/jobdir"
	"github.com/migadvisor/migadvisor/slurm"
)

//go:embed wulver.toml jobs files
var suiteFS embed.FS

// suiteFiles are the built-in suites, by file.
var suiteFiles = []string{"wulver.toml"}

// DefaultSuite is the suite 'benchmark run' sweeps when none is named.
const DefaultSuite = "wulver"

// Suite is a set of workloads that a site publishes results for.
type Suite struct {
	Name      string     `toml:"name"`
	Title     string     `toml:"title"`
	Source    string     `toml:"source"`
	Workloads []Workload `toml:"workloads"`
}

// Workload is one benchmark: a job template and the files it runs.
type Workload struct {
	Name        string   `toml:"name" json:"name"` // the site's table name, and the jobs' workload tag
	Title       string   `toml:"title" json:"title"`
	Description string   `toml:"description" json:"description"`
	Job         string   `toml:"job" json:"job"`     // the job template, under the suite's directory
	Files       []string `toml:"files" json:"files"` // programs the job runs, copied beside it
	Runs        string   `toml:"runs" json:"runs"`   // "python" or "gmx": which interpreter flag applies
	Table       string   `toml:"table" json:"table"` // the docs table layout (advisor/app/report)
	Needs       string   `toml:"needs" json:"needs"` // the software environment, for users
	Quick       []string `toml:"quick" json:"quick"` // arguments for a short run that checks the setup
}

var builtinSuites = sync.OnceValue(func() []*Suite {
	var out []*Suite
	for _, f := range suiteFiles {
		s, err := loadSuite(f)
		if err != nil {
			panic(fmt.Sprintf("built-in suite %s: %v", f, err))
		}
		out = append(out, s)
	}
	return out
})

func loadSuite(file string) (*Suite, error) {
	data, err := suiteFS.ReadFile(file)
	if err != nil {
		return nil, err
	}
	var doc struct {
		Version int `toml:"version"`
		Suite
	}
	md, err := toml.Decode(string(data), &doc)
	if err != nil {
		return nil, err
	}
	if keys := md.Undecoded(); len(keys) > 0 {
		return nil, fmt.Errorf("unknown key %s", keys[0])
	}
	if doc.Version != 1 {
		return nil, fmt.Errorf("version %d is not supported", doc.Version)
	}
	for _, w := range doc.Workloads {
		for _, f := range append([]string{w.Job}, w.Files...) {
			if _, err := suiteFS.Open(f); err != nil {
				return nil, fmt.Errorf("workload %s: %w", w.Name, err)
			}
		}
		if _, err := template.New(w.Job).ParseFS(suiteFS, w.Job); err != nil {
			return nil, fmt.Errorf("workload %s: %w", w.Name, err)
		}
	}
	return &doc.Suite, nil
}

// LookupSuite finds a built-in suite by name.
func LookupSuite(name string) (*Suite, error) {
	var names []string
	for _, s := range builtinSuites() {
		if s.Name == name {
			return s, nil
		}
		names = append(names, s.Name)
	}
	return nil, fmt.Errorf("no suite %q (built in: %s)", name, strings.Join(names, ", "))
}

// Select picks workloads of the suite by name, in the suite's order; no
// names picks them all.
func (s *Suite) Select(names []string) ([]*Workload, error) {
	var out []*Workload
	for i := range s.Workloads {
		if len(names) == 0 || slices.Contains(names, s.Workloads[i].Name) {
			out = append(out, &s.Workloads[i])
		}
	}
	for _, n := range names {
		if _, ok := s.Workload(n); !ok {
			return nil, fmt.Errorf("suite %s has no workload %q (%s)", s.Name, n, strings.Join(s.names(), ", "))
		}
	}
	return out, nil
}

// Workload finds a workload of the suite.
func (s *Suite) Workload(name string) (*Workload, bool) {
	for i := range s.Workloads {
		if s.Workloads[i].Name == name {
			return &s.Workloads[i], true
		}
	}
	return nil, false
}

func (s *Suite) names() []string {
	var out []string
	for _, w := range s.Workloads {
		out = append(out, w.Name)
	}
	return out
}

// Find looks a workload tag up in every built-in suite. A tag may carry a
// variant after '@' (pytorch_mnist_simplecnn@synthetic): the workload is the
// part before it.
func Find(tag string) (*Workload, bool) {
	name := BaseName(tag)
	for _, s := range builtinSuites() {
		if w, ok := s.Workload(name); ok {
			return w, true
		}
	}
	return nil, false
}

// BaseName is a workload tag without its variant.
func BaseName(tag string) string {
	name, _, _ := strings.Cut(tag, "@")
	return name
}

// TitleFor is w's title for the runs of one of its tags: a variant's
// says which, "MNIST SimpleCNN (synthetic, quick)", so that its page is
// never taken for the real measurement's.
func (w *Workload) TitleFor(tag string) string {
	_, variant, ok := strings.Cut(tag, "@")
	if !ok || BaseName(tag) != w.Name {
		return w.Title
	}
	return w.Title + " (" + strings.ReplaceAll(variant, "@", ", ") + ")"
}

// DescriptionFor is w's description for runs of the tag: a variant's
// runs did not do what the description says, so it says how they differ.
func (w *Workload) DescriptionFor(tag string) string {
	_, variants, _ := strings.Cut(tag, "@")
	d := w.Description
	for _, v := range strings.Split(variants, "@") {
		switch v {
		case "synthetic":
			d += " These runs used random data of the same shape (--synthetic): their times stand, their accuracy does not."
		case "quick":
			d += " These runs were short (--quick: fewer epochs and samples, to check the setup): their times are not the whole workload's."
		}
	}
	return d
}

// Tag is the workload tag for runs of w with some options: runs on random
// data, or short ones, are not the same measurement as the real workload
// and must not be averaged with it.
func (w *Workload) Tag(opt RenderOptions) string {
	tag := w.Name
	if opt.Synthetic {
		tag += "@synthetic"
	}
	if opt.Quick {
		tag += "@quick"
	}
	return tag
}

// RenderOptions say how a workload's job script is written.
type RenderOptions struct {
	Dir        string // directory for the job script and its files (made absolute)
	GPURequest string // the sbatch option for the GPU, e.g. --gres=gpu:a100:1
	Setup      string // shell lines that set up the environment (module load, conda activate)
	Python     string // the Python interpreter; default python3
	GMX        string // the gmx binary; default: found on PATH by the script
	Data       string // where datasets and caches go; default Dir/../data
	Synthetic  bool   // random data of the real shapes, no download
	Quick      bool   // a short run that checks the setup
}

// Marker is in every file Render writes; Render replaces only files that
// carry it, never a user's own.
const Marker = "reference workload"

// Render writes the workload's job script and files into opt.Dir and
// returns the job script's path.
func (w *Workload) Render(opt RenderOptions) (string, error) {
	dir, err := filepath.Abs(opt.Dir)
	if err != nil {
		return "", err
	}
	if opt.Data == "" {
		opt.Data = filepath.Join(filepath.Dir(dir), "data")
	}
	data, err := filepath.Abs(opt.Data)
	if err != nil {
		return "", err
	}
	job, err := w.renderJob(dir, data, opt)
	if err != nil {
		return "", err
	}
	if err := jobdir.Make(dir); err != nil {
		return "", fmt.Errorf("workload %s: %w", w.Name, err)
	}
	jobPath := filepath.Join(dir, w.Name+".sh")
	if err := writeOwn(jobPath, job, 0o755); err != nil {
		return "", err
	}
	for _, f := range w.Files {
		b, err := suiteFS.ReadFile(f)
		if err != nil {
			return "", err
		}
		if err := writeOwn(filepath.Join(dir, path.Base(f)), b, 0o755); err != nil {
			return "", err
		}
	}
	return jobPath, nil
}

func (w *Workload) renderJob(dir, data string, opt RenderOptions) ([]byte, error) {
	if opt.GPURequest == "" || !strings.HasPrefix(opt.GPURequest, "-") {
		return nil, fmt.Errorf("workload %s: no sbatch option for the GPU", w.Name)
	}
	python := opt.Python
	if python == "" {
		python = "python3"
	}
	var setup strings.Builder
	if s := strings.TrimSpace(opt.Setup); s != "" {
		setup.WriteString("\n" + s)
	}
	if opt.GMX != "" && w.Runs == "gmx" {
		setup.WriteString("\nexport GMX=" + slurm.ShellQuote(opt.GMX))
	}
	var args strings.Builder
	if opt.Synthetic {
		args.WriteString(" --synthetic")
	}
	if opt.Quick {
		for _, a := range w.Quick {
			args.WriteString(" " + slurm.ShellWord(a))
		}
	}
	t, err := template.New(path.Base(w.Job)).Option("missingkey=error").ParseFS(suiteFS, w.Job)
	if err != nil {
		return nil, err
	}
	var b bytes.Buffer
	err = t.Execute(&b, map[string]string{
		"Dir": slurm.QuoteValue(dir), "Data": slurm.ShellWord(data), "Python": slurm.ShellWord(python),
		"Setup": setup.String(), "Args": args.String(), "GPURequest": opt.GPURequest,
	})
	return b.Bytes(), err
}

// writeOwn writes a file unless a different one that Render did not write is
// already there.
func writeOwn(file string, data []byte, mode os.FileMode) error {
	old, err := os.ReadFile(file)
	switch {
	case err == nil && bytes.Equal(old, data):
		return nil
	case err == nil && !bytes.Contains(old, []byte(Marker)):
		return fmt.Errorf("%s exists and is not a migadvisor workload file; choose another directory", file)
	case err != nil && !os.IsNotExist(err):
		return err
	}
	return atomicfile.Write(file, data, mode)
}
