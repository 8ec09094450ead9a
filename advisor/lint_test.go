package advisor

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/migadvisor/migadvisor/catalog"
	"github.com/migadvisor/migadvisor/slurm"
)

func wulver(t *testing.T) *catalog.Site {
	t.Helper()
	s, err := catalog.Builtin("wulver")
	if err != nil {
		t.Fatal(err)
	}
	return s
}

func lint(t *testing.T, script string) []Finding {
	t.Helper()
	return Lint(slurm.Parse("job.sh", []byte(script)), wulver(t))
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
		{"cpus over node", okHead + "#SBATCH -c 256\nrun\n", "3:error:cpus-over-node"},
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
	files, _ := filepath.Glob("../testdata/scripts/wulver_*.sh")
	if len(files) < 2 {
		t.Fatalf("want the Wulver sample scripts in testdata/scripts, found %v", files)
	}
	for _, f := range files {
		s, err := slurm.ReadScript(f)
		if err != nil {
			t.Fatal(err)
		}
		if fs := Lint(s, wulver(t)); HasErrors(fs) {
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
	}
	files, _ := filepath.Glob("../examples/*.sh")
	if len(files) != len(want) {
		t.Errorf("examples %v: update this table", files)
	}
	for _, f := range files {
		data, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		if got := summary(Lint(slurm.Parse(f, data), wulver(t))); got != want[filepath.Base(f)] {
			t.Errorf("%s: %q, want %q", f, got, want[filepath.Base(f)])
		}
	}
}

func TestLintProfileQoS(t *testing.T) {
	site, err := catalog.Parse("course.toml", []byte("version = 1\nname = \"course\"\ngpu_model = \"A100-SXM4-80GB\"\n[[profiles]]\nname = \"1g.10gb\"\nrequest = \"--gres=gpu:a100_10g:1\"\nqos = \"course\"\n"))
	if err != nil {
		t.Fatal(err)
	}
	fs := Lint(slurm.Parse("hw.sh", []byte("#!/bin/bash\n#SBATCH -t 5 -q standard\n#SBATCH --gres=gpu:a100_10g:1\nrun\n")), site)
	if got := summary(fs); got != "3:warning:qos-not-allowed" || !strings.Contains(fs[0].Message, "--qos=course") {
		t.Errorf("findings %q %+v", got, fs)
	}
	if fs := Lint(slurm.Parse("hw.sh", []byte("#!/bin/bash\n#SBATCH -t 5 -q course --gres=gpu:a100_10g:1\nrun\n")), site); len(fs) != 0 {
		t.Errorf("right QoS: %s", summary(fs))
	}
}
