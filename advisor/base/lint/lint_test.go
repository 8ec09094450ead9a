package lint

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/migadvisor/migadvisor/catalog/catalogtest"

	"github.com/migadvisor/migadvisor/catalog"
	"github.com/migadvisor/migadvisor/slurm"
)

func lint(t *testing.T, script string) []Finding {
	t.Helper()
	return Check(slurm.Parse("job.sh", []byte(script)), catalogtest.Wulver(t))
}

func summary(fs []Finding) string {
	var parts []string
	for _, f := range fs {
		parts = append(parts, fmt.Sprintf("%d:%s:%s", f.Line, f.Severity, f.Code))
	}
	return strings.Join(parts, " ")
}

const okHead = "#!/bin/bash\n#SBATCH -p gpu -q standard -t 1:00:00\n"

func TestLintRules(t *testing.T) {
	tests := []struct {
		name, script, want string
	}{
		{"clean", okHead + "#SBATCH --gres=gpu:a100_10g:1\nrun\n", ""},
		{"multi-mig-slice by count", okHead + "#SBATCH --gres=gpu:a100_10g:2\nrun\n", "3:error:multi-mig-slice"},
		{"multi-mig-slice by types", okHead + "#SBATCH --gpus=a100_10g:1,a100_20g:1\nrun\n", "3:error:multi-mig-slice"},
		{"multi-mig-slice per task", okHead + "#SBATCH --gpus-per-task=a100_10g:1 -n 2\nrun\n", "3:error:multi-mig-slice"},
		{"two full GPUs are fine", okHead + "#SBATCH --gres=gpu:a100:2\nrun\n", ""},
		{"crlf", "#!/bin/bash\r\n#SBATCH -p gpu -t 5\r\nrun\r\n", "1:error:crlf"},
		{"late directive", okHead + "run\n#SBATCH --mem=4G\n", "4:warning:late-directive"},
		{"no time", "#!/bin/bash\n#SBATCH -p gpu --gres=gpu:a100_10g:1\nrun\n", "2:warning:no-time"},
		{"time over the site max", "#!/bin/bash\n#SBATCH -p gpu -t 4-00:00:00\nrun\n", "2:error:time-over-max"},
		{"time over the partition max", "#!/bin/bash\n#SBATCH -p debug_gpu -q debug\n#SBATCH -t 9:00:00\nrun\n", "3:error:time-over-max"},
		{"unlimited time", "#!/bin/bash\n#SBATCH -p gpu -t UNLIMITED\nrun\n", "2:error:time-over-max"},
		{"unknown gpu type", okHead + "#SBATCH --gres=gpu:v100:1\nrun\n", "3:error:unknown-gpu-type"},
		{"mem over node", okHead + "#SBATCH --mem=600G\nrun\n", "3:error:mem-over-node"},
		{"mem per cpu over node", okHead + "#SBATCH -n 128 --mem-per-cpu=8G\nrun\n", "3:error:mem-over-node"},
		{"mem=0 is all of the node", okHead + "#SBATCH --mem=0\nrun\n", ""},
		{"cpus over node", okHead + "#SBATCH -c 256\nrun\n", "3:error:cpus-over-node 3:error:mem-over-node"},
		{"mem conflict", okHead + "#SBATCH --mem=4G\n#SBATCH --mem-per-cpu=2G\nrun\n", "4:error:mem-conflict"},
		{"wrong partition", "#!/bin/bash\n#SBATCH -p general -t 5\n#SBATCH --gres=gpu:a100_10g:1\nrun\n", "3:warning:wrong-partition"},
		{"no partition on a GPU job", "#!/bin/bash\n#SBATCH -t 5 --gres=gpu:a100_10g:1\nrun\n", "2:warning:wrong-partition"},
		{"full GPU not in debug_gpu", "#!/bin/bash\n#SBATCH -p debug_gpu -q debug -t 5 --gres=gpu:a100:1\nrun\n", "2:warning:wrong-partition"},
		{"unknown partition", "#!/bin/bash\n#SBATCH -p gpux -t 5\nrun\n", "2:warning:unknown-partition"},
		{"qos not allowed", "#!/bin/bash\n#SBATCH -p debug_gpu -q standard -t 5\nrun\n", "2:warning:qos-not-allowed"},
		{"unexpanded variable", okHead + "#SBATCH --account=$PI_ucid\nrun\n", "3:warning:unexpanded-variable"},
		{"commented directive", okHead + "# SBATCH --mem=4G\nrun\n", "3:warning:commented-directive"},
		{"disabled directive is fine", okHead + "##SBATCH --mem=4G\nrun\n", ""},
		{"unknown option", okHead + "#SBATCH --gpu=1\nrun\n", "3:error:unknown-option"},
		{"no shebang", "#SBATCH -p gpu -t 5\nrun\n", "1:error:no-shebang"},
		// Seen: a bad --time's error, then "no --time" on top of it.
		{"bad time is no missing time", "#!/bin/bash\n#SBATCH -p gpu -t banana\nrun\n", "2:error:bad-value"},
		{"an empty script lacks no --time", "", "1:error:empty-script"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			if got := summary(lint(t, tc.script)); got != tc.want {
				t.Errorf("findings %q, want %q", got, tc.want)
			}
		})
	}
}

