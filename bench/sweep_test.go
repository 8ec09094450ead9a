package bench

import (
	"context"
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/migadvisor/migadvisor/catalog/catalogtest"

	"github.com/migadvisor/migadvisor/catalog"
	"github.com/migadvisor/migadvisor/slurm"
)

// writeScript puts a script in a temp dir and parses it.
func writeScript(t *testing.T, name, text string) *slurm.Script {
	t.Helper()
	path := filepath.Join(t.TempDir(), name)
	if err := os.WriteFile(path, []byte(text), 0o644); err != nil {
		t.Fatal(err)
	}
	s, err := slurm.ReadScript(path)
	if err != nil {
		t.Fatal(err)
	}
	return s
}

const debugScript = `#!/bin/bash
#SBATCH --job-name=train
#SBATCH --partition=debug_gpu
#SBATCH --qos=debug
#SBATCH --gres=gpu:a100_10g:1,lscratch:10   # scratch stays
#SBATCH --time=2:00:00

python train.py
`

func TestWriteSweep(t *testing.T) {
	site := catalogtest.Wulver(t)
	script := writeScript(t, "train.sh", debugScript)
	out := filepath.Join(t.TempDir(), "sweep")
	sw, err := WriteSweep(SweepOptions{Script: script, Site: site, OutDir: out})
	if err != nil {
		t.Fatal(err)
	}
	if got := strings.Join(sw.Profiles, " "); got != "1g.10gb 2g.20gb 3g.40gb full" {
		t.Errorf("profiles %s", got)
	}
	for _, name := range sw.Profiles {
		file := filepath.Join(out, name+".sh")
		info, err := os.Stat(file)
		if err != nil {
			t.Fatal(err)
		}
		if info.Mode().Perm()&0o111 == 0 || info.Mode().Perm()&0o002 != 0 {
			t.Errorf("%s mode %v: want executable, not world-writable", file, info.Mode())
		}
		v, err := slurm.ReadScript(file)
		if err != nil {
			t.Fatal(err)
		}
		p, _ := site.Profile(name)
		r := v.Resources
		if len(r.GPUs) != 1 || r.GPUs[0].Type != p.GRESType || r.JobName != "train-"+name || v.Fingerprint() != script.Fingerprint() {
			t.Errorf("%s: GPUs %+v, job name %q", name, r.GPUs, r.JobName)
		}
		if !strings.Contains(string(v.Data), "lscratch:10   # scratch stays") || !strings.HasSuffix(string(v.Data), "\npython train.py\n") {
			t.Errorf("%s lost bytes of the original:\n%s", name, v.Data)
		}
	}
	// The full GPU is not offered in debug_gpu: the variant moves to gpu, and
	// the debug QoS, which gpu does not take, becomes standard.
	full, _ := slurm.ReadScript(filepath.Join(out, "full.sh"))
	if full.Resources.Partition != "gpu" || full.Resources.QoS != "standard" {
		t.Errorf("full: partition %q qos %q", full.Resources.Partition, full.Resources.QoS)
	}
	small, _ := slurm.ReadScript(filepath.Join(out, "1g.10gb.sh"))
	if small.Resources.Partition != "debug_gpu" || small.Resources.QoS != "debug" {
		t.Errorf("1g.10gb: partition %q qos %q changed without need", small.Resources.Partition, small.Resources.QoS)
	}
	// sweep.json
	data, err := os.ReadFile(filepath.Join(out, SweepFileName))
	if err != nil {
		t.Fatal(err)
	}
	var rec Sweep
	if err := json.Unmarshal(data, &rec); err != nil {
		t.Fatal(err)
	}
	if rec.Version != SweepVersion || rec.Script != script.Path || rec.Fingerprint != script.Fingerprint() || rec.Site != "wulver" ||
		len(rec.Variants) != 4 || rec.Variants["full"].Partition != "gpu" || rec.Variants["2g.20gb"].File != "2g.20gb.sh" {
		t.Errorf("sweep.json = %s", data)
	}
	// The original is untouched.
	if orig, _ := os.ReadFile(script.Path); string(orig) != debugScript {
		t.Error("the original script changed")
	}
}

