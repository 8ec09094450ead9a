package advisor

import (
	"io"
	"os"
	"path/filepath"

	"github.com/migadvisor/migadvisor/catalog"
	"github.com/migadvisor/migadvisor/internal/lazyre"
	"github.com/migadvisor/migadvisor/slurm"
)

// Limits on what RecogniseWorkload reads besides the script: it runs on login
// nodes, where a slow or huge file must not hold the user up.
const (
	maxCodeFiles = 8
	maxCodeBytes = 1 << 20
)

// pythonFile finds the Python (or shell) files a script runs: "python
// train.py", "srun python3 -u src/finetune.py", "bash run.sh".
var pythonFile = lazyre.New(`(?:^|[\s'"=])([\w./~-]+\.(?:py|sh))\b`)

// RecogniseWorkload finds the reference benchmark a script looks like, from
// its own text and the code files it names (relative to the script's
// directory, or absolute), each read up to 1 MiB.
func RecogniseWorkload(set *catalog.ReferenceSet, s *slurm.Script) (*catalog.Benchmark, bool) {
	texts := []string{string(s.Data)}
	dir := filepath.Dir(s.Path)
	seen := map[string]bool{}
	for _, m := range pythonFile.FindAllStringSubmatch(string(s.Data), -1) {
		if len(seen) == maxCodeFiles {
			break
		}
		name := m[1]
		if !filepath.IsAbs(name) {
			name = filepath.Join(dir, name)
		}
		if seen[name] || filepath.Clean(name) == filepath.Clean(s.Path) {
			continue
		}
		seen[name] = true
		if text, ok := readHead(name); ok {
			texts = append(texts, text)
		}
	}
	return set.Recognise(texts...)
}

func readHead(name string) (string, bool) {
	f, err := os.Open(name)
	if err != nil {
		return "", false
	}
	defer f.Close()
	if st, err := f.Stat(); err != nil || !st.Mode().IsRegular() {
		return "", false
	}
	b, err := io.ReadAll(io.LimitReader(f, maxCodeBytes))
	return string(b), err == nil
}
