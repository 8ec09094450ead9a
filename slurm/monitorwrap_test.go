package slurm

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

const wrapScript = `#!/bin/bash -l
#SBATCH --gres=gpu:a100_10g:1
#SBATCH --time=00:05:00
# a comment before the work

set -eu
echo "args: $*"
echo "monitored=${MIGADVISOR_MONITORED:-no}"
exit 4
`

func TestMonitorWrapKeepsTheUsersLines(t *testing.T) {
	data, err := MonitorWrap{Binary: "/opt/mig advisor/bin/migadvisor"}.Wrap("job.sh", []byte(wrapScript))
	if err != nil {
		t.Fatal(err)
	}
	var kept []string
	for _, l := range strings.SplitAfter(string(data), "\n") {
		if !strings.HasSuffix(strings.TrimRight(l, "\n"), AutoMarker) {
			kept = append(kept, l)
		}
	}
	if strings.Join(kept, "") != wrapScript {
		t.Errorf("without the added lines the script is not the user's:\n%s", strings.Join(kept, ""))
	}
	orig, wrapped := Parse("job.sh", []byte(wrapScript)), Parse("job.sh", data)
	if orig.Fingerprint() != wrapped.Fingerprint() {
		t.Error("the wrapper changed the fingerprint")
	}
	if len(wrapped.Options) != 2 || len(wrapped.Problems) != 0 {
		t.Errorf("directives after wrapping: %+v %+v", wrapped.Options, wrapped.Problems)
	}
	if i, j := strings.Index(string(data), "MIGADVISOR_MONITORED:-}\" ]; then"), strings.Index(string(data), "set -eu"); i < 0 || i > j {
		t.Error("the block must come before the first command")
	}
	if !strings.Contains(string(data), `monitor -- '/bin/bash' '-l' "$0" "$@"`) {
		t.Errorf("the script must rerun with its own interpreter and argument:\n%s", data)
	}
}

// Run the wrapped script for real, with a stand-in for migadvisor that
// records how it was called and runs the command as the monitor would.
func TestMonitorWrapRunsUnderTheMonitor(t *testing.T) {
	dir := t.TempDir()
	log := filepath.Join(dir, "calls")
	fake := filepath.Join(dir, "it's migadvisor") // a quote in the path
	stub := "#!/bin/sh\necho \"$*\" >> " + ShellQuote(log) + "\n[ \"$1\" = monitor ] && [ \"$2\" = -- ] || exit 99\nshift 2\nMIGADVISOR_MONITORED=1 exec \"$@\"\n"
	if err := os.WriteFile(fake, []byte(stub), 0o755); err != nil {
		t.Fatal(err)
	}
	script := strings.Replace(wrapScript, "#!/bin/bash -l", "#!/bin/sh", 1)
	for _, c := range []struct {
		name, binary, wantMonitored string
		wantCalls                   int
	}{
		{"monitor present", fake, "monitored=1", 1},
		{"monitor gone", filepath.Join(dir, "missing"), "monitored=no", 0},
	} {
		os.Remove(log)
		data, err := MonitorWrap{Binary: c.binary}.Wrap("job.sh", []byte(script))
		if err != nil {
			t.Fatal(err)
		}
		job := filepath.Join(dir, "job.sh")
		os.WriteFile(job, data, 0o755)
		cmd := exec.Command(job, "a b", "c")
		cmd.Env = append(os.Environ(), "PATH=/usr/bin:/bin") // no migadvisor on PATH
		out, err := cmd.CombinedOutput()
		if ee, ok := err.(*exec.ExitError); !ok || ee.ExitCode() != 4 {
			t.Fatalf("%s: exit %v, want the script's 4; output %s", c.name, err, out)
		}
		if want := "args: a b c\n" + c.wantMonitored + "\n"; string(out) != want {
			t.Errorf("%s: output %q, want %q (the body once, with its arguments)", c.name, out, want)
		}
		calls, _ := os.ReadFile(log)
		if n := strings.Count(string(calls), "\n"); n != c.wantCalls {
			t.Errorf("%s: migadvisor called %d times: %q", c.name, n, calls)
		}
	}
}