func TestWriteSweepSelectedProfiles(t *testing.T) {
	script := writeScript(t, "job.sh", debugScript)
	out := t.TempDir()
	sw, err := WriteSweep(SweepOptions{Script: script, Site: catalogtest.Wulver(t), OutDir: out, Profiles: []string{"full", "1g.10gb", "full"}})
	if err != nil {
		t.Fatal(err)
	}
	if got := strings.Join(sw.Profiles, " "); got != "full 1g.10gb" {
		t.Errorf("profiles %s", got)
	}
	if _, err := os.Stat(filepath.Join(out, "2g.20gb.sh")); !errors.Is(err, os.ErrNotExist) {
		t.Error("an unselected profile was written")
	}
	if _, err := WriteSweep(SweepOptions{Script: script, Site: catalogtest.Wulver(t), OutDir: out, Profiles: []string{"4g.40gb"}}); err == nil ||
		!strings.Contains(err.Error(), "profiles: 1g.10gb, 2g.20gb, 3g.40gb, full") {
		t.Errorf("unknown profile: %v", err)
	}
}

func TestWriteSweepProtectsFiles(t *testing.T) {
	site := catalogtest.Wulver(t)
	script := writeScript(t, "job.sh", debugScript)
	out := t.TempDir()
	// A file the user had in the directory is never overwritten.
	mine := filepath.Join(out, "full.sh")
	os.WriteFile(mine, []byte("mine"), 0o644)
	if _, err := WriteSweep(SweepOptions{Script: script, Site: site, OutDir: out}); err == nil {
		t.Fatal("overwrote a file the sweep did not write")
	}
	if data, _ := os.ReadFile(mine); string(data) != "mine" {
		t.Fatal("the user's file changed")
	}
	if _, err := os.Stat(filepath.Join(out, "1g.10gb.sh")); !errors.Is(err, os.ErrNotExist) {
		t.Error("a refused sweep wrote some variants")
	}
	os.Remove(mine)
	// Sweeping the same script again is fine; another script is not.
	if _, err := WriteSweep(SweepOptions{Script: script, Site: site, OutDir: out}); err != nil {
		t.Fatal(err)
	}
	if _, err := WriteSweep(SweepOptions{Script: script, Site: site, OutDir: out}); err != nil {
		t.Fatalf("re-sweep: %v", err)
	}
	other := writeScript(t, "other.sh", debugScript+"echo more\n")
	if _, err := WriteSweep(SweepOptions{Script: other, Site: site, OutDir: out}); err == nil || !strings.Contains(err.Error(), "already holds a sweep") {
		t.Errorf("sweep of another script into the same dir: %v", err)
	}
	// The script itself is never a target.
	self := writeScript(t, "full.sh", debugScript)
	if _, err := WriteSweep(SweepOptions{Script: self, Site: site, OutDir: filepath.Dir(self.Path)}); err == nil {
		t.Error("a sweep into the script's own directory overwrote it")
	}
}

func TestWriteSweepRefusesLintErrors(t *testing.T) {
	site := catalogtest.Wulver(t)
	crlf := writeScript(t, "crlf.sh", strings.ReplaceAll(debugScript, "\n", "\r\n"))
	_, err := WriteSweep(SweepOptions{Script: crlf, Site: site, OutDir: t.TempDir()})
	var lintErr *LintError
	if !errors.As(err, &lintErr) || !strings.Contains(err.Error(), "crlf.sh:1: crlf:") {
		t.Fatalf("want a lint error naming the file and line, got %v", err)
	}
	if _, err := WriteSweep(SweepOptions{Script: crlf, Site: site, OutDir: t.TempDir(), Force: true}); err != nil {
		t.Errorf("--force: %v", err)
	}
	// Errors that each variant fixes (several slices) do not stop a sweep
	// that asks for one GPU deliberately (without, it is refused: see
	// TestWriteSweepRefusesMultiGPUOnSlices).
	multi := writeScript(t, "multi.sh", strings.Replace(debugScript, "a100_10g:1", "a100_10g:2", 1))
	if _, err := WriteSweep(SweepOptions{Script: multi, Site: site, OutDir: t.TempDir(), AsOneGPU: true}); err != nil {
		t.Errorf("multi-slice script: %v", err)
	}
}

