//go:build !noreport

package main

import (
	"fmt"
	"os"
	"os/exec"
	"os/user"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// oodScript is examples/ondemand/script.sh.erb as OnDemand renders it for
// a session (its one tag, the app's own arguments, given a sample value),
// with the monitor's path set to monitor.
func oodScript(t *testing.T, monitor string) string {
	t.Helper()
	erb := filepath.Join(packageDir, "../../examples/ondemand/script.sh.erb")
	text := readFile(t, erb)
	rendered := strings.Replace(text, "<%= context.extra_jupyter_args %>", "--no-browser", 1)
	if strings.Contains(rendered, "<%") {
		t.Fatalf("%s has ERB tags other than the app's arguments", erb)
	}
	if ruby, err := exec.LookPath("ruby"); err == nil {
		// As OnDemand renders it: ERB, trim mode "-", in the app's context.
		out, err := exec.Command(ruby, "-rerb", "-e", `context = Struct.new(:extra_jupyter_args).new("--no-browser"); `+
			`print ERB.new(File.read(ARGV[0]), trim_mode: "-").result(binding)`, erb).Output()
		if err != nil || string(out) != rendered {
			t.Fatalf("ruby renders it otherwise: %v\n%s", err, out)
		}
	}
	const installed = "/opt/migadvisor/bin/migadvisor-monitor"
	if !strings.Contains(rendered, "migadvisor_monitor="+installed+" ") {
		t.Fatalf("%s sets no monitor path %s", erb, installed)
	}
	page := readFile(t, filepath.Join(packageDir, "../../docs/admin/open-ondemand.md"))
	if block := migadvisorBlock(text); block == "" || !strings.Contains(page, "```sh\n"+block+"\n```") {
		t.Fatalf("docs/admin/open-ondemand.md does not show %s's block as it is:\n%s", erb, block)
	}
	script := filepath.Join(t.TempDir(), "script.sh")
	os.WriteFile(script, []byte(strings.Replace(rendered, installed, monitor, 1)), 0o755)
	return script
}

// migadvisorBlock is the text from its begin line to its end line, "" for
// none.
func migadvisorBlock(text string) string {
	const begin, end = "# ---- migadvisor: begin ----", "# ---- migadvisor: end ----"
	b, e := strings.Index(text, begin), strings.Index(text, end)
	if b < 0 || e < b {
		return ""
	}
	return text[b : e+len(end)]
}

// runSession runs a rendered script.sh as Slurm runs an OnDemand session's
// job: in its session directory, stdout and stderr into output.log, the
// job's id set; "jupyter" is a stub that says how it was run and exits 3.
// It gives the exit status and output.log.
func runSession(t *testing.T, script, dir string, env ...string) (int, string) {
	t.Helper()
	stubs := t.TempDir()
	os.WriteFile(filepath.Join(stubs, "jupyter"), []byte("#!/bin/sh\necho \"app: jupyter $*\"\nexit 3\n"), 0o755)
	log, err := os.Create(filepath.Join(dir, "output.log"))
	if err != nil {
		t.Fatal(err)
	}
	defer log.Close()
	cmd := exec.Command("bash", script)
	cmd.Dir, cmd.Stdout, cmd.Stderr = dir, log, log
	cmd.Env = append(os.Environ(), append([]string{"HOME=" + dir, "CONFIG_FILE=" + filepath.Join(dir, "config.py"), "SLURM_JOB_ID=4242",
		"PATH=" + stubs + ":/usr/bin:/bin"}, env...)...)
	err = cmd.Run()
	code := 0
	if exit, ok := err.(*exec.ExitError); ok {
		code = exit.ExitCode()
	} else if err != nil {
		t.Fatal(err)
	}
	return code, readFile(t, log.Name())
}

// The Open OnDemand script.sh.erb fragment runs the app under the monitor:
// the app runs with its arguments and exit status, the monitor's line lands
// in output.log and its summary beside it, and a collect of the session
// from accounting takes the figure, which recommend --session shows. With
// no monitor, one that cannot run, or MIGADVISOR_DISABLE=1, the app runs as
// it did before, output.log holding its lines alone.
func TestOnDemandScriptRunsTheAppUnderTheMonitor(t *testing.T) {
	isolate(t)
	self, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	monitor := filepath.Join(t.TempDir(), "migadvisor-monitor")
	os.WriteFile(monitor, []byte(fmt.Sprintf("#!/bin/sh\n%s=2970 exec %s monitor \"$@\"\n", fakeMonitorEnv, self)), 0o755)
	dir := t.TempDir()
	code, log := runSession(t, oodScript(t, monitor), dir)
	app := "app: jupyter lab --config=" + filepath.Join(dir, "config.py") + " --no-browser\n"
	if code != 3 || !strings.Contains(log, app) || !strings.Contains(log, "MIGADVISOR_GPU peak_mib=2970 ") {
		t.Fatalf("under the monitor: exit %d, output.log:\n%s", code, log)
	}
	if _, err := os.Stat(filepath.Join(dir, "migadvisor-4242.json")); err != nil {
		t.Errorf("the monitor's summary: %v", err)
	}

	// The session, as accounting has it, collected by its user.
	me, err := user.Current()
	if err != nil {
		t.Fatal(err)
	}
	t.Setenv("MIGADVISOR_DB", filepath.Join(t.TempDir(), "history.db"))
	at := func(d time.Duration) string { return time.Now().Add(d).Format("2006-01-02T15:04:05") }
	dump := filepath.Join(t.TempDir(), "sacct.psv")
	os.WriteFile(dump, []byte("JobIDRaw|JobID|Cluster|User|State|ExitCode|Submit|Start|End|NNodes|AllocCPUS|ReqMem|AllocTRES|JobName|WorkDir|Partition\n"+
		"4242|4242|migdev|"+me.Username+"|COMPLETED|0:0|"+at(-2*time.Hour)+"|"+at(-2*time.Hour)+"|"+at(-time.Hour)+
		"|1|4|16G|cpu=4,gres/gpu:a100_10g=1,gres/gpu=1,mem=16G,node=1|sys/dashboard/sys/jupyter|"+dir+"|gpu\n"), 0o644)
	mustRunCLI(t, "collect", "--sacct-file", dump)
	if out := mustRunCLI(t, "recommend", "--session", "sys/dashboard/sys/jupyter"); !strings.Contains(out, "1g.10gb  COMPLETED  01:00:00  2.9 GiB (monitor)") {
		t.Errorf("recommend --session after collect:\n%s", out)
	}

	broken := filepath.Join(t.TempDir(), "migadvisor-monitor")
	os.WriteFile(broken, []byte("#!/bin/sh\necho 'cannot execute: Exec format error' >&2\nexit 126\n"), 0o755)
	for _, tc := range []struct {
		name, monitor string
		env           []string
	}{
		{"no migadvisor", "/nonexistent/migadvisor-monitor", nil},
		{"a monitor that cannot run here", broken, nil},
		{"disabled", monitor, []string{"MIGADVISOR_DISABLE=1"}},
	} {
		dir := t.TempDir()
		code, log := runSession(t, oodScript(t, tc.monitor), dir, tc.env...)
		app := "app: jupyter lab --config=" + filepath.Join(dir, "config.py") + " --no-browser\n"
		if code != 3 || !strings.Contains(log, app) || strings.Contains(log, "MIGADVISOR") || strings.Contains(log, "cannot execute") {
			t.Errorf("%s: exit %d, output.log:\n%s", tc.name, code, log)
		}
		if _, err := os.Stat(filepath.Join(dir, "migadvisor-4242.json")); err == nil {
			t.Errorf("%s: a summary was written", tc.name)
		}
	}
}