// An emulation job on a node with no migadvisor runs its body once, and
// its output says it was not emulated (seen: the probe's one job counted
// as a plain run on the whole GPU, with nothing saying why).
func TestEmulateWrapWithoutMigadvisorRunsOnceAndSaysSo(t *testing.T) {
	dir := t.TempDir()
	script := strings.Replace(wrapScript, "#!/bin/bash -l", "#!/bin/sh", 1)
	data, err := EmulateWrap{Binary: filepath.Join(dir, "missing")}.Wrap("job.sh", []byte(script))
	if err != nil {
		t.Fatal(err)
	}
	job := filepath.Join(dir, "job.sh")
	if err := os.WriteFile(job, data, 0o755); err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command(job, "x")
	cmd.Env = append(os.Environ(), "PATH=/usr/bin:/bin") // no migadvisor on PATH
	var stdout, stderr strings.Builder
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	if err := cmd.Run(); err == nil || cmd.ProcessState.ExitCode() != 4 {
		t.Fatalf("exit %v, want the script's 4; stderr %s", err, stderr.String())
	}
	if stdout.String() != "args: x\nmonitored=no\n" {
		t.Errorf("stdout %q, want the body once", stdout.String())
	}
	if !strings.Contains(stderr.String(), "the job runs once, not emulated") {
		t.Errorf("stderr %q does not say the job was not emulated", stderr.String())
	}
}

func TestMonitorWrapRefuses(t *testing.T) {
	for _, c := range []struct{ script, want string }{
		{"#!/usr/bin/env python3\n#SBATCH -t 5\nprint(1)\n", "not a POSIX shell"},
		{"#!/bin/csh\necho hi\n", "not a POSIX shell"},
		{"#SBATCH -t 5\necho hi\n", "no #! line"},
		{"#!/bin/bash\n#SBATCH -t 5\n", "no command"},
	} {
		if _, err := (MonitorWrap{}).Wrap("job.sh", []byte(c.script)); err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%q: err %v, want %q", c.script, err, c.want)
		}
	}
}

func TestInterpreterShell(t *testing.T) {
	for line, want := range map[string]string{
		"#!/bin/bash":               "bash",
		"#!/bin/bash -l":            "bash",
		"#!/usr/bin/env bash":       "bash",
		"#!/usr/bin/env -S bash -l": "bash",
		"#! /bin/sh\r":              "sh",
		"#!/usr/bin/env python3":    "",
		"#!/usr/bin/zsh":            "zsh",
		"#!/bin/tcsh":               "",
	} {
		in, ok := ReadInterpreter([]byte(line + "\necho\n"))
		if !ok || in.Shell() != want {
			t.Errorf("%q: %+v shell %q, want %q", line, in, in.Shell(), want)
		}
	}
}

func TestMonitorWrapKeepsCRLF(t *testing.T) {
	data, err := MonitorWrap{}.Wrap("job.sh", []byte("#!/bin/sh\r\n#SBATCH -t 5\r\necho hi\r\n"))
	if err != nil {
		t.Fatal(err)
	}
	if strings.Count(string(data), "\n") != strings.Count(string(data), "\r\n") {
		t.Errorf("mixed line ends:\n%q", data)
	}
}

func TestShellWordRoundTripsThroughSh(t *testing.T) {
	for in, bare := range map[string]bool{"job.sh": true, "runs/v1/job-2g.20gb.sh": true, "my job.sh": false,
		"it's.sh": false, "$(rm -rf ~).sh": false, "`id`": false, "": false, "ünïcode.sh": false, "a;b": false} {
		w := ShellWord(in)
		if (w == in) != bare {
			t.Errorf("ShellWord(%q) = %s", in, w)
		}
		out, err := exec.Command("sh", "-c", "printf %s "+w).Output()
		if err != nil || string(out) != in {
			t.Errorf("sh read %s back as %q (%v)", w, out, err)
		}
	}
}