func TestWriteSweepAddsRequestAndName(t *testing.T) {
	script := writeScript(t, "embed.sh", "#!/bin/bash\n#SBATCH --time=10\npython embed.py\n")
	out := t.TempDir()
	if _, err := WriteSweep(SweepOptions{Script: script, Site: catalogtest.Wulver(t), OutDir: out, Profiles: []string{"2g.20gb"}}); err != nil {
		t.Fatal(err)
	}
	data, _ := os.ReadFile(filepath.Join(out, "2g.20gb.sh"))
	want := "#!/bin/bash\n#SBATCH --time=10\n#SBATCH --gres=gpu:a100_20g:1\n#SBATCH --partition=gpu\n#SBATCH --job-name=embed-2g.20gb\npython embed.py\n"
	if string(data) != want {
		t.Errorf("got:\n%s\nwant:\n%s", data, want)
	}
}

func TestWriteSweepProfileQoS(t *testing.T) {
	site, err := catalog.Parse("course.toml", []byte(`version = 1
name = "course"
gpu_model = "A100-SXM4-80GB"
[[partitions]]
name = "course_gpu"
[[profiles]]
name = "1g.10gb"
request = "--gres=gpu:a100_10g:1"
partitions = ["course_gpu"]
qos = "course"
`))
	if err != nil {
		t.Fatal(err)
	}
	script := writeScript(t, "hw.sh", "#!/bin/bash\n#SBATCH -p gpu -q standard -t 10\npython hw.py\n")
	out := t.TempDir()
	if _, err := WriteSweep(SweepOptions{Script: script, Site: site, OutDir: out}); err != nil {
		t.Fatal(err)
	}
	v, _ := slurm.ReadScript(filepath.Join(out, "1g.10gb.sh"))
	if v.Resources.Partition != "course_gpu" || v.Resources.QoS != "course" {
		t.Errorf("partition %q qos %q, want course_gpu and course", v.Resources.Partition, v.Resources.QoS)
	}
}

func TestWriteSweepMonitoredVariants(t *testing.T) {
	script := writeScript(t, "train.sh", debugScript)
	out := filepath.Join(t.TempDir(), "sweep")
	sw, err := WriteSweep(SweepOptions{Script: script, Site: catalogtest.Wulver(t), OutDir: out, Monitor: &slurm.MonitorWrap{Binary: "/usr/local/bin/migadvisor"}})
	if err != nil {
		t.Fatal(err)
	}
	for _, name := range sw.Profiles {
		v := sw.Variants[name]
		data, err := os.ReadFile(filepath.Join(out, v.File))
		if err != nil {
			t.Fatal(err)
		}
		back := slurm.Parse(v.File, data)
		if !v.Monitored || v.NoMonitor != "" || !strings.Contains(string(data), "exec \"$_migadvisor\" monitor -- '/bin/bash' \"$0\" \"$@\"") {
			t.Errorf("%s: not monitored (%q):\n%s", name, v.NoMonitor, data)
		}
		if back.Fingerprint() != sw.Fingerprint || !strings.HasSuffix(string(data), "python train.py\n") {
			t.Errorf("%s: the work changed", name)
		}
	}
	// A script that is not shell keeps its variants, unmonitored, and says why.
	py := writeScript(t, "train.py", "#!/usr/bin/env python3\n#SBATCH --gres=gpu:a100:1\n#SBATCH --time=1:00:00\nprint('hi')\n")
	sw, err = WriteSweep(SweepOptions{Script: py, Site: catalogtest.Wulver(t), OutDir: filepath.Join(t.TempDir(), "py"), Monitor: &slurm.MonitorWrap{}})
	if err != nil {
		t.Fatal(err)
	}
	if v := sw.Variants["full"]; v.Monitored || !strings.Contains(v.NoMonitor, "not a POSIX shell") {
		t.Errorf("python variant: %+v", v)
	}
}

