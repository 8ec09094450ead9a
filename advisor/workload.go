package advisor

import (
	"io"
	"os"
	"path/filepath"

	"github.com/migadvisor/migadvisor/advisor/base/history"
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

// A site's history holds the output of most jobs and the script of few:
// where the script is not known, or says nothing of what it runs, the
// jobs' output may (collect keeps the reference benchmark each output
// resembles: history.JobRecord.OutputResembles), and stands where the
// script's recognised workload would, for the runtime prior (Job.Resembles).

// outputWorkloads are the reference benchmarks job records' outputs
// resemble, by cluster and job id (each job once, whichever history has it).
type outputWorkloads map[string]string

// add notes the benchmark a record's output resembles, if any.
func (o outputWorkloads) add(r *history.JobRecord) {
	if o != nil && r.OutputResembles != "" {
		o[r.Cluster+"/"+r.JobID] = r.OutputResembles
	}
}

// resembled is the site's reference benchmark the most of the outputs
// resemble (of equally many, the first in the set, as RecogniseWorkload
// takes the first that matches); nil for none. An output that resembles
// nothing says nothing: it may not have been found, or not say it.
func (o outputWorkloads) resembled(site *catalog.Site) *catalog.Benchmark {
	if site == nil || len(o) == 0 {
		return nil
	}
	set, ok := catalog.ReferenceFor(site)
	if !ok {
		return nil
	}
	count := map[string]int{}
	for _, name := range o {
		count[name]++
	}
	var best *catalog.Benchmark
	for i := range set.Benchmarks {
		if b := &set.Benchmarks[i]; b.IsPrior() && count[b.Name] > 0 && (best == nil || count[b.Name] > count[best.Name]) {
			best = b
		}
	}
	return best
}

// ResemblesOf is the site's reference benchmark a job looks like
// (Job.Resembles), for a caller that holds its script (nil: none known)
// and its jobs' records, as the report does: the one the script runs
// (RecogniseWorkload), else the one the most of the jobs' outputs show
// (OutputResembles); nil for none.
func ResemblesOf(site *catalog.Site, script *slurm.Script, recs ...*history.JobRecord) *catalog.Benchmark {
	if site == nil {
		return nil
	}
	if set, ok := catalog.ReferenceFor(site); ok && script != nil {
		if b, ok := RecogniseWorkload(set, script); ok {
			return b
		}
	}
	return OutputResembles(site, recs...)
}

// OutputResembles is the site's reference benchmark the most of the jobs'
// outputs resemble, nil for none: the workload of jobs whose script is not
// known (Job.Resembles), as the report's groups of jobs by name are.
func OutputResembles(site *catalog.Site, recs ...*history.JobRecord) *catalog.Benchmark {
	o := outputWorkloads{}
	for _, r := range recs {
		o.add(r)
	}
	return o.resembled(site)
}
