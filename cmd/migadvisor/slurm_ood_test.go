//go:build slurm

// Open OnDemand's form snippet and completed card (scripts/ood), installed
// as `make install` installs them and rendered with Ruby's erb as OnDemand
// renders them (ERB, trim mode "-", the form at Ruby's top level, then
// YAML.safe_load): from a real history of sessions on the dev cluster, and
// with migadvisor missing, too slow or saying something else.
package main

import (
	"bytes"
	"context"
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"reflect"
	"strconv"
	"strings"
	"testing"
	"time"
)

// oodSession is the Slurm job name of the example app's sessions.
const oodSession = "sys/dashboard/sys/jupyter"

// oodPlainForm is scripts/ood/form.yml.erb's example form as it is without
// the snippet: what it must render whenever migadvisor has no advice.
const oodPlainForm = `---
cluster: "cluster"
form:
  - bc_num_hours
  - gpu_slice
attributes:
  bc_num_hours:
    value: 2
  gpu_slice:
    widget: "select"
    label: "GPU"
    options:
      - ["1g.10gb: a seventh of an A100, 10 GB", "a100_10g"]
      - ["2g.20gb: two sevenths of an A100, 20 GB", "a100_20g"]
      - ["3g.40gb: three sevenths of an A100, 40 GB", "a100_40g"]
      - ["A whole A100, 80 GB", "a100"]
    help: "Smaller slices cost fewer SUs an hour, and start sooner."
`

// oodNeutralCard is what the completed card says without figures.
const oodNeutralCard = "_GPU use: migadvisor has no figures for this app's sessions._\n"

