package advisor

import (
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/migadvisor/migadvisor/catalog/catalogtest"
	"github.com/migadvisor/migadvisor/slurm"
)

// change writes the decision into the script, and what it saves: the
// lines that ask for the profile chosen, none where the script asks for it
// already, the --time and --mem to fix before a run where nothing is
// chosen; why the advice leaves the profile asked for when it saves nothing.
func TestChangeFromTheDecision(t *testing.T) {
	site := catalogtest.Wulver(t)
	asked := judged("full", 81203, 600, 2.83)
	asked.Partition = "gpu"
	unsafe := asked
	unsafe.Eligible, unsafe.Reason = false, "high OOM risk: ran out of GPU memory here"
	small := judged("1g.10gb", 9728, 1200, 1)
	small.Partition = "gpu"
	dear := judged("2g.20gb", 19968, 1000, 3.5)
	dear.Partition = "gpu"
	for _, c := range []struct {
		name     string
		noSource bool
		opt      Options
		profiles []ProfileAdvice
		d        decision
		mem      string
		lines    []string // the new lines; nil: no change
		saved    string   // SU saved a run; "": none said
		because  string
	}{
		{name: "no script to change", noSource: true, profiles: []ProfileAdvice{small, asked}, d: decision{choice: "1g.10gb"}},
		{name: "a smaller slice", profiles: []ProfileAdvice{small, asked}, d: decision{choice: "1g.10gb"},
			lines: []string{"#SBATCH --gres=gpu:a100_10g:1"}, saved: "1.83"},
		{name: "the profile asked for", profiles: []ProfileAdvice{small, asked}, d: decision{choice: "full"}, lines: []string{}},
		{name: "a bigger one, as the one asked for is not safe", profiles: []ProfileAdvice{dear, unsafe}, d: decision{choice: "2g.20gb"},
			lines: []string{"#SBATCH --gres=gpu:a100_20g:1"}, saved: "-0.67", because: "full is not advised: high OOM risk: ran out of GPU memory here"},
		{name: "the objective is time", opt: Options{Objective: ObjectiveTime}, profiles: []ProfileAdvice{dear, asked}, d: decision{choice: "2g.20gb"},
			lines: []string{"#SBATCH --gres=gpu:a100_20g:1"}, saved: "-0.67", because: "the objective is the shortest runtime"},
		{name: "with --mem after a host OOM", profiles: []ProfileAdvice{small, asked}, d: decision{choice: "1g.10gb"}, mem: "8G",
			lines: []string{"#SBATCH --gres=gpu:a100_10g:1", "#SBATCH --mem=8G"}, saved: "1.83"},
		{name: "nothing chosen, --time to fix", profiles: []ProfileAdvice{small, asked}, d: decision{timeLimit: "02:00:00"},
			lines: []string{"#SBATCH --time=02:00:00"}},
		{name: "nothing chosen, nothing to fix", profiles: []ProfileAdvice{small, asked}, d: decision{}},
	} {
		t.Run(c.name, func(t *testing.T) {
			s := slurm.Parse("job.sh", []byte(script+"python train.py\n"))
			job := Job{Script: "job.sh", Resources: s.Resources, Source: s}
			if c.noSource {
				job.Source = nil
			}
			base, err := site.JobFor(job.Resources)
			if err != nil {
				t.Fatal(err)
			}
			ev := evidence{base: base, host: hostAdvice{mem: c.mem}}
			ch, note := change(site, ev, job, c.opt.withDefaults(site), c.profiles, c.d)
			if note != "" {
				t.Fatalf("note %q", note)
			}
			if c.lines == nil {
				if ch != nil {
					t.Errorf("change %+v, want none", ch)
				}
				return
			}
			if ch == nil {
				t.Fatal("no change")
			}
			var lines []string
			for _, l := range ch.Lines {
				lines = append(lines, l.New)
			}
			saved := ""
			if ch.SUPerRun != nil {
				saved = fmt.Sprint(*ch.SUPerRun)
			}
			if strings.Join(lines, "\n") != strings.Join(c.lines, "\n") || saved != c.saved || ch.Because != c.because || ch.Asks != "full" || ch.To != c.d.choice {
				t.Errorf("change to %q from %q: lines %q, saves %s (%s); want %q, %s (%s)", ch.To, ch.Asks, lines, saved, ch.Because, c.lines, c.saved, c.because)
			}
		})
	}
}

// The runs in the last 30 days are the user's own, not a probe's, up to
// the job's now (else its newest run).
func TestRunsInLastMonth(t *testing.T) {
	now := time.Date(2026, 11, 20, 0, 0, 0, 0, time.UTC)
	at := func(days int, user string, swept bool) Run {
		r := newRun("full", 60)
		r.Submitted, r.User, r.Swept = now.AddDate(0, 0, -days), user, swept
		return r
	}
	runs := []Run{at(1, "alice", false), at(2, "bob", false), at(29, "alice", false), at(31, "alice", false), at(0, "alice", true)}
	for _, c := range []struct {
		name  string
		job   Job
		basis string
		want  int
	}{
		{"the user's", Job{User: "alice", Now: now}, BasisMeasured, 2},
		{"everyone's", Job{Now: now}, BasisMeasured, 3},
		{"to the newest run", Job{User: "alice"}, BasisMeasured, 2},
		{"a prior's", Job{User: "alice", Now: now}, BasisPrior, 0},
	} {
		if got := runsInLastMonth(&evidence{runs: runs, basis: c.basis}, c.job); got != c.want {
			t.Errorf("%s: %d runs, want %d", c.name, got, c.want)
		}
	}
}