const twoGPUScript = `#!/bin/bash
#SBATCH --job-name=ddp
#SBATCH --partition=gpu
#SBATCH --gres=gpu:a100:2
#SBATCH --time=2:00:00

torchrun --nproc_per_node=2 train.py
`

// A script that uses several GPUs is never swept onto one MIG slice
// silently: refused with the line and what to do, nothing written.
func TestWriteSweepRefusesMultiGPUOnSlices(t *testing.T) {
	site := catalogtest.Wulver(t)
	for _, c := range []struct {
		name, script string
		want         string
	}{
		{"gres", twoGPUScript, "ddp.sh:4: #SBATCH --gres=gpu:a100:2 asks for 2 GPUs, which one MIG slice cannot stand in for: " +
			"a CUDA process sees one MIG device and slices have no NVLink peer-to-peer, so NCCL cannot join them; " +
			"probe whole GPUs only with --profiles full, or a single-GPU version of the script on slices " +
			"(--as-one-gpu sweeps this one on one GPU each, if it can run so)"},
		{"torchrun", strings.Replace(twoGPUScript, "a100:2", "a100:1", 1), "ddp.sh:7: torchrun --nproc_per_node=2 runs 2 GPU processes, which one MIG slice"},
		{"two slices", "#!/bin/bash\n#SBATCH --gres=gpu:a100_10g:2\n#SBATCH --ntasks=2\nsrun python shard.py\n",
			"ddp.sh:2: #SBATCH --gres=gpu:a100_10g:2 asks for 2 GPUs, which one MIG slice"},
	} {
		script := writeScript(t, "ddp.sh", c.script)
		out := filepath.Join(t.TempDir(), "sweep")
		_, err := WriteSweep(SweepOptions{Script: script, Site: site, OutDir: out, Profiles: []string{"1g.10gb", "full"}})
		var multi *MultiGPUError
		if !errors.As(err, &multi) || !strings.HasPrefix(strings.TrimPrefix(err.Error(), filepath.Dir(script.Path)+"/"), c.want) {
			t.Errorf("%s: %v\nwant %s", c.name, err, c.want)
		}
		if _, err := os.Stat(out); !errors.Is(err, os.ErrNotExist) {
			t.Errorf("%s: the refused sweep wrote %s", c.name, out)
		}
	}
}

// On whole GPUs only, a multi-GPU script keeps its GPU count; --as-one-gpu
// sweeps it on one GPU or slice each, as asked.
func TestWriteSweepMultiGPUWholeOrAsOne(t *testing.T) {
	site := catalogtest.Wulver(t)
	script := writeScript(t, "ddp.sh", twoGPUScript)
	sw, err := WriteSweep(SweepOptions{Script: script, Site: site, OutDir: filepath.Join(t.TempDir(), "sweep"), Profiles: []string{"full"}})
	if err != nil {
		t.Fatal(err)
	}
	if v := sw.Variants["full"]; v.Request != "--gres=gpu:a100:2" {
		t.Errorf("full variant asks for %s", v.Request)
	}
	nodes := writeScript(t, "nodes.sh", strings.Replace(twoGPUScript, "#SBATCH --gres=gpu:a100:2", "#SBATCH --nodes=2\n#SBATCH --gpus=a100:4", 1))
	sw, err = WriteSweep(SweepOptions{Script: nodes, Site: site, OutDir: filepath.Join(t.TempDir(), "sweep"), Profiles: []string{"full"}})
	if err != nil || sw.Variants["full"].Request != "--gres=gpu:a100:2" {
		t.Errorf("4 GPUs on 2 nodes: %v %+v", err, sw)
	}

	out := filepath.Join(t.TempDir(), "sweep")
	sw, err = WriteSweep(SweepOptions{Script: script, Site: site, OutDir: out, AsOneGPU: true})
	if err != nil {
		t.Fatal(err)
	}
	for _, name := range sw.Profiles {
		p, _ := site.Profile(name)
		v, err := slurm.ReadScript(filepath.Join(out, name+".sh"))
		if err != nil || sw.Variants[name].Request != p.Request || v.Resources.GPUCount() != 1 {
			t.Errorf("%s: %v %s %+v", name, err, sw.Variants[name].Request, v.Resources.GPUs)
		}
	}
}

