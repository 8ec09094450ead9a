package catalog

import (
	"bytes"
	"embed"
	"encoding/csv"
	"fmt"
	"math"
	"path"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"sync"
	"unicode"

	"github.com/migadvisor/migadvisor/internal/lazyre"
	"github.com/migadvisor/migadvisor/slurm"
)

// A reference set is a site's published benchmark tables: measured runs of
// known workloads on each profile. migadvisor uses them as the prior for a
// script it has no history of, and to check its own models.

//go:embed data/reference/wulver
var referenceFS embed.FS

// referenceDirs are the built-in sets, by directory under data/reference.
var referenceDirs = []string{"wulver"}

// ReferenceSet is one site's benchmark tables.
type ReferenceSet struct {
	Site       string      `toml:"site"`
	GPUModel   string      `toml:"gpu_model"`
	Source     string      `toml:"source"`
	Benchmarks []Benchmark `toml:"benchmarks"`
}

// Benchmark is one published table: a workload measured on several profiles.
type Benchmark struct {
	Name      string   `toml:"name"` // the table's name, e.g. gromacs_performance
	File      string   `toml:"file"`
	Title     string   `toml:"title"`
	CPUs      int      `toml:"cpus"`
	Memory    Size     `toml:"memory"`
	WorkUnit  string   `toml:"work_unit"` // what Work counts; "" when the table gives none
	Recognise []string `toml:"recognise"`
	// Output are lines only this workload prints in a job's output (its
	// banner, its libraries' progress, its data set's download): what
	// says what a job is where the history has no script (OutputWorkloads).
	Output []string `toml:"output"`
	Prior  *bool    `toml:"prior"` // false: evidence only, never a prior

	Rows           []BenchmarkRow   `toml:"-"`
	Header         []string         `toml:"-"` // the CSV's columns, as published
	patterns       []*regexp.Regexp `toml:"-"`
	outputPatterns []*regexp.Regexp `toml:"-"`
}

// BenchmarkRow is one profile's measurement. Figures a table does not give
// are < 0.
type BenchmarkRow struct {
	Label        string   // the profile as the table names it
	Profile      string   // the site's profile name
	OOM          bool     // the run ran out of GPU memory
	Seconds      float64  // wall time
	PeakMiB      float64  // GPU memory in use (reserved by the framework)
	AllocatedMiB float64  // GPU memory the framework allocated
	Work         float64  // in the benchmark's WorkUnit
	Cells        []string // the published row
}

// IsPrior reports whether the benchmark may stand in for a script's own runs.
func (b *Benchmark) IsPrior() bool { return b.Prior == nil || *b.Prior }

// Recognises reports whether text (a script, or code it runs) looks like this workload.
func (b *Benchmark) Recognises(text string) bool {
	for _, re := range b.patterns {
		if re.MatchString(text) {
			return true
		}
	}
	return false
}

// OutputWorkloads are the lines of a job's output that mark it as one of
// the set's prior benchmarks, in the set's order: the first benchmark whose
// line an output holds is the one it resembles (slurm.ScanOptions).
func (set *ReferenceSet) OutputWorkloads() *slurm.OutputWorkloads {
	var out []slurm.OutputWorkload
	for i := range set.Benchmarks {
		if b := &set.Benchmarks[i]; b.IsPrior() {
			for _, re := range b.outputPatterns {
				out = append(out, slurm.NewOutputWorkload(b.Name, re))
			}
		}
	}
	return slurm.NewOutputWorkloads(out...)
}

// OutputWorkloads are the output lines of the reference benchmarks
// measured on the site's GPU (ReferenceFor); nil where there are none.
func OutputWorkloads(site *Site) *slurm.OutputWorkloads {
	if set, ok := ReferenceFor(site); ok {
		return set.OutputWorkloads()
	}
	return nil
}

// Row finds the measurement on a profile.
func (b *Benchmark) Row(profile string) (BenchmarkRow, bool) {
	for _, r := range b.Rows {
		if r.Profile == profile {
			return r, true
		}
	}
	return BenchmarkRow{}, false
}

// builtinReferences is read at first use, like builtinModels.
var builtinReferences = sync.OnceValue(mustLoadReferences)

