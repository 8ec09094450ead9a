package main

import (
	"bytes"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"testing"
	"time"

	"github.com/migadvisor/migadvisor/advisor/index"
	"github.com/migadvisor/migadvisor/slurm"
)

// BenchmarkSbatchWrapper measures what the wrapper adds to a submission: the
// same stub sbatch run directly and through the sbatch shim and the lean
// binary it runs (`migadvisor-sbatch sbatch`), one after the other, as
// separate processes (so the shell's and the wrapper's start-up count). It
// reports the medians and the median of the differences: with nothing to
// advise from (record only), with a run of the script in the user's advice
// index, and with it in a site's index as large as a 1M-job history
// publishes (advice computed and printed, then the record); and, as the
// floors, a Go program that only runs sbatch as its child
// (testdata/passthrough), and one that only execs it in its own place
// (testdata/execfloor): what no Go wrapper can go below.
func BenchmarkSbatchWrapper(b *testing.B) {
	bin := sbatchBinary(b)
	shim, _ := filepath.Abs("../../scripts/sbatch") // as installed: the shim, then the lean binary
	dir := b.TempDir()
	stub := filepath.Join(dir, "sbatch")
	os.WriteFile(stub, []byte("#!/bin/sh\necho \"Submitted batch job $$\"\n"), 0o755)
	script := filepath.Join(dir, "job.sh")
	os.WriteFile(script, []byte("#!/bin/bash\n#SBATCH -p gpu\n#SBATCH --gres=gpu:a100:1\n#SBATCH --time=5\npython train.py\n"), 0o644)
	for _, name := range []string{"exec-floor", "passthrough-floor", "empty-history", "advice", "advice-site-1M"} {
		b.Run(name, func(b *testing.B) {
			db := filepath.Join(b.TempDir(), "history.db")
			site, bin := "wulver", bin
			switch name {
			case "exec-floor":
				bin = testdataBinary(b, "execfloor")
			case "passthrough-floor":
				bin = testdataBinary(b, "passthrough")
			case "advice":
				historyWithJob2(b, db, script)
			case "advice-site-1M":
				site = siteWithLargeIndex(b, script)
			}
			env := append(os.Environ(), "MIGADVISOR_DB="+db, "MIGADVISOR_SBATCH="+stub, "MIGADVISOR_SITE="+site, "MIGADVISOR_BIN="+bin)
			direct, wrapped, added := make([]float64, 0, b.N), make([]float64, 0, b.N), make([]float64, 0, b.N)
			for range b.N {
				d := timeRun(b, env, stub, script)
				w := timeRun(b, env, shim, script)
				direct, wrapped, added = append(direct, d), append(wrapped, w), append(added, w-d)
			}
			b.ReportMetric(median(direct), "direct-p50-ms")
			b.ReportMetric(median(wrapped), "wrapped-p50-ms")
			b.ReportMetric(median(added), "added-p50-ms")
			b.ReportMetric(0, "ns/op") // the per-op time mixes both runs; the medians say it
		})
	}
}

// siteWithLargeIndex is a site file whose advice index is as large as a
// 1M-job history publishes (BenchmarkPublish1MJobs: 40,000 scripts with GPU
// runs, 181 MiB), the script's entry among them: its run 2 on 1g.10gb.
func siteWithLargeIndex(b *testing.B, script string) string {
	b.Helper()
	dir := b.TempDir()
	db := filepath.Join(dir, "live.db")
	historyWithJob2(b, db, script)
	own, err := index.Open(index.OwnPath(db))
	if err != nil {
		b.Fatal(err)
	}
	s, _ := slurm.ReadScript(script)
	entry, ok, err := own.Get(index.KeyOf("fp", s.Fingerprint()))
	own.Close()
	if err != nil || !ok {
		b.Fatal("no entry of the script", err)
	}
	const scripts, size = 40_000, 181 << 20
	filler := bytes.Repeat([]byte(" "), max(0, size/scripts-len(entry))) // JSON allows the blanks
	entries := map[index.Key][]byte{index.KeyOf("fp", s.Fingerprint()): entry}
	for i := range scripts - 1 {
		entries[index.KeyOf("fp", fmt.Sprint("other", i))] = append(slices.Clone(entry), filler...)
	}
	pub := filepath.Join(dir, "shared")
	os.Mkdir(pub, 0o755)
	if err := index.WriteFile(filepath.Join(pub, index.IndexName), entries); err != nil {
		b.Fatal(err)
	}
	wulver, _ := os.ReadFile("../../catalog/sites/wulver.toml")
	site := filepath.Join(dir, "site.toml")
	os.WriteFile(site, append(wulver, []byte("\n[history]\nsite_db = \""+filepath.Join(pub, index.SnapshotName)+"\"\n")...), 0o644)
	return site
}

// testdataBinary builds testdata/NAME as the wrapper is built (no cgo).
func testdataBinary(b *testing.B, name string) string {
	bin := filepath.Join(b.TempDir(), name)
	cmd := exec.Command("go", "build", "-o", bin, "./testdata/"+name)
	cmd.Env = append(os.Environ(), "CGO_ENABLED=0")
	if out, err := cmd.CombinedOutput(); err != nil {
		b.Fatalf("build testdata/%s: %v\n%s", name, err, out)
	}
	return bin
}

func timeRun(b *testing.B, env []string, name string, args ...string) float64 {
	cmd := exec.Command(name, args...)
	cmd.Env = env
	start := time.Now()
	if out, err := cmd.CombinedOutput(); err != nil {
		b.Fatalf("%s: %v\n%s", name, err, out)
	}
	return float64(time.Since(start).Microseconds()) / 1000
}

func median(xs []float64) float64 {
	s := slices.Clone(xs)
	slices.Sort(s)
	return s[len(s)/2]
}