func TestSweepTimeSetsEveryVariantsTimeLimit(t *testing.T) {
	out := t.TempDir()
	s := slurm.Parse("job.sh", []byte("#!/bin/bash\n#SBATCH -p gpu\n#SBATCH --gres=gpu:a100:1\n#SBATCH -t 1\nsleep 90\n"))
	sw, err := WriteSweep(SweepOptions{Script: s, Site: catalogtest.Wulver(t), OutDir: out, Time: "0:10:00"})
	if err != nil {
		t.Fatal(err)
	}
	for _, v := range sw.Variants {
		data, err := os.ReadFile(filepath.Join(out, v.File))
		if err != nil {
			t.Fatal(err)
		}
		if got := slurm.Parse(v.File, data).Resources.Time.String(); got != "00:10:00" || v.Time != "0:10:00" {
			t.Errorf("%s asks for --time %s (%q)", v.Profile, got, v.Time)
		}
	}
}

// A script that asks for no GPU is warned of, in words right for a sweep
// and a probe alike; one that asks for a GPU is not.
func TestNoGPUWarning(t *testing.T) {
	cpu := writeScript(t, "cpu.sh", "#!/bin/bash\n#SBATCH --mem=4G\npython prep.py\n")
	if w := NoGPUWarning(cpu); !strings.HasPrefix(w, cpu.Path+" asks for no GPU: ") || !strings.HasSuffix(w, "so its jobs run on GPUs it did not ask for") {
		t.Errorf("warning %q", w)
	}
	gpu := writeScript(t, "gpu.sh", "#!/bin/bash\n#SBATCH --gres=gpu:1\npython train.py\n")
	if w := NoGPUWarning(gpu); w != "" {
		t.Errorf("a GPU script warned of: %q", w)
	}
}

// The sweep command: written and recorded; submitted and recorded with
// Submit; a history that cannot record and a script with no GPU are
// warnings, never failures.
func TestRunSweep(t *testing.T) {
	w := newProbeWorld(t, nil)
	w.hist.failOn = "RecordSweep"
	sw, err := RunSweep(context.Background(), SweepRun{Sweep: w.opt.Sweep}, w.deps)
	if err != nil || len(sw.Profiles) != 4 || len(w.slurm.submitted) != 0 {
		t.Fatalf("written, not submitted: %+v %v (%d submitted)", sw, err, len(w.slurm.submitted))
	}
	if warnings := w.warnings(); len(warnings) != 1 || !strings.Contains(warnings[0], "the sweep is not in the history") {
		t.Errorf("the history's failure as a warning: %q", warnings)
	}
	w = newProbeWorld(t, nil)
	sw, err = RunSweep(context.Background(), SweepRun{Sweep: w.opt.Sweep, Submit: true, Workload: "tag", WorkDir: "/work"}, w.deps)
	if err != nil || w.submittedProfiles() != "1g.10gb 2g.20gb 3g.40gb full" || len(w.hist.subs) != 4 || w.hist.subs[0].Workload != "tag" {
		t.Fatalf("submitted %q, recorded %+v: %v", w.submittedProfiles(), w.hist.subs, err)
	}
	noGPU := catalogtest.WriteScript(t, filepath.Join(t.TempDir(), "cpu.sh"), "#!/bin/bash\n#SBATCH --mem=4G\nrun\n")
	w = newProbeWorld(t, nil)
	w.opt.Sweep.Script = noGPU
	if _, err := RunSweep(context.Background(), SweepRun{Sweep: w.opt.Sweep}, w.deps); err != nil || len(w.warnings()) != 1 {
		t.Errorf("a script with no GPU: %v, warnings %q", err, w.warnings())
	}
}

