package slurm

import (
	"bytes"

	"github.com/migadvisor/migadvisor/internal/lazyre"
)

// Software a job's output shows it ran, beyond its MIGADVISOR_VERSION
// lines: what holds a job's GPU memory decides what a peak of it proves
// (a caching or preallocating framework's peak is no need), so collect keeps
// what the output says of it. The names are those the MIGADVISOR_VERSION
// lines use; the version is "" where the line gives none.
const (
	SoftwarePyTorch    = "torch"
	SoftwareJAX        = "jax"
	SoftwareTensorFlow = "tensorflow"
	SoftwareGROMACS    = "gromacs"
)

// softwareMark is a line only one piece of software prints: its log
// prefix, a traceback through its package, its banner.
type softwareMark struct {
	name  string
	gate  []byte // cheap test before the expression
	re    *lazyre.Regexp
	group int // the version's group in re; 0: none
}

var softwareMarks = []softwareMark{
	// Tracebacks and warnings through the package, PyTorch's own errors.
	{SoftwarePyTorch, []byte("torch"), lazyre.New(`[/\\]site-packages[/\\]torch[/\\]|\btorch\.(?:OutOfMemoryError|cuda\.OutOfMemoryError|distributed\.)|\bCUDACachingAllocator\b`), 0},
	// PyTorch Lightning's banner: the trainer runs on PyTorch.
	{SoftwarePyTorch, []byte("GPU available:"), lazyre.New(`^GPU available: True \(cuda\), used: True`), 0},
	{SoftwareJAX, []byte("jax"), lazyre.New(`[/\\]site-packages[/\\]jax(?:lib)?[/\\]|\bjaxlib\.xla_extension\.XlaRuntimeError\b|\bjax\._src\.`), 0},
	// TensorFlow's log lines ("I tensorflow/core/...", "W external/local_xla/...")
	// and the one that says how much of the device it mapped.
	{SoftwareTensorFlow, []byte("tensorflow"), lazyre.New(`\b[IWEF] tensorflow/|[/\\]site-packages[/\\]tensorflow[/\\]|Created device /job:\S+ with \d+ MB memory`), 0},
	{SoftwareTensorFlow, []byte("Created device"), lazyre.New(`Created device /job:\S+ with \d+ MB memory`), 0},
	// GROMACS's banner: ":-) GROMACS - gmx mdrun, 2023.3 (-:".
	{SoftwareGROMACS, []byte("GROMACS"), lazyre.New(`GROMACS - gmx\S* \S+, (\S+) \(-:|^GROMACS version:\s+(\S+)`), 1},
}

// software notes the software a line shows, keeping a version the job
// printed itself (MIGADVISOR_VERSION) over none.
func (s *scanner) software(b []byte) {
	for _, m := range softwareMarks {
		if !bytes.Contains(b, m.gate) {
			continue
		}
		if _, seen := s.ev.Versions[m.name]; seen {
			continue
		}
		sub := m.re.Get().FindSubmatch(b)
		if sub == nil {
			continue
		}
		version := ""
		for _, g := range sub[1:] {
			if m.group > 0 && len(g) > 0 {
				version = string(g)
				break
			}
		}
		s.setVersion(m.name, version)
	}
}

// setVersion records a piece of software and its version ("" unknown):
// a version replaces none, and the names kept stay bounded.
func (s *scanner) setVersion(name, version string) {
	ev := s.ev
	if ev.Versions == nil {
		ev.Versions = map[string]string{}
	}
	old, ok := ev.Versions[name]
	switch {
	case ok && version == "" && old != "":
	case ok || len(ev.Versions) < maxVersions:
		ev.Versions[name] = version
	}
}

// reErrorLine is a line that reads as an error: a Python exception
// ("ModuleNotFoundError: No module named 'x'"), a program's or Slurm's
// "error:" ("srun: error: ...", "error: ..."), and anywhere in a line a
// crash as the shell reports it ("line 8: 1234 Segmentation fault").
var reErrorLine = lazyre.New(`^\s*(?:[A-Za-z_][\w.]*(?:Error|Exception)(?::|$)|(?:\S+: )?(?:error|ERROR|Error|FATAL|Fatal error)\b\s*[:!])|Segmentation fault|Bus error|Aborted \(core dumped\)`)

// errorGates are cheap tests before reErrorLine: a line that holds none of
// them is no error line.
var errorGates = [][]byte{[]byte("rror"), []byte("xception"), []byte("FATAL"), []byte("fault"), []byte("Aborted")}

// firstError notes the line when it is the output's first error line.
func (s *scanner) firstError(b []byte, n int) {
	hit := false
	for _, g := range errorGates {
		if bytes.Contains(b, g) {
			hit = true
			break
		}
	}
	if !hit || !reErrorLine.Get().Match(b) {
		return
	}
	s.ev.FirstError = &ErrorLine{Line: n, Text: shorten(string(bytes.TrimSpace(b)))}
}
