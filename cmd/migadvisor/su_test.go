package main

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// suOf runs `su --json` and `su` on a script: the JSON report, the text and
// the text's stderr.
func suOf(t *testing.T, script string, args ...string) (suJSON, string, string) {
	t.Helper()
	isolate(t)
	file := filepath.Join(t.TempDir(), "job.sh")
	if err := os.WriteFile(file, []byte(script), 0o644); err != nil {
		t.Fatal(err)
	}
	out, errOut, code := migadvisor(t, append([]string{"su", "--json", file}, args...)...)
	var r suJSON
	if code != 0 || json.Unmarshal([]byte(out), &r) != nil {
		t.Fatalf("su --json: exit %d\n%s%s", code, out, errOut)
	}
	text, textErr, code := migadvisor(t, append([]string{"su", file}, args...)...)
	if code != 0 {
		t.Fatalf("su: exit %d\n%s%s", code, text, textErr)
	}
	return r, strings.TrimSpace(text), strings.ReplaceAll(textErr, file, "job.sh")
}

type suJSON struct {
	SU           float64 `json:"su"`
	SUPerHour    float64 `json:"su_per_hour"`
	Profile      string  `json:"profile"`
	GPUs         int     `json:"gpus"`
	CPUs         int     `json:"cpus"`
	MemGiB       float64 `json:"mem_gib"`
	Partition    string  `json:"partition"`
	MemWholeNode bool    `json:"mem_whole_node"`
	AtMost       bool    `json:"at_most"`
	Warnings     []struct {
		Line    int    `json:"line"`
		Code    string `json:"code"`
		Message string `json:"message"`
	} `json:"warnings"`
}

// A CPU-only script is priced max(CPUs, RAM_GB/4) × hours.
func TestSUPricesACPUOnlyScript(t *testing.T) {
	r, text, _ := suOf(t, "#!/bin/bash\n#SBATCH --partition=general\n#SBATCH --ntasks=8\n#SBATCH --mem=64G\n#SBATCH --time=2:00:00\nsrun ./a.out\n")
	if r.SU != 32 || r.SUPerHour != 16 || r.Profile != "" || r.GPUs != 0 || r.CPUs != 8 {
		t.Errorf("8 CPUs, 64G, 2 h: %+v; want max(8, 64/4) × 2 = 32 SU", r)
	}
	if text != "CPU only, 8 CPUs, 64 GiB RAM, 2 h in general on wulver: at most 32 SU (16 SU/h), if it runs all of its --time" {
		t.Errorf("text %q", text)
	}
	// No partition, no memory: the site's default partition, 4000M per CPU.
	if r, _, _ := suOf(t, "#!/bin/bash\n#SBATCH --time=30\nhostname\n"); r.SU != 0.5 || r.Partition != "general" {
		t.Errorf("1 CPU for 30 min: %+v; want 0.5 SU in general", r)
	}
}

// --mem=0 is all the memory of each node (sbatch's meaning): the price
// says so and names the node memory it used.
func TestSUPricesMemZeroAsTheWholeNode(t *testing.T) {
	r, text, _ := suOf(t, "#!/bin/bash\n#SBATCH --partition=gpu\n#SBATCH --gres=gpu:a100_10g:1\n#SBATCH --mem=0\n#SBATCH --time=1:00:00\nsrun ./a.out\n")
	if !r.MemWholeNode || r.MemGiB < 501 || r.MemGiB > 502 || r.SUPerHour < 127 || r.SUPerHour > 128 {
		t.Errorf("--mem=0 on a gpu node (514000M): %+v", r)
	}
	if !strings.Contains(text, "502 GiB RAM (--mem=0: all of a gpu node)") {
		t.Errorf("text %q", text)
	}
	// Without --partition the GPU's partition gives the node.
	r, _, _ = suOf(t, "#!/bin/bash\n#SBATCH --gres=gpu:a100_10g:1\n#SBATCH --mem=0\n#SBATCH --nodes=2\n#SBATCH -t 60\nsrun ./a.out\n")
	if r.Partition != "gpu" || r.MemGiB < 1003 || r.MemGiB > 1004 {
		t.Errorf("--mem=0 on 2 nodes of the profile's partition: %+v", r)
	}
	// A flag's partition gives its own nodes.
	r, _, _ = suOf(t, "#!/bin/bash\n#SBATCH --gres=gpu:a100_10g:1\n#SBATCH --mem=0\n#SBATCH -t 60\nsrun ./a.out\n", "--partition", "debug_gpu")
	if r.Partition != "debug_gpu" || r.MemGiB != 16 {
		t.Errorf("--mem=0 in debug_gpu: %+v", r)
	}
}