func mustLoadReferences() []*ReferenceSet {
	var sets []*ReferenceSet
	for _, dir := range referenceDirs {
		set, err := loadReferenceSet(dir)
		if err != nil {
			panic(fmt.Sprintf("built-in reference set %s: %v", dir, err))
		}
		sets = append(sets, set)
	}
	return sets
}

// BuiltinReferences are every built-in reference set; each names the
// built-in site it was measured on.
func BuiltinReferences() []*ReferenceSet { return builtinReferences() }

// ReferenceFor returns the built-in reference set measured on the site's GPU
// model, if there is one: its runs only speak for the same hardware.
func ReferenceFor(site *Site) (*ReferenceSet, bool) {
	m, ok := site.Model()
	if !ok {
		return nil, false
	}
	for _, set := range builtinReferences() {
		if rm, ok := LookupModel(set.GPUModel); ok && rm.Name == m.Name {
			return set, true
		}
	}
	return nil, false
}

// Benchmark finds a benchmark by name.
func (set *ReferenceSet) Benchmark(name string) (*Benchmark, bool) {
	for i := range set.Benchmarks {
		if set.Benchmarks[i].Name == name {
			return &set.Benchmarks[i], true
		}
	}
	return nil, false
}

// Recognise returns the first prior benchmark whose patterns match one of texts.
func (set *ReferenceSet) Recognise(texts ...string) (*Benchmark, bool) {
	for i := range set.Benchmarks {
		b := &set.Benchmarks[i]
		if !b.IsPrior() {
			continue
		}
		for _, t := range texts {
			if b.Recognises(t) {
				return b, true
			}
		}
	}
	return nil, false
}

// referenceFile is a reference set's index.toml.
type referenceFile struct {
	Version int `toml:"version"`
	ReferenceSet
}

// referenceIndex is the set's index.toml, decoded at build time where it
// is built in (builtin_gen.go), as the built-in sites are.
func referenceIndex(dir string) (*referenceFile, error) {
	if decoded, ok := generatedReferenceIndexes[dir]; ok {
		return decoded(), nil
	}
	return decodeReferenceIndex(dir)
}

// decodeReferenceIndex decodes the set's index.toml.
func decodeReferenceIndex(dir string) (*referenceFile, error) {
	name := path.Join("data/reference", dir, "index.toml")
	data, err := referenceFS.ReadFile(name)
	if err != nil {
		return nil, err
	}
	file := &referenceFile{}
	if err := decodeStrict(name, data, file); err != nil {
		return nil, err
	}
	return file, nil
}

func loadReferenceSet(dir string) (*ReferenceSet, error) {
	root := path.Join("data/reference", dir)
	file, err := referenceIndex(dir)
	if err != nil {
		return nil, err
	}
	if file.Version != 1 {
		return nil, fmt.Errorf("index.toml: version %d is not supported", file.Version)
	}
	set := &file.ReferenceSet
	site, err := Builtin(set.Site)
	if err != nil {
		return nil, err
	}
	for i := range set.Benchmarks {
		b := &set.Benchmarks[i]
		for _, p := range b.Recognise {
			re, err := regexp.Compile("(?i)" + p)
			if err != nil {
				return nil, fmt.Errorf("benchmark %s: %w", b.Name, err)
			}
			b.patterns = append(b.patterns, re)
		}
		for _, p := range b.Output {
			re, err := regexp.Compile(p) // as printed: no case folding
			if err != nil {
				return nil, fmt.Errorf("benchmark %s: output: %w", b.Name, err)
			}
			b.outputPatterns = append(b.outputPatterns, re)
		}
		data, err := referenceFS.ReadFile(path.Join(root, b.File))
		if err != nil {
			return nil, err
		}
		if err := b.parse(data, site); err != nil {
			return nil, fmt.Errorf("%s: %w", b.File, err)
		}
	}
	return set, nil
}

// Columns of the published tables, by what they hold.
var (
	labelColumns     = []string{"GPU Profile", "MIG Profile"}
	peakColumns      = []string{"Peak Reserved (GB)", "Memory Used (GB)"}
	allocatedColumns = []string{"Peak Allocated (GB)"}
)

// gbToMiB converts the tables' GB (PyTorch's 10⁹ bytes) to MiB.
const gbToMiB = 1e9 / (1 << 20)

