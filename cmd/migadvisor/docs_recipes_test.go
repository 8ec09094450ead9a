package main

import (
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/migadvisor/migadvisor/advisor/base/history"
)

// docRecipe is the shell block of a page between its "<!-- name begin -->"
// and "<!-- name end -->" lines, as a reader copies it.
func docRecipe(t *testing.T, page, name string) string {
	t.Helper()
	text := readFile(t, filepath.Join(packageDir, "../..", page))
	_, rest, ok := strings.Cut(text, "<!-- "+name+" begin -->\n```sh\n")
	block, _, closed := strings.Cut(rest, "```\n<!-- "+name+" end -->")
	if !ok || !closed {
		t.Fatalf("%s has no sh block between <!-- %s begin --> and <!-- %s end -->", page, name, name)
	}
	return block
}

// asNobody runs cmd as the unprivileged nobody when the test runs as root,
// and makes dirs (and their parents, the test's temporary directories)
// reachable by it: what a user who is not root may do, the recipe must do.
func asNobody(t *testing.T, cmd *exec.Cmd, dirs ...string) {
	t.Helper()
	if os.Geteuid() != 0 {
		return
	}
	for _, d := range dirs {
		for p := d; p != os.TempDir() && p != "/" && strings.HasPrefix(p, os.TempDir()); p = filepath.Dir(p) {
			os.Chmod(p, 0o755)
		}
		filepath.Walk(d, func(path string, _ os.FileInfo, _ error) error { return os.Lchown(path, 65534, 65534) })
	}
	cmd.SysProcAttr = &syscall.SysProcAttr{Credential: &syscall.Credential{Uid: 65534, Gid: 65534}}
}

// The cli_filter's one-shell trial (docs/admin/wrapper.md), run as a user
// who is not root, each step bound to succeed: it copies slurm.conf and the
// files read beside it that the site has, never slurmdbd.conf (0600, the
// database's password, which the user cannot read and root must not copy
// into a home), adds the line, puts the filter beside it, and sbatch reads
// the copy.
func TestTryFilterRecipeCopiesNoSecrets(t *testing.T) {
	isolate(t)
	recipe := docRecipe(t, "docs/admin/wrapper.md", "try-filter")
	etc, home, prefix, stubs := t.TempDir(), t.TempDir(), t.TempDir(), t.TempDir()
	const conf = "ClusterName=migdev\nSlurmctldHost=ctl\n"
	for name, mode := range map[string]os.FileMode{"slurm.conf": 0o644, "gres.conf": 0o644, "cgroup.conf": 0o644, "slurmdbd.conf": 0o600} {
		text := conf
		if name == "slurmdbd.conf" {
			text = "StoragePass=secret\n"
		}
		if err := os.WriteFile(filepath.Join(etc, name), []byte(text), mode); err != nil {
			t.Fatal(err)
		}
	}
	os.MkdirAll(filepath.Join(prefix, "share", "migadvisor"), 0o755)
	os.WriteFile(filepath.Join(prefix, "share", "migadvisor", "cli_filter.lua"), []byte("-- migadvisor\n"), 0o644)
	seen := filepath.Join(stubs, "seen")
	os.WriteFile(filepath.Join(stubs, "sbatch"), []byte("#!/bin/sh\necho \"$* SLURM_CONF=$SLURM_CONF\" > "+seen+"\n"), 0o755)
	os.WriteFile(seen, nil, 0o666)
	os.Chmod(seen, 0o666)

	cmd := exec.Command("bash", "-e", "-c", strings.ReplaceAll(recipe, "/opt/migadvisor", prefix))
	cmd.Dir = home
	cmd.Env = append(os.Environ(), "HOME="+home, "SLURM_CONF="+filepath.Join(etc, "slurm.conf"), "PATH="+stubs+":"+os.Getenv("PATH"))
	asNobody(t, cmd, home)
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("the recipe: %v\n%s", err, out)
	}
	entries, _ := os.ReadDir(filepath.Join(home, "try-filter"))
	var copied []string
	for _, e := range entries {
		copied = append(copied, e.Name())
	}
	if want := []string{"cgroup.conf", "cli_filter.lua", "gres.conf", "slurm.conf"}; !slices.Equal(copied, want) {
		t.Errorf("~/try-filter holds %q, want %q", copied, want)
	}
	copy := filepath.Join(home, "try-filter", "slurm.conf")
	if got := readFile(t, copy); got != conf+"CliFilterPlugins=cli_filter/lua\n" {
		t.Errorf("the copy of slurm.conf:\n%s", got)
	}
	if got := readFile(t, seen); got != "--test-only job.sh SLURM_CONF="+copy+"\n" {
		t.Errorf("sbatch ran as %q", got)
	}
}

// The researcher's way to the wrapper from a make build checkout
// (docs/user/wrapper.md): bin/migadvisor-sbatch for one submission, then
// the shim linked into a directory put first on PATH; Slurm's sbatch (a
// fake) runs once for each, with the arguments given, and each is recorded.
func TestCheckoutShimRecipe(t *testing.T) {
	isolate(t)
	recipe := docRecipe(t, "docs/user/wrapper.md", "checkout-shim")
	checkout, home, slurmDir := t.TempDir(), t.TempDir(), t.TempDir()
	os.MkdirAll(filepath.Join(checkout, "scripts"), 0o755)
	os.MkdirAll(filepath.Join(checkout, "bin"), 0o755)
	shim, _ := os.ReadFile(filepath.Join(packageDir, "../../scripts/sbatch"))
	os.WriteFile(filepath.Join(checkout, "scripts", "sbatch"), shim, 0o755)
	if err := os.Symlink(sbatchBinary(t), filepath.Join(checkout, "bin", "migadvisor-sbatch")); err != nil {
		t.Fatal(err)
	}
	os.WriteFile(filepath.Join(checkout, "job.sh"), []byte("#!/bin/bash\n#SBATCH --gres=gpu:a100:1\n#SBATCH -t 10\npython train.py\n"), 0o644)
	t.Setenv("FAKESBATCH_ID", "91")
	sbatch := newFakeSbatch(t, slurmDir)
	db := filepath.Join(t.TempDir(), "history.db")

	cmd := exec.Command("bash", "-e", "-c", recipe+"command -v sbatch\n")
	cmd.Dir = checkout
	cmd.Env = append(os.Environ(), "HOME="+home, "MIGADVISOR_DB="+db, "PATH="+slurmDir+":"+os.Getenv("PATH"))
	out, err := cmd.Output()
	if want := "Submitted batch job 91\nSubmitted batch job 91\n" + filepath.Join(home, ".local/libexec/migadvisor/sbatch") + "\n"; err != nil || string(out) != want {
		t.Fatalf("the recipe: %v, output %q, want %q", err, out, want)
	}
	calls := sbatch.take(t)
	if len(calls) != 2 || !slices.Equal(calls[0].Args, []string{"job.sh"}) || !slices.Equal(calls[1].Args, []string{"job.sh"}) {
		t.Errorf("Slurm's sbatch got %+v", calls)
	}
	// Beside sbatch, the shim's record comes a moment after sbatch exits.
	var files []string
	for deadline := time.Now().Add(5 * time.Second); len(files) < 2 && time.Now().Before(deadline); time.Sleep(10 * time.Millisecond) {
		files, _ = history.SpoolFor(db).Pending()
	}
	if len(files) != 2 {
		t.Errorf("%d submissions recorded, want 2", len(files))
	}
}