// A --gres line after the first command is not part of the job: sbatch
// ignores it, so does the price, and su says so.
func TestSUIgnoresALateGres(t *testing.T) {
	r, text, errOut := suOf(t, "#!/bin/bash\n#SBATCH --partition=gpu\n#SBATCH --ntasks=4\n#SBATCH --time=1:00:00\nmodule load foo\n\n#SBATCH --gres=gpu:a100:1\nsrun ./a.out\n")
	if r.SU != 4 || r.Profile != "" || len(r.Warnings) != 1 || r.Warnings[0].Line != 7 || r.Warnings[0].Code != "late-directive" {
		t.Errorf("priced %+v; want 4 CPUs for 1 h and the line 7 named", r)
	}
	if !strings.HasPrefix(text, "CPU only, 4 CPUs") {
		t.Errorf("text %q", text)
	}
	if errOut != "job.sh:7: #SBATCH after the first command is ignored by sbatch: priced without --gres=gpu:a100:1\n" {
		t.Errorf("stderr %q", errOut)
	}
}

// A request over the partition's limits is priced as written, with a
// warning: Slurm would not start it.
func TestSUWarnsOverThePartitionLimits(t *testing.T) {
	r, _, errOut := suOf(t, "#!/bin/bash\n#SBATCH --partition=gpu\n#SBATCH --gres=gpu:a100_10g:1\n#SBATCH --ntasks=200\n#SBATCH --time=4-00:00:00\nsrun ./a.out\n")
	codes := []string{}
	for _, w := range r.Warnings {
		codes = append(codes, w.Code)
	}
	if strings.Join(codes, ",") != "cpus-over-node,mem-over-node,time-over-max" || r.Warnings[0].Line != 4 || r.Warnings[2].Line != 5 {
		t.Errorf("warnings %+v", r.Warnings)
	}
	want := "job.sh:4: the job needs 200 CPUs per node, but gpu nodes have 128\n" +
		"job.sh:4: without --mem the job gets 3.9 GiB per CPU, 781 GiB per node for its 200 CPUs, but gpu nodes have 502 GiB\n" +
		"job.sh:5: --time=4-00:00:00 is over the partition gpu limit of 3-00:00:00; Slurm will not start the job\n"
	if errOut != want {
		t.Errorf("stderr %q, want %q", errOut, want)
	}
	// A flag's time over the limit has no line of the script.
	_, _, errOut = suOf(t, "#!/bin/bash\n#SBATCH --partition=gpu\n#SBATCH --gres=gpu:a100_10g:1\n#SBATCH -t 60\nsrun ./a.out\n", "--hours", "80")
	if errOut != "job.sh: --time=3-08:00:00 is over the partition gpu limit of 3-00:00:00; Slurm will not start the job\n" {
		t.Errorf("stderr %q", errOut)
	}
}

// su --help says what su does without a flag: the defaults it prints are
// the ones it applies.
func TestSUHelpDefaultsMatchTheBehaviour(t *testing.T) {
	isolate(t)
	out, _, _ := migadvisor(t, "su", "--help")
	for _, want := range []string{
		"--gpus value       how many of the profile (default: 1, or the script's)",
		"--cpus value       CPUs (default: 1, or the script's)",
		"--hours value      run time in hours (default: 1, or the script's --time)",
		"--partition value  partition (default: the script's, else the profile's first, else the site's default)",
	} {
		if !strings.Contains(out, want) {
			t.Errorf("su --help lacks %q:\n%s", want, out)
		}
	}
	if strings.Contains(out, "(default: 0)") {
		t.Errorf("su --help names a default su does not use:\n%s", out)
	}
}

// su says what lint says of a launcher that starts more GPU processes than
// the job is priced for: the price is for the GPUs asked for.
func TestSUWarnsOfMoreGPUProcessesThanGPUs(t *testing.T) {
	script := "#!/bin/bash\n#SBATCH -p gpu -t 1:00:00\n#SBATCH --gres=gpu:a100:1\ntorchrun --nproc_per_node=4 train.py\n"
	r, _, errOut := suOf(t, script)
	if r.GPUs != 1 || len(r.Warnings) != 1 || r.Warnings[0].Code != "gpu-processes-over-request" || r.Warnings[0].Line != 4 {
		t.Errorf("priced %+v; want 1 GPU and the launcher's line named", r)
	}
	if want := "job.sh:4: torchrun --nproc_per_node=4 runs 4 GPU processes, but the job asks for 1 GPU: ask for 4 (--gres=gpu:a100:4) or start 1\n"; errOut != want {
		t.Errorf("stderr %q\n  want %q", errOut, want)
	}
	// Priced for the GPUs the processes use: nothing to say.
	if r, _, errOut := suOf(t, script, "--gpus", "4"); r.GPUs != 4 || len(r.Warnings) != 0 {
		t.Errorf("--gpus 4: %+v %q", r, errOut)
	}
}