func (b *Benchmark) parse(data []byte, site *Site) error {
	r := csv.NewReader(bytes.NewReader(data))
	r.FieldsPerRecord = -1
	recs, err := r.ReadAll()
	if err != nil {
		return err
	}
	if len(recs) < 2 {
		return fmt.Errorf("no rows")
	}
	b.Header = recs[0]
	col := func(names ...string) int {
		for _, n := range names {
			for i, h := range b.Header {
				if strings.TrimPrefix(h, "\ufeff") == n {
					return i
				}
			}
		}
		return -1
	}
	label := col(labelColumns...)
	if label < 0 {
		return fmt.Errorf("no profile column")
	}
	for line, rec := range recs[1:] {
		if len(rec) < len(b.Header) {
			continue // the blank lines some tables end with
		}
		row := BenchmarkRow{Label: rec[label], Seconds: -1, PeakMiB: -1, AllocatedMiB: -1, Work: -1, Cells: rec}
		p, ok := site.ProfileForLabel(rec[label])
		if !ok {
			return fmt.Errorf("line %d: no %s profile for %q", line+2, site.Name, rec[label])
		}
		row.Profile = p.Name
		cell := func(i int, scale float64) float64 {
			if i < 0 {
				return -1
			}
			v, err := strconv.ParseFloat(strings.TrimSpace(rec[i]), 64)
			if err != nil {
				if strings.EqualFold(strings.TrimSpace(rec[i]), "OOM") {
					row.OOM = true
				}
				return -1
			}
			return v * scale
		}
		row.Seconds = math.Max(cell(col("Walltime (s)", "Training Time (s)"), 1), cell(col("Walltime (h)"), 3600))
		row.PeakMiB = cell(col(peakColumns...), gbToMiB)
		row.AllocatedMiB = cell(col(allocatedColumns...), gbToMiB)
		if tokens := cell(col("Tokens Processed"), 1e-6); tokens >= 0 {
			row.Work = tokens
		}
		if nsPerDay := cell(col("Performance (ns/day)"), 1); nsPerDay >= 0 && row.Seconds > 0 {
			row.Work = nsPerDay * row.Seconds / 86400
		}
		b.Rows = append(b.Rows, row)
	}
	return nil
}

var nominalGB = lazyre.New(`(?i)(\d+)\s*g`)

// ProfileForLabel reads the names tables give a profile: its own name,
// alone or in a label ("1g.10gb", "MIG 1g.5gb", "1g.10gb:1"); the whole GPU
// ("full", "whole", "no MIG", "A100:1"); or its nominal memory ("A100_10gb
// MIG", "A100_40GB"), when exactly one profile has it (on an A100-40GB both
// 1g.10gb and 2g.10gb do, and "A100_10gb" names neither).
func (s *Site) ProfileForLabel(label string) (*Profile, bool) {
	l := strings.ToLower(strings.TrimSpace(label))
	words := strings.FieldsFunc(l, func(r rune) bool {
		return !unicode.IsLetter(r) && !unicode.IsDigit(r) && r != '.' && r != '+'
	})
	for _, w := range append([]string{l}, words...) {
		for i := range s.Profiles {
			if strings.EqualFold(s.Profiles[i].Name, w) {
				return &s.Profiles[i], true
			}
		}
	}
	whole := slices.Contains(words, "full") || slices.Contains(words, "whole") || slices.Contains(words, "nomig") ||
		strings.Contains(l, "no mig") || strings.Contains(l, "non-mig") || strings.Contains(l, "non mig") ||
		strings.HasSuffix(l, ":1") && !strings.Contains(l, "g")
	var found []*Profile
	for i := range s.Profiles {
		if p := &s.Profiles[i]; whole && !p.IsMIG() {
			return p, true
		}
	}
	if m := nominalGB.FindAllStringSubmatch(l, -1); len(m) > 0 && !whole {
		gb, _ := strconv.ParseFloat(m[len(m)-1][1], 64)
		for i := range s.Profiles {
			if p := &s.Profiles[i]; math.Abs(p.BilledMemory.GiB()-gb) < 0.5 {
				found = append(found, p)
			}
		}
	}
	if len(found) != 1 {
		return nil, false
	}
	return found[0], true
}