// sweep --emulate writes one job on the whole GPU that runs the script once
// per profile under migadvisor emulate, with time for every run.
func TestWriteSweepEmulate(t *testing.T) {
	site := catalogtest.Wulver(t)
	script := writeScript(t, "train.sh", strings.Replace(debugScript, "--partition=debug_gpu\n#SBATCH --qos=debug", "--partition=gpu", 1))
	out := filepath.Join(t.TempDir(), "emu")
	sw, err := WriteSweep(SweepOptions{Script: script, Site: site, OutDir: out, Profiles: []string{"1g.10gb", "2g.20gb"},
		Emulate: &slurm.EmulateWrap{Binary: "/opt/migadvisor"}})
	if err != nil {
		t.Fatal(err)
	}
	v := sw.Variants["full"]
	if len(sw.Variants) != 1 || v == nil || v.File != "emulate.sh" || strings.Join(v.Emulates, ",") != "1g.10gb,2g.20gb" ||
		v.JobName != "train-emulate" || v.Time != "04:05:00" { // two runs of the script's 2 hours, and 5 minutes
		t.Fatalf("variants %s", dump(sw.Variants))
	}
	data, _ := os.ReadFile(filepath.Join(out, "emulate.sh"))
	text := string(data)
	if !strings.Contains(text, `exec "$_migadvisor" emulate --profiles '1g.10gb,2g.20gb' --budget '2h0m0s' -- '/bin/bash' "$0" "$@"`) ||
		!strings.Contains(text, `"$_migadvisor" emulate --help >/dev/null 2>&1; then`) ||
		!strings.Contains(text, "--gres=gpu:a100:1") || !strings.Contains(text, `if [ -z "${MIGADVISOR_EMULATED_PROFILE:-}" ]`) {
		t.Errorf("emulate.sh:\n%s", text)
	}
	// A budget bounds each run, and the job's time follows it.
	sw, err = WriteSweep(SweepOptions{Script: script, Site: site, OutDir: filepath.Join(t.TempDir(), "b"), Profiles: []string{"1g.10gb"},
		Emulate: &slurm.EmulateWrap{}, EmulateBudget: 10 * time.Minute})
	if err != nil || sw.Variants["full"].Time != "00:15:00" {
		t.Errorf("with a budget: %v %s", err, dump(sw))
	}
	// Four runs of a day each are more than the partition's three days.
	day := writeScript(t, "day.sh", "#!/bin/bash\n#SBATCH --partition=gpu\n#SBATCH --gres=gpu:a100:1\n#SBATCH --time=1-00:00:00\npython train.py\n")
	if _, err := WriteSweep(SweepOptions{Script: day, Site: site, OutDir: filepath.Join(t.TempDir(), "d"), Emulate: &slurm.EmulateWrap{}}); err == nil ||
		!strings.Contains(err.Error(), "4 runs of 1-00:00:00 each need 4-00:05:00, more than the limit of 3-00:00:00: give each a --budget that fits") {
		t.Errorf("over the partition's limit: %v", err)
	}
	multi := writeScript(t, "two.sh", "#!/bin/bash\n#SBATCH --gres=gpu:a100:2\npython train.py\n")
	if _, err := WriteSweep(SweepOptions{Script: multi, Site: site, OutDir: filepath.Join(t.TempDir(), "m"), Profiles: []string{"full"},
		Emulate: &slurm.EmulateWrap{}}); err == nil || !strings.Contains(err.Error(), "an emulation runs the job on one") {
		t.Errorf("a two-GPU script: %v", err)
	}
}

func dump(v any) string { data, _ := json.Marshal(v); return string(data) }