func TestMultiSliceAdviceNamesAJobArray(t *testing.T) {
	fs := lint(t, okHead+"#SBATCH --gres=gpu:a100_10g:3\nrun\n")
	if len(fs) != 1 || !strings.Contains(fs[0].Message, "--array=1-3") {
		t.Errorf("findings %+v: want a job-array suggestion", fs)
	}
}

// TestWulverSampleScriptsHaveNoError: the sample scripts of Wulver's own
// documentation (MIG and full GPU) are correct and must stay error-free.
func TestWulverSampleScriptsHaveNoError(t *testing.T) {
	files, _ := filepath.Glob("../../../testdata/scripts/wulver_*.sh")
	if len(files) < 2 {
		t.Fatalf("want the Wulver sample scripts in testdata/scripts, found %v", files)
	}
	for _, f := range files {
		s, err := slurm.ReadScript(f)
		if err != nil {
			t.Fatal(err)
		}
		if fs := Check(s, catalogtest.Wulver(t)); HasErrors(fs) {
			t.Errorf("%s: %s", f, summary(fs))
		}
	}
}

func TestExamples(t *testing.T) {
	want := map[string]string{
		"full_gpu.sh":           "",
		"gromacs.sh":            "",
		"multi_slice_misuse.sh": "7:error:multi-mig-slice",
		"no_gpu_request.sh":     "9:warning:late-directive",
		"pytorch_cifar10.sh":    "",
		"pytorch_mnist.sh":      "",
		"qlora_finetune.sh":     "",
		"quickstart.sh":         "",
	}
	files, _ := filepath.Glob("../../../examples/*.sh")
	if len(files) != len(want) {
		t.Errorf("examples %v: update this table", files)
	}
	for _, f := range files {
		data, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		if got := summary(Check(slurm.Parse(f, data), catalogtest.Wulver(t))); got != want[filepath.Base(f)] {
			t.Errorf("%s: %q, want %q", f, got, want[filepath.Base(f)])
		}
	}
}

func TestLintProfileQoS(t *testing.T) {
	site, err := catalog.Parse("course.toml", []byte("version = 1\nname = \"course\"\ngpu_model = \"A100-SXM4-80GB\"\n[[profiles]]\nname = \"1g.10gb\"\nrequest = \"--gres=gpu:a100_10g:1\"\nqos = \"course\"\n"))
	if err != nil {
		t.Fatal(err)
	}
	fs := Check(slurm.Parse("hw.sh", []byte("#!/bin/bash\n#SBATCH -t 5 -q standard\n#SBATCH --gres=gpu:a100_10g:1\nrun\n")), site)
	if got := summary(fs); got != "3:warning:qos-not-allowed" || !strings.Contains(fs[0].Message, "--qos=course") {
		t.Errorf("findings %q %+v", got, fs)
	}
	if fs := Check(slurm.Parse("hw.sh", []byte("#!/bin/bash\n#SBATCH -t 5 -q course --gres=gpu:a100_10g:1\nrun\n")), site); len(fs) != 0 {
		t.Errorf("right QoS: %s", summary(fs))
	}
}