// oodInstall installs scripts/ood under a new prefix as `make install` does
// (@PREFIX@ filled in), with bin as PREFIX/bin/migadvisor unless it is "".
func oodInstall(t *testing.T, bin string) (prefix string) {
	t.Helper()
	prefix = t.TempDir()
	dir := filepath.Join(prefix, "share", "migadvisor", "ood")
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	for _, name := range []string{"form.yml.erb", "completed.md.erb"} {
		text := mustRead(t, filepath.Join(packageDir, "..", "..", "scripts", "ood", name))
		if err := os.WriteFile(filepath.Join(dir, name), []byte(strings.ReplaceAll(text, "@PREFIX@", prefix)), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	if bin != "" {
		if err := os.Mkdir(filepath.Join(prefix, "bin"), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.Symlink(bin, filepath.Join(prefix, "bin", "migadvisor")); err != nil {
			t.Fatal(err)
		}
	}
	return prefix
}

// ruby runs a Ruby program on stdin; a failure or a warning fails the test.
func ruby(t *testing.T, stdin string, args ...string) string {
	t.Helper()
	if _, err := exec.LookPath("ruby"); err != nil {
		t.Fatal("no ruby: scripts/dev-cluster.sh up installs Debian's ruby package (or apt-get install ruby)")
	}
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	cmd := exec.CommandContext(ctx, "ruby", append([]string{"-W1"}, args...)...)
	cmd.Stdin = strings.NewReader(stdin)
	var out, errOut bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errOut
	if err := cmd.Run(); err != nil || errOut.Len() > 0 {
		t.Fatalf("ruby %s: %v\n%s%s", strings.Join(args, " "), err, errOut.String(), out.String())
	}
	return out.String()
}

// renderOOD renders an installed template with OnDemand's ERB options, at
// Ruby's top level (as OnDemand renders a form), and how long it took.
func renderOOD(t *testing.T, prefix, name string) (string, time.Duration) {
	t.Helper()
	start := time.Now()
	out := ruby(t, "", "-rerb", "-e", `print ERB.new(File.read(ARGV[0]), trim_mode: "-").result`,
		filepath.Join(prefix, "share", "migadvisor", "ood", name))
	return out, time.Since(start)
}

// formYAML is the form as OnDemand reads it: YAML.safe_load.
func formYAML(t *testing.T, text string) map[string]any {
	t.Helper()
	var form map[string]any
	out := ruby(t, text, "-ryaml", "-rjson", "-e", "print JSON.generate(YAML.safe_load(STDIN.read))")
	if err := json.Unmarshal([]byte(out), &form); err != nil {
		t.Fatalf("form: %v\n%s", err, text)
	}
	return form
}

// gpuSlice is the form's GPU select attribute.
func gpuSlice(form map[string]any) map[string]any {
	attrs, _ := form["attributes"].(map[string]any)
	attr, _ := attrs["gpu_slice"].(map[string]any)
	return attr
}

// The history of a user's past Jupyter sessions on a whole A100 (jobstats
// saw 2.6 to 2.9 GiB in use), collected from the dev cluster's accounting:
// the installed form preselects 1g.10gb's option, adds recommend's help line
// to the attribute's help and makes it uncacheable, and the rest of the form
// is as written; the completed card says what the sessions used and what to
// pick next time. A history without such sessions leaves both as they are.
func TestSlurmOODFormAndCardFromPastSessions(t *testing.T) {
	slurmWorkDir(t)
	var ids []string
	for _, used := range []float64{2700, 2969.6, 2600} {
		out, err := exec.Command("sbatch", "--parsable", "-J", oodSession, "--gres=gpu:a100:1", "--mem=64M", "-t", "2",
			"--wrap", "sleep 4").Output()
		if err != nil {
			t.Fatal(err)
		}
		id := strings.TrimSpace(string(out))
		ids = append(ids, id)
		waitRunning(t, id)
		// What jobstats' slurmctld epilog writes at the job's end.
		update := exec.Command("scontrol", "update", "jobid="+id, "AdminComment="+jobstatsField(t, used, 81920, 20))
		if out, err := update.CombinedOutput(); err != nil {
			t.Fatalf("scontrol update %s: %v: %s", id, err, out)
		}
	}
	mustRun(t, append([]string{"wait", "--timeout", "1m"}, ids...)...)

	var advice struct {
		Sessions    int     `json:"sessions"`
		Peak        float64 `json:"peak_gpu_mem_mib"`
		Asked       string  `json:"asked"`
		Recommended string  `json:"recommended"`
		Help        string  `json:"help"`
	}
	text := mustRun(t, "recommend", "--session", oodSession, "--json")
	if err := json.Unmarshal([]byte(text), &advice); err != nil {
		t.Fatalf("recommend --session --json: %v\n%s", err, text)
	}
	if advice.Sessions != 3 || advice.Asked != "full" || advice.Recommended != "1g.10gb" || advice.Peak < 2969 || advice.Help == "" {
		t.Fatalf("recommend --session: %s", text)
	}

	prefix := oodInstall(t, migadvisorBinary(t))
	rendered, _ := renderOOD(t, prefix, "form.yml.erb")
	form := formYAML(t, rendered)
	attr := gpuSlice(form)
	wantHelp := "Smaller slices cost fewer SUs an hour, and start sooner.\n\n" + advice.Help
	if attr["value"] != "a100_10g" || attr["help"] != wantHelp || attr["cacheable"] != false {
		t.Errorf("gpu_slice: value %q, cacheable %v, help %q; want %q\n%s", attr["value"], attr["cacheable"], attr["help"], wantHelp, rendered)
	}
	plain := formYAML(t, oodPlainForm)
	for _, key := range []string{"value", "help", "cacheable"} {
		delete(attr, key)
		delete(gpuSlice(plain), key)
	}
	if !reflect.DeepEqual(form, plain) {
		t.Errorf("the rest of the form changed:\n%s", rendered)
	}

	card, _ := renderOOD(t, prefix, "completed.md.erb")
	want := "**GPU use:** your last 3 sessions of this app peaked at 2.9 GiB of GPU memory and asked for full"
	if !strings.HasPrefix(card, want) || !strings.Contains(card, "SU per hour held") ||
		!strings.Contains(card, "**Next time:** pick 1g.10gb (") {
		t.Errorf("completed card:\n%s", card)
	}

	// Another history, without these sessions: nothing to advise.
	t.Setenv("MIGADVISOR_DB", filepath.Join(t.TempDir(), "history.db"))
	if rendered, _ := renderOOD(t, prefix, "form.yml.erb"); !reflect.DeepEqual(formYAML(t, rendered), formYAML(t, oodPlainForm)) {
		t.Errorf("no sessions: the form changed:\n%s", rendered)
	}
	if card, _ := renderOOD(t, prefix, "completed.md.erb"); card != oodNeutralCard {
		t.Errorf("no sessions: completed card %q", card)
	}
}

// waitRunning waits until Slurm runs job id (at most 30 s).
func waitRunning(t *testing.T, id string) {
	t.Helper()
	for deadline := time.Now().Add(30 * time.Second); time.Now().Before(deadline); time.Sleep(200 * time.Millisecond) {
		state, _ := exec.Command("squeue", "-h", "-j", id, "-o", "%T").Output()
		if strings.TrimSpace(string(state)) == "RUNNING" {
			return
		}
	}
	t.Fatalf("job %s did not start in 30 s", id)
}

// oodAdvice is recommend --session --json as item 2 of issue 35 prints it,
// for the stand-ins below.
const oodAdvice = `{"session": "sys/dashboard/sys/jupyter", "sessions": 5, "with_memory": 5, "peak_gpu_mem_mib": 2969.6,
 "need": "≤ 2.9 GiB", "asked": "full", "asked_su_per_hour": 16, "recommended": "1g.10gb", "gres": "gpu:a100_10g:1",
 "su_per_hour": 2, "help": "your last 5 sessions peaked at 2.9 GiB: 1g.10gb is enough, 2 SU/h instead of 16", "why": "",
 "profiles": [{"profile": "1g.10gb", "oom_risk": "low", "su_per_hour": 2}]}`

// standIn is a shell script in place of migadvisor.
func standIn(t *testing.T, body string) string {
	t.Helper()
	return writeScript(t, t.TempDir(), "migadvisor", "#!/bin/sh\n"+body)
}

// Whatever goes wrong, the form is as it would be without the snippet:
// migadvisor missing, slower than the 2 s deadline (it is killed, with what
// it started), failing, or answering with something other than its advice,
// or advice the form cannot act on (a profile it does not offer, no slice,
// no help line). The completed card says one neutral line where there are no
// figures, and the figures where there are. The stand-in answering as it
// should (to the arguments it should be given) proves each case could have
// changed the form.
func TestSlurmOODFailuresLeaveTheFormAsItWas(t *testing.T) {
	isolate(t)
	plain := formYAML(t, oodPlainForm)
	answer := func(json string) string { return "cat <<'EOF'\n" + json + "\nEOF\n" }
	recommending := func(profile string) string {
		return answer(strings.Replace(oodAdvice, `"recommended": "1g.10gb"`, `"recommended": "`+profile+`"`, 1))
	}
	pidFile := filepath.Join(t.TempDir(), "pid")
	for _, c := range []struct {
		name, bin string
		card      string // what the card says; "": the neutral line
	}{
		{"missing", "", ""},
		{"too slow", standIn(t, "echo $$ >"+pidFile+"\nsleep 30 &\nsleep 30\n"+answer(oodAdvice)), ""},
		{"fails", standIn(t, answer(oodAdvice)+"exit 1\n"), ""},
		{"killed", standIn(t, answer(oodAdvice)+"kill -9 $$\n"), ""},
		{"no JSON", standIn(t, "echo 'recommend: flag provided but not defined: -session'\n"), ""},
		{"truncated", standIn(t, answer(oodAdvice[:100])), ""},
		{"a list", standIn(t, answer("["+oodAdvice+"]")), ""},
		{"unoffered profile", standIn(t, recommending("7g.80gb")), "**Next time:** pick 7g.80gb (2 SU per hour held)."},
		{"nothing recommended", standIn(t, recommending("")), "**Next time:** no slice to advise yet."},
		{"no help", standIn(t, answer(strings.Replace(oodAdvice, `"help": "your`, `"helps": "your`, 1))), "pick 1g.10gb"},
	} {
		prefix := oodInstall(t, c.bin)
		rendered, took := renderOOD(t, prefix, "form.yml.erb")
		if got := formYAML(t, rendered); !reflect.DeepEqual(got, plain) {
			t.Errorf("%s: the form changed:\n%s", c.name, rendered)
		}
		if took > 5*time.Second {
			t.Errorf("%s: the form took %v", c.name, took)
		}
		if c.name == "too slow" {
			checkGroupGone(t, pidFile)
		}
		card, _ := renderOOD(t, prefix, "completed.md.erb")
		if c.card == "" && card != oodNeutralCard || c.card != "" && !strings.Contains(card, c.card) {
			t.Errorf("%s: completed card %q", c.name, card)
		}
	}

	prefix := oodInstall(t, standIn(t, `[ "$*" = "recommend --session `+oodSession+` --json" ] || exit 2`+"\n"+answer(oodAdvice)))
	rendered, _ := renderOOD(t, prefix, "form.yml.erb")
	if attr := gpuSlice(formYAML(t, rendered)); attr["value"] != "a100_10g" || attr["cacheable"] != false {
		t.Errorf("the stand-in's advice is not in the form:\n%s", rendered)
	}
	card, _ := renderOOD(t, prefix, "completed.md.erb")
	want := "**GPU use:** your last 5 sessions of this app peaked at 2.9 GiB of GPU memory and asked for full, 16 SU per hour held.\n\n" +
		"**Next time:** pick 1g.10gb (2 SU per hour held).\n"
	if card != want {
		t.Errorf("completed card %q, want %q", card, want)
	}
}

// checkGroupGone: the stand-in that wrote its pid to pidFile (its process
// group's id: the snippets start it in a group of its own) is gone, with
// what it started; zombies waiting for init count as gone.
func checkGroupGone(t *testing.T, pidFile string) {
	t.Helper()
	pgid := strings.TrimSpace(mustRead(t, pidFile))
	if _, err := strconv.Atoi(pgid); err != nil {
		t.Fatalf("pid file: %q", pgid)
	}
	os.Remove(pidFile)
	var left []string
	for deadline := time.Now().Add(2 * time.Second); time.Now().Before(deadline); time.Sleep(50 * time.Millisecond) {
		left = left[:0]
		stats, _ := filepath.Glob("/proc/[0-9]*/stat")
		for _, path := range stats {
			b, err := os.ReadFile(path)
			if err != nil {
				continue
			}
			// pid (comm) state ppid pgrp ...: comm may hold spaces.
			fields := strings.Fields(string(b[bytes.LastIndexByte(b, ')')+1:]))
			if len(fields) > 2 && fields[2] == pgid && fields[0] != "Z" {
				left = append(left, string(b))
			}
		}
		if len(left) == 0 {
			return
		}
	}
	t.Errorf("left behind by the slow stand-in: %q", left)
}

// The completed card of a session is kept for 10 minutes in the session's
// directory (OnDemand re-renders the cards every few seconds): rendered as
// OnDemand renders it, in a session's binding with its staged_root, a
// second render asks no migadvisor, and one 10 minutes later asks again.
func TestSlurmOODCardKept(t *testing.T) {
	isolate(t)
	staged := t.TempDir()
	bin := filepath.Join(t.TempDir(), "migadvisor")
	prefix := oodInstall(t, bin)
	card := func() string {
		return ruby(t, "", "-rerb", "-rpathname", "-e", `session = Struct.new(:staged_root).new(Pathname.new(ARGV[1]))
print ERB.new(File.read(ARGV[0]), trim_mode: "-").result(session.instance_eval { binding })`,
			filepath.Join(prefix, "share", "migadvisor", "ood", "completed.md.erb"), staged)
	}
	writeScript(t, filepath.Dir(bin), "migadvisor", "#!/bin/sh\ncat <<'EOF'\n"+oodAdvice+"\nEOF\n")
	first := card()
	if !strings.HasPrefix(first, "**GPU use:**") {
		t.Fatalf("completed card %q", first)
	}
	os.Remove(bin)
	if again := card(); again != first {
		t.Errorf("kept: %q, then %q", first, again)
	}
	kept := filepath.Join(staged, "migadvisor-card.md")
	old := time.Now().Add(-11 * time.Minute)
	if err := os.Chtimes(kept, old, old); err != nil {
		t.Fatal(err)
	}
	if later := card(); later != oodNeutralCard {
		t.Errorf("10 minutes later, with migadvisor gone: %q", later)
	}
	if entries, _ := os.ReadDir(staged); len(entries) != 1 {
		t.Errorf("the session's directory holds %d files", len(entries))
	}
}

// Strings from migadvisor reach the form only as YAML strings, Markdown- and
// HTML-escaped (OnDemand renders help as Markdown), on one line; and the
// card escapes them too.
func TestSlurmOODQuoting(t *testing.T) {
	isolate(t)
	hostile := `x\"\n  value: evil\n<script>alert(1)</script> *b* [l](javascript:x) # {c}: d\u2028e\u0085f`
	advice := strings.Replace(oodAdvice, `"help": "your last 5 sessions peaked at 2.9 GiB: 1g.10gb is enough, 2 SU/h instead of 16"`,
		`"help": "`+hostile+`"`, 1)
	advice = strings.Replace(advice, `"asked": "full"`, `"asked": "<i>full</i>"`, 1)
	prefix := oodInstall(t, standIn(t, "cat <<'EOF'\n"+advice+"\nEOF\n"))
	rendered, _ := renderOOD(t, prefix, "form.yml.erb")
	attr := gpuSlice(formYAML(t, rendered))
	wantHelp := "Smaller slices cost fewer SUs an hour, and start sooner.\n\n" +
		`x&quot; value: evil &lt;script&gt;alert\(1\)&lt;/script&gt; \*b\* \[l\]\(javascript:x\) \# \{c\}: d e f`
	if attr["value"] != "a100_10g" || attr["help"] != wantHelp || attr["cacheable"] != false || len(attr) != 6 {
		t.Errorf("gpu_slice: %q\nwant help %q\n%s", attr, wantHelp, rendered)
	}
	card, _ := renderOOD(t, prefix, "completed.md.erb")
	if !strings.Contains(card, "asked for &lt;i&gt;full&lt;/i&gt;, 16 SU per hour held.") || strings.Contains(card, "<") {
		t.Errorf("completed card:\n%s", card)
	}
}