// A request for more memory than a node has is priced as asked, with
// lint's warning; so is the default memory of too many CPUs.
func TestSUWarnsOfMemoryOverTheNode(t *testing.T) {
	r, _, errOut := suOf(t, "#!/bin/bash\n#SBATCH -p gpu -t 1:00:00\n#SBATCH --gres=gpu:a100_10g:1\n#SBATCH --mem=600G\nrun\n")
	if r.MemGiB != 600 || len(r.Warnings) != 1 || r.Warnings[0].Code != "mem-over-node" || r.Warnings[0].Line != 4 {
		t.Errorf("priced %+v", r)
	}
	if want := "job.sh:4: the job asks for 600 GiB of memory per node, but gpu nodes have 502 GiB\n"; errOut != want {
		t.Errorf("stderr %q\n  want %q", errOut, want)
	}
	_, _, errOut = suOf(t, "#!/bin/bash\n#SBATCH -p general -t 1:00:00\n#SBATCH --ntasks=200\nrun\n")
	want := "job.sh:3: the job needs 200 CPUs per node, but general nodes have 128\n" +
		"job.sh:3: without --mem the job gets 3.9 GiB per CPU, 781 GiB per node for its 200 CPUs, but general nodes have 502 GiB\n"
	if errOut != want {
		t.Errorf("stderr %q\n  want %q", errOut, want)
	}
	// Figures from flags have no line; --mem=0 is the node itself.
	isolate(t)
	if _, errOut, _ := migadvisor(t, "su", "--profile", "none", "--mem", "600G"); errOut != "warning: the job asks for 600 GiB of memory per node, but general nodes have 502 GiB\n" {
		t.Errorf("--mem 600G: stderr %q", errOut)
	}
	if r, _, errOut := suOf(t, "#!/bin/bash\n#SBATCH -p gpu -t 1:00:00\n#SBATCH --gres=gpu:a100_10g:1\n#SBATCH --mem=0\nrun\n"); len(r.Warnings) != 0 {
		t.Errorf("--mem=0: %q", errOut)
	}
}

// su rounds SU once, to three significant digits (whole SU from 100), and
// prints in text the figure its JSON holds: no nonzero figure reads 0.
func TestSURoundsTheSameInTextAndJSON(t *testing.T) {
	r, text, _ := suOf(t, "#!/bin/bash\n#SBATCH -p gpu -t 1:00:00\n#SBATCH --gres=gpu:a100_10g:1\n#SBATCH --mem=0\nrun\n")
	if r.SU != 127 || r.SUPerHour != 127 || !strings.HasSuffix(text, ": at most 127 SU (127 SU/h), if it runs all of its --time") {
		t.Errorf("--mem=0 on 1g.10gb: JSON %g SU, %g SU/h; text %q", r.SU, r.SUPerHour, text)
	}
	isolate(t)
	out, _, _ := migadvisor(t, "su", "--json", "--profile", "1g.10gb", "--hours", "0.0001")
	text, _, _ = migadvisor(t, "su", "--profile", "1g.10gb", "--hours", "0.0001")
	if !strings.Contains(out, `"su": 0.0003,`) || !strings.HasSuffix(strings.TrimSpace(text), ": 0.0003 SU (3 SU/h)") {
		t.Errorf("0.0001 h on 1g.10gb: %s%s", out, text)
	}
	// 3 SU/h × 0.3333 h is 0.9999 SU: 1 SU to three digits.
	out, _, _ = migadvisor(t, "su", "--json", "--profile", "1g.10gb", "--hours", "0.3333")
	text, _, _ = migadvisor(t, "su", "--profile", "1g.10gb", "--hours", "0.3333")
	if !strings.Contains(out, `"su": 1,`) || !strings.HasSuffix(strings.TrimSpace(text), ": 1 SU (3 SU/h)") {
		t.Errorf("0.3333 h on 1g.10gb: %s%s", out, text)
	}
}

// --profile on a script that asks for no GPU prices one of the profile, as
// --gpus's default says.
func TestSUProfileFlagOnACPUOnlyScript(t *testing.T) {
	r, text, _ := suOf(t, "#!/bin/bash\n#SBATCH -p gpu -t 1:00:00\nrun\n", "--profile", "1g.10gb")
	if r.Profile != "1g.10gb" || r.GPUs != 1 || r.SU != 3 || !strings.HasPrefix(text, "1g.10gb, 1 CPU") {
		t.Errorf("priced %+v: %q", r, text)
	}
}

// A script's --time is a limit: su says its charge is the most the job can
// be charged; a run time given by --hours is priced as it is.
func TestSUSaysAtMostForAScriptsTime(t *testing.T) {
	r, text, _ := suOf(t, "#!/bin/bash\n#SBATCH -p gpu -t 2:00:00\n#SBATCH --gres=gpu:a100:1\n#SBATCH --mem=4G\nrun\n")
	if !r.AtMost || !strings.HasSuffix(text, "2 h in gpu on wulver: at most 34 SU (17 SU/h), if it runs all of its --time") {
		t.Errorf("--time 2h: at_most %v, %q", r.AtMost, text)
	}
	isolate(t)
	dir := t.TempDir()
	job := filepath.Join(dir, "job.sh")
	os.WriteFile(job, []byte("#!/bin/bash\n#SBATCH -p gpu -t 2:00:00\n#SBATCH --gres=gpu:a100:1\n#SBATCH --mem=4G\nrun\n"), 0o644)
	text, _, _ = migadvisor(t, "su", "--hours", "0.5", job)
	if strings.Contains(text, "at most") || !strings.HasSuffix(strings.TrimSpace(text), ": 8.5 SU (17 SU/h)") {
		t.Errorf("--hours 0.5: %q", text)
	}
}