// An --output or --error whose directory does not exist where the job
// runs (where sbatch runs, or its --chdir) fails the job at once, with no
// output at all: on the dev cluster, `#SBATCH --output=nosuchdir/%x-%j.out`
// gave the sacct record 16|16|nodir|FAILED|0:53|/tmp/i18o (JobIDRaw, JobID,
// JobName, State, ExitCode, WorkDir). A directory with a % in it is known
// only when the job runs, and is not checked.
func TestLintOutputDirectoryMissing(t *testing.T) {
	submit := t.TempDir()
	for _, d := range []string{"logs", "sub/logs", "made"} {
		if err := os.MkdirAll(filepath.Join(submit, d), 0o755); err != nil {
			t.Fatal(err)
		}
	}
	os.WriteFile(filepath.Join(submit, "afile"), nil, 0o644)
	head := okHead + "#SBATCH --gres=gpu:a100_10g:1\n"
	tests := []struct{ name, directives, want string }{
		{"missing directory", "#SBATCH --output=nologs/%x-%j.out\n", "4:error:output-dir-missing"},
		{"existing directory", "#SBATCH --output=logs/%x-%j.out\n#SBATCH --error=logs/%x-%j.err\n", ""},
		{"missing for the error file", "#SBATCH -o logs/%j.out\n#SBATCH -e errs/%j.err\n", "5:error:output-dir-missing"},
		{"both missing", "#SBATCH -o out/%j.out -e err/%j.err\n", "4:error:output-dir-missing 4:error:output-dir-missing"},
		{"the last --output counts", "#SBATCH -o nologs/a.out\n#SBATCH -o logs/a.out\n", ""},
		{"a file, not a directory", "#SBATCH -o afile/x.out\n", "4:error:output-dir-missing"},
		{"absolute", "#SBATCH -o /nonexistent-migadvisor/x.out\n", "4:error:output-dir-missing"},
		{"no directory", "#SBATCH -o %x-%j.out\n", ""},
		{"a % in the directory", "#SBATCH -o %u/out.txt\n#SBATCH -e logs-%x/err.txt\n", ""},
		// sbatch reads \\ in a directive as one backslash, which turns the symbols off.
		{"a backslash: no symbols", "#SBATCH -o no\\\\%x/out.txt\n", "4:error:output-dir-missing"},
		{"under --chdir", "#SBATCH --chdir=sub\n#SBATCH -o logs/x.out -e nologs/x.err\n", "5:error:output-dir-missing"},
		{"absolute --chdir", "#SBATCH -D " + filepath.Join(submit, "sub") + "\n#SBATCH -o logs/x.out\n", ""},
		{"--chdir that does not exist", "#SBATCH -D nowhere\n#SBATCH -o logs/x.out\n", ""},
		{"after the first command", "echo\n#SBATCH -o nologs/x.out\n", "5:warning:late-directive"},
	}
	for _, tc := range tests {
		s := slurm.Parse("job.sh", []byte(head+tc.directives+"srun train\n"))
		got := CheckWith(s, catalogtest.Wulver(t), Options{SubmitDir: submit})
		if summary(got) != tc.want {
			t.Errorf("%s: %s, want %q", tc.name, summary(got), tc.want)
		}
	}
	fs := CheckWith(slurm.Parse("job.sh", []byte(head+"#SBATCH --output=nologs/%x-%j.out\nsrun train\n")), catalogtest.Wulver(t), Options{SubmitDir: submit})
	if want := `--output's directory "nologs" does not exist in ` + submit + `: the job would fail at once (exit code 0:53) with no output; create it first (mkdir -p nologs)`; len(fs) != 1 || fs[0].Message != want {
		t.Errorf("message %q\nwant    %q", fs, want)
	}
	if fs := Check(slurm.Parse("job.sh", []byte(head+"#SBATCH -o nologs/x.out\nsrun\n")), catalogtest.Wulver(t)); len(fs) != 0 {
		t.Errorf("without a submission directory nothing is checked: %s", summary(fs))
	}
}

