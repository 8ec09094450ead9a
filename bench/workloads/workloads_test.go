package workloads

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/migadvisor/migadvisor/slurm"
)

func wulver(t *testing.T) *Suite {
	t.Helper()
	s, err := LookupSuite(DefaultSuite)
	if err != nil {
		t.Fatal(err)
	}
	return s
}

func TestSuiteHasTheWulverTables(t *testing.T) {
	s := wulver(t)
	want := []string{"pytorch_mnist_simplecnn", "pytorch_cifar10_deepcnn", "pytorch_cifar10_resnet", "llm-finetuning", "gromacs_performance"}
	if got := s.names(); strings.Join(got, ",") != strings.Join(want, ",") {
		t.Fatalf("workloads %v, want %v", got, want)
	}
	for _, w := range s.Workloads {
		if w.Title == "" || w.Description == "" || w.Needs == "" || w.Table == "" || len(w.Quick) == 0 {
			t.Errorf("%s: title, description, needs, table and quick must all be set", w.Name)
		}
	}
	if _, err := s.Select([]string{"pytorch_mnist_simplecnn", "nope"}); err == nil || !strings.Contains(err.Error(), `"nope"`) {
		t.Errorf("selecting an unknown workload: %v", err)
	}
	if _, err := LookupSuite("mars"); err == nil {
		t.Error("an unknown suite was found")
	}
}

func TestFindStripsTheVariant(t *testing.T) {
	w, ok := Find("pytorch_cifar10_resnet@synthetic@quick")
	if !ok || w.Name != "pytorch_cifar10_resnet" {
		t.Fatalf("Find = %v, %v", w, ok)
	}
	if _, ok := Find("my_own_job"); ok {
		t.Error("an unknown tag was found")
	}
	if got := w.Tag(RenderOptions{Synthetic: true, Quick: true}); got != "pytorch_cifar10_resnet@synthetic@quick" {
		t.Errorf("Tag = %q", got)
	}
}

// Every workload renders into a script sbatch accepts, asking for exactly
// the GPU given, running in its own directory, with the options quoted.
func TestRenderWritesScriptsSbatchAccepts(t *testing.T) {
	root := filepath.Join(t.TempDir(), "bench dir's")
	for _, w := range wulver(t).Workloads {
		opt := RenderOptions{Dir: filepath.Join(root, w.Name), GPURequest: "--gres=gpu:a100_10g:1",
			Setup: "module load foss/2023b\nconda activate 'torch env'", Python: "/opt/my env/bin/python3",
			GMX: "/opt/gromacs/bin/gmx", Synthetic: true, Quick: true}
		job, err := w.Render(opt)
		if err != nil {
			t.Fatalf("%s: %v", w.Name, err)
		}
		s, err := slurm.ReadScript(job)
		if err != nil {
			t.Fatal(err)
		}
		for _, p := range s.Problems {
			t.Errorf("%s:%d: %s", job, p.Line, p.Message)
		}
		if g := s.Resources.GPUs; len(g) != 1 || g[0].Type != "a100_10g" || g[0].Count != 1 {
			t.Errorf("%s: GPU request %+v", w.Name, g)
		}
		if o := s.LastOption("chdir"); o == nil || o.Value != opt.Dir {
			t.Errorf("%s: --chdir %+v, want %q", w.Name, o, opt.Dir)
		}
		text := string(s.Data)
		for _, want := range append([]string{"--synthetic", "conda activate 'torch env'"}, w.Quick...) {
			if !strings.Contains(text, want) {
				t.Errorf("%s: the script lacks %q:\n%s", w.Name, want, text)
			}
		}
		switch w.Runs {
		case "python":
			if !strings.Contains(text, `'/opt/my env/bin/python3' `) {
				t.Errorf("%s: the interpreter is not quoted:\n%s", w.Name, text)
			}
		case "gmx":
			if !strings.Contains(text, `export GMX='/opt/gromacs/bin/gmx'`) {
				t.Errorf("%s: GMX is not set:\n%s", w.Name, text)
			}
		}
		if out, err := exec.Command("bash", "-n", job).CombinedOutput(); err != nil {
			t.Errorf("%s: bash -n: %v\n%s", w.Name, err, out)
		}
		for _, f := range w.Files {
			if _, err := os.Stat(filepath.Join(opt.Dir, filepath.Base(f))); err != nil {
				t.Errorf("%s: %v", w.Name, err)
			}
		}
	}
}

// Rendering again replaces its own files, but never a file of the user's.
func TestRenderNeverReplacesAUsersFile(t *testing.T) {
	w, _ := wulver(t).Workload("pytorch_mnist_simplecnn")
	dir := t.TempDir()
	opt := RenderOptions{Dir: dir, GPURequest: "--gres=gpu:a100:1"}
	job, err := w.Render(opt)
	if err != nil {
		t.Fatal(err)
	}
	opt.Synthetic = true
	if _, err := w.Render(opt); err != nil {
		t.Fatalf("rendering over its own files: %v", err)
	}
	if b, _ := os.ReadFile(job); !strings.Contains(string(b), "--synthetic") {
		t.Error("the second rendering did not replace the first")
	}
	mine := []byte("#!/bin/bash\necho my own train.py\n")
	if err := os.WriteFile(filepath.Join(dir, "vision_train.py"), mine, 0o644); err != nil {
		t.Fatal(err)
	}
	if _, err := w.Render(opt); err == nil || !strings.Contains(err.Error(), "vision_train.py exists") {
		t.Errorf("rendering over a user's file: %v", err)
	}
	if b, _ := os.ReadFile(filepath.Join(dir, "vision_train.py")); string(b) != string(mine) {
		t.Error("the user's file was changed")
	}
	if _, err := w.Render(RenderOptions{Dir: dir}); err == nil {
		t.Error("rendered without a GPU request")
	}
}

// A variant's title says which it is, so that its page is never taken for
// the real measurement's; the workload's own tag keeps the title.
func TestTitleForSaysTheVariant(t *testing.T) {
	w, ok := Find("pytorch_mnist_simplecnn@synthetic@quick")
	if !ok {
		t.Fatal("no pytorch_mnist_simplecnn")
	}
	for tag, want := range map[string]string{
		"pytorch_mnist_simplecnn":                 w.Title,
		"pytorch_mnist_simplecnn@synthetic":       w.Title + " (synthetic)",
		"pytorch_mnist_simplecnn@synthetic@quick": w.Title + " (synthetic, quick)",
	} {
		if got := w.TitleFor(tag); got != want {
			t.Errorf("TitleFor(%q) = %q, want %q", tag, got, want)
		}
	}
}

// A variant's page says how its runs differ from what the description says.
func TestDescriptionForSaysTheVariant(t *testing.T) {
	w, ok := Find("pytorch_mnist_simplecnn")
	if !ok {
		t.Fatal("no pytorch_mnist_simplecnn")
	}
	if got := w.DescriptionFor(w.Name); got != w.Description {
		t.Errorf("the workload itself: %q", got)
	}
	got := w.DescriptionFor(w.Name + "@synthetic@quick")
	if !strings.HasPrefix(got, w.Description) || !strings.Contains(got, "(--synthetic)") || !strings.Contains(got, "(--quick") {
		t.Errorf("synthetic and quick: %q", got)
	}
}
