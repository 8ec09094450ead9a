package wrapper

import (
	"os"
	"reflect"
	"strings"
	"testing"

	"github.com/migadvisor/migadvisor/advisor/base/history"
	"github.com/migadvisor/migadvisor/slurm"
)

// Beside sbatch the job may be queued before the advice is printed: the
// advice is for the next submission (a resubmission runs the job twice,
// paid twice), and never offers to cancel a job whose id this process
// never sees. In sbatch's place, not applied, the advice is the same
// sentence, and once sbatch printed the id, cancelling that job is offered.
func TestAdviceAfterTheFactIsForNextTime(t *testing.T) {
	f := newFixture(t)
	f.withJob2(t, f.script(t, "job.sh", fullA100))
	f.beside = true
	f.run("job.sh")
	beside := f.stderr.String()
	if !adviceLine.MatchString(beside) || strings.Count(beside, "\n") != 1 {
		t.Fatalf("beside sbatch: %q", beside)
	}
	for _, word := range []string{"resubmit", "cancel", "again"} {
		if strings.Contains(strings.ToLower(beside), word) {
			t.Errorf("beside sbatch, the advice says %q: %q", word, beside)
		}
	}
	f.beside = false
	for _, tc := range []struct{ out, cancel string }{
		{"Submitted batch job 4242\n", "(scancel 4242)"},
		{"4242;migdev\n", "(scancel -M migdev 4242)"},
		{"", ""}, // no id printed: nothing to cancel
	} {
		f.sbatch.out = tc.out
		f.run("job.sh")
		lines := strings.SplitAfter(f.stderr.String(), "\n")
		if lines[0] != beside {
			t.Errorf("sbatch printed %q: the advice %q, not as beside sbatch %q", tc.out, lines[0], beside)
		}
		cancel := strings.Join(lines[1:], "")
		if tc.cancel == "" && cancel != "" || tc.cancel != "" && (!strings.Contains(cancel, tc.cancel) ||
			!strings.HasSuffix(cancel, "--gres=gpu:a100_10g:1.\n") || strings.Count(cancel, "\n") != 1) {
			t.Errorf("sbatch printed %q: then %q, want one line with %q", tc.out, cancel, tc.cancel)
		}
	}
	// Applied, the job is the changed one: nothing to cancel.
	f.sbatch.out = "Submitted batch job 4242\n"
	f.run("--mig-apply", "job.sh")
	if strings.Contains(f.stderr.String(), "cancel") || strings.Contains(f.stderr.String(), "Next time") {
		t.Errorf("applied: %q", f.stderr.String())
	}
}

// Beside sbatch this process never learns whether sbatch made the job: a
// record it cannot write does not say the job is submitted.
func TestRecordFailureBesideSbatchClaimsNoJob(t *testing.T) {
	f := newFixture(t)
	f.script(t, "job.sh", fullA100)
	if err := os.WriteFile(history.SpoolFor(f.db).Dir, nil, 0o644); err != nil { // the spool cannot be made
		t.Fatal(err)
	}
	f.beside = true
	f.run("job.sh")
	if errOut := f.stderr.String(); strings.Count(errOut, "\n") != 1 || !strings.Contains(errOut, "not in the history") ||
		strings.Contains(errOut, "submitted") {
		t.Errorf("beside sbatch: %q", errOut)
	}
}

// Asked to apply the advice to a job with no script file (its script on
// stdin, or --wrap), the wrapper cannot read or change it: it says so in
// one line, with what to do, and submits it unchanged, with the same input.
// Quiet, or asked for nothing, or making no job: nothing said.
func TestApplyingWithoutAScriptFileSaysSo(t *testing.T) {
	f := newFixture(t)
	f.withJob2(t, f.script(t, "job.sh", fullA100))
	f.stdin = strings.NewReader(fullA100)
	for _, tc := range []struct {
		name, quiet, apply string
		args               []string
		want               []string // words of the one line; nil: no line
	}{
		{"stdin, MIGADVISOR_APPLY=1", "", "1", []string{"-J", "x"}, []string{"standard input", "unchanged", "as a file"}},
		{"stdin, --mig-apply", "", "", []string{"--mig-apply", "-p", "gpu"}, []string{"standard input", "unchanged", "as a file"}},
		{"--wrap", "", "1", []string{"--wrap", "python train.py"}, []string{"--wrap", "unchanged", "script file"}},
		{"quiet", "1", "1", []string{"-J", "x"}, nil},
		{"not applied", "", "", []string{"-J", "x"}, nil},
		{"no job", "", "1", []string{"--test-only"}, nil},
	} {
		t.Run(tc.name, func(t *testing.T) {
			f.env = []string{"PATH=/usr/bin", EnvApply + "=" + tc.apply, EnvQuiet + "=" + tc.quiet}
			code := f.run(tc.args...)
			c := f.sbatch.submitted(t)
			want := tc.args
			if tc.args[0] == ApplyFlag {
				want = tc.args[1:]
			}
			if code != 0 || !reflect.DeepEqual(c.Args, want) || c.Stdin != f.stdin {
				t.Errorf("exit %d; sbatch got %q (stdin passed: %v), want %q", code, c.Args, c.Stdin == f.stdin, want)
			}
			errOut := f.stderr.String()
			if tc.want == nil {
				if errOut != "" {
					t.Errorf("stderr %q, want nothing", errOut)
				}
				return
			}
			if strings.Count(errOut, "\n") != 1 || !strings.HasPrefix(errOut, "migadvisor: ") {
				t.Errorf("stderr %q, want one line", errOut)
			}
			for _, w := range tc.want {
				if !strings.Contains(errOut, w) {
					t.Errorf("stderr %q does not say %q", errOut, w)
				}
			}
		})
	}
}

// A probe's variant submitted through the shim (its sbatch is the user's)
// is the probe's measurement: no advice (applied, it would move the
// measurement to another profile) and no record of the wrapper's, which
// collect would wait for (seen: "4 submissions through the sbatch wrapper
// not in Slurm's accounting yet" after a probe) or link as a run of the
// user's own; the probe records its jobs, as its sweep's.
func TestAProbesVariantIsLeftAlone(t *testing.T) {
	f := newFixture(t)
	f.withJob2(t, f.script(t, "job.sh", fullA100))
	variant, err := slurm.MonitorWrap{Binary: "/opt/migadvisor/bin/migadvisor"}.Wrap("job.sh", []byte(fullA100))
	if err != nil {
		t.Fatal(err)
	}
	f.script(t, "full.sh", string(variant))
	for _, beside := range []bool{true, false} {
		f.beside = beside
		f.setenv(EnvApply, map[bool]string{true: "", false: "1"}[beside])
		f.run("--parsable", "full.sh")
		if f.stderr.String() != "" || len(f.spooled(t)) != 0 {
			t.Errorf("beside %v: stderr %q, recorded %+v", beside, f.stderr.String(), f.spooled(t))
		}
		if !beside && !reflect.DeepEqual(f.sbatch.submitted(t).Args, []string{"--parsable", "full.sh"}) {
			t.Errorf("applied to a probe's variant: sbatch got %q", f.sbatch.submitted(t).Args)
		}
	}
}