// A launcher that starts more GPU processes than the job asks for GPUs
// crowds them onto the GPUs it has (NCCL will not run two ranks on one
// device): the launcher's line says so, and what to ask for.
func TestLintGPUProcessesOverRequest(t *testing.T) {
	tests := []struct{ name, body, want string }{
		{"torchrun over one GPU", "#SBATCH --gres=gpu:a100:1\ntorchrun --nproc_per_node=4 train.py\n", "4:warning:gpu-processes-over-request"},
		{"torchrun over two GPUs", "#SBATCH --gres=gpu:a100:2\ntorchrun --nproc_per_node=4 train.py\n", "4:warning:gpu-processes-over-request"},
		{"a GPU for each process", "#SBATCH --gres=gpu:a100:4\ntorchrun --nproc_per_node=4 train.py\n", ""},
		{"as many as the allocation", "#SBATCH --gres=gpu:a100:1\ntorchrun --nproc_per_node=gpu train.py\n", ""},
		{"one process", "#SBATCH --gres=gpu:a100:1\ntorchrun --nproc_per_node=1 train.py\n", ""},
		{"a MIG slice", "#SBATCH --gres=gpu:a100_10g:1\nsrun torchrun --nproc_per_node=2 train.py\n", "4:warning:gpu-processes-over-request"},
		{"on each of two nodes", "#SBATCH -N 2 --gres=gpu:a100:4\ntorchrun --nnodes=2 --nproc_per_node=4 train.py\n", ""},
		{"more per node than asked", "#SBATCH -N 2 --gres=gpu:a100:1\ntorchrun --nnodes=2 --nproc_per_node=4 train.py\n", "4:warning:gpu-processes-over-request"},
		// Without a GPU torchrun runs CPU processes (gloo): nothing to compare.
		{"no GPU asked for", "torchrun --nproc_per_node=4 train.py\n", ""},
		{"only printed", "#SBATCH --gres=gpu:a100:1\necho torchrun --nproc_per_node=4 train.py\n", ""},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			if got := summary(lint(t, okHead+tc.body)); got != tc.want {
				t.Errorf("findings %q, want %q", got, tc.want)
			}
		})
	}
	messages := map[string]string{
		"#SBATCH --gres=gpu:a100:1\ntorchrun --nproc_per_node=4 train.py\n":             "torchrun --nproc_per_node=4 runs 4 GPU processes, but the job asks for 1 GPU: ask for 4 (--gres=gpu:a100:4) or start 1",
		"#SBATCH --gpus=2\ntorchrun --nproc_per_node=4 train.py\n":                      "torchrun --nproc_per_node=4 runs 4 GPU processes, but the job asks for 2 GPUs: ask for 4 (--gpus=4) or start 2",
		"#SBATCH --gres=gpu:a100_10g:1\ntorchrun --nproc_per_node=2 t.py\n":             "torchrun --nproc_per_node=2 runs 2 GPU processes, but the job asks for 1 MIG slice: ask for 2 full GPUs (--gres=gpu:a100:2) or start 1",
		"#SBATCH -N 2 --gres=gpu:a100:1\ntorchrun --nnodes=2 --nproc_per_node=4 t.py\n": "torchrun --nproc_per_node=4 on 2 nodes runs 8 GPU processes, but the job asks for 2 GPUs: ask for 8 (--gres=gpu:a100:4 on each node) or start 2",
		"#SBATCH --gres=gpu:1\nCUDA_VISIBLE_DEVICES=0,1 python t.py\n":                  "CUDA_VISIBLE_DEVICES=0,1 names 2 GPUs, but the job asks for 1 GPU: ask for 2 (--gres=gpu:2) or name 1",
	}
	for body, want := range messages {
		fs := lint(t, okHead+body)
		if len(fs) != 1 || fs[0].Message != want {
			t.Errorf("%q:\n got %+v\nwant %q", body, fs, want)
		}
	}
}

// Memory reads the same in every message: 600 GiB, 502 GiB, as memory.FormatMiB
// writes it.
func TestLintMemoryOverNodeMessage(t *testing.T) {
	fs := lint(t, okHead+"#SBATCH --gres=gpu:a100_10g:1\n#SBATCH --mem=600G\nrun\n")
	if want := "the job asks for 600 GiB of memory per node, but gpu nodes have 502 GiB"; len(fs) != 1 || fs[0].Message != want {
		t.Errorf("findings %+v, want %q", fs, want)
	}
}

// Without a memory option a job gets the default per CPU for each CPU:
// more than a node has is an error as well, said with the figures.
func TestLintDefaultMemoryOverNode(t *testing.T) {
	fs := lint(t, "#!/bin/bash\n#SBATCH -p general -t 1:00:00\n#SBATCH --ntasks=200\nrun\n")
	if got := summary(fs); got != "3:error:cpus-over-node 3:error:mem-over-node" {
		t.Fatalf("findings %q", got)
	}
	if want := "without --mem the job gets 3.9 GiB per CPU, 781 GiB per node for its 200 CPUs, but general nodes have 502 GiB"; fs[1].Message != want {
		t.Errorf("message %q\n   want %q", fs[1].Message, want)
	}
	// 128 CPUs × 4000M fit a 514000M node.
	if fs := lint(t, "#!/bin/bash\n#SBATCH -p general -t 1:00:00\n#SBATCH --ntasks=128\nrun\n"); len(fs) != 0 {
		t.Errorf("a full node by default: %s", summary(fs))
	}
}
