//go:build slurm

package main

import (
	"bytes"
	"fmt"
	"io"
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
// same stub sbatch run directly and through the sbatch shim, one after the
// other, as separate processes, timed until the process exits (the prompt
// is back: added-p50-ms) and until the wrapper beside sbatch has printed
// its advice and spooled its record (advice-done-p50-ms). With nothing to
// advise from (record only), with a run of the script in the user's advice
// index, and with it in a site's index as large as a 1M-job history
// publishes; then that last with the advice applied, where the shim runs
// the wrapper in its place (it advises, runs sbatch as its child and records
// the id it prints). As the floors of that path, a Go program that only runs
// sbatch as its child (testdata/passthrough), and one that only execs it in
// its own place (testdata/execfloor). Its stub sbatch is a shell script, as
// light on the CPU as Slurm's own, hence the slurm build tag, the one tier
// with stand-ins: a Go fake (testdata/fakesbatch) would start a runtime
// beside the wrapper's and add that to the figures.
func BenchmarkSbatchWrapper(b *testing.B) {
	bin := sbatchBinary(b)
	shim, _ := filepath.Abs("../../scripts/sbatch") // as installed: the shim, then the lean binary
	dir := b.TempDir()
	stub := filepath.Join(dir, "sbatch")
	os.WriteFile(stub, []byte("#!/bin/sh\necho \"Submitted batch job $$\"\n"), 0o755)
	script := filepath.Join(dir, "job.sh")
	os.WriteFile(script, []byte("#!/bin/bash\n#SBATCH -p gpu\n#SBATCH --gres=gpu:a100:1\n#SBATCH --time=5\npython train.py\n"), 0o644)
	for _, name := range []string{"exec-floor", "passthrough-floor", "empty-history", "advice", "advice-site-1M", "advice-site-1M-applied"} {
		b.Run(name, func(b *testing.B) {
			db := filepath.Join(b.TempDir(), "history.db")
			site, bin, apply := "wulver", bin, "0"
			switch name {
			case "exec-floor":
				bin, apply = testdataBinary(b, "execfloor"), "1" // in the wrapper's place, as applying the advice runs it
			case "passthrough-floor":
				bin, apply = testdataBinary(b, "passthrough"), "1"
			case "advice":
				historyWithJob2(b, db, script)
			case "advice-site-1M":
				site = siteWithLargeIndex(b, script)
			case "advice-site-1M-applied":
				site, apply = siteWithLargeIndex(b, script), "1"
			}
			env := append(os.Environ(), "MIGADVISOR_DB="+db, "MIGADVISOR_SBATCH="+stub, "MIGADVISOR_SITE="+site, "MIGADVISOR_BIN="+bin,
				"MIGADVISOR_APPLY="+apply)
			direct, wrapped, added, advised := make([]float64, 0, b.N), make([]float64, 0, b.N), make([]float64, 0, b.N), make([]float64, 0, b.N)
			for range b.N {
				d, _ := timeRun(b, env, stub, script)
				w, all := timeRun(b, env, shim, script)
				direct, wrapped, added, advised = append(direct, d), append(wrapped, w), append(added, w-d), append(advised, all-d)
			}
			b.ReportMetric(median(direct), "direct-p50-ms")
			b.ReportMetric(median(wrapped), "wrapped-p50-ms")
			b.ReportMetric(median(added), "added-p50-ms")
			b.ReportMetric(median(advised), "advice-done-p50-ms")
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

// testdataBinary builds testdata/NAME into a directory of its own.
func testdataBinary(b *testing.B, name string) string {
	bin := filepath.Join(b.TempDir(), name)
	buildTestdata(b, name, bin)
	return bin
}

// timeRun runs a command as a terminal would: until it exits (sbatch has
// answered and the shell's prompt is back), in ms; and until the last
// writer of its stderr is done with it (the wrapper beside sbatch has
// printed its advice and written its record), which does not hold up the
// submission but must not overlap the next run's.
func timeRun(b *testing.B, env []string, name string, args ...string) (exited, done float64) {
	r, w, err := os.Pipe()
	if err != nil {
		b.Fatal(err)
	}
	defer r.Close()
	out, err := os.CreateTemp(b.TempDir(), "out")
	if err != nil {
		b.Fatal(err)
	}
	defer out.Close()
	cmd := exec.Command(name, args...)
	cmd.Env = env
	cmd.Stdout, cmd.Stderr = out, w // files: Wait returns when the process exits
	start := time.Now()
	err = cmd.Run()
	exited = float64(time.Since(start).Microseconds()) / 1000
	w.Close()
	errOut, _ := io.ReadAll(r)
	done = float64(time.Since(start).Microseconds()) / 1000
	if err != nil {
		stdout, _ := os.ReadFile(out.Name())
		b.Fatalf("%s: %v\n%s%s", name, err, stdout, errOut)
	}
	return exited, done
}

func median(xs []float64) float64 {
	s := slices.Clone(xs)
	slices.Sort(s)
	return s[len(s)/2]
}
