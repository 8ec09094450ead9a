package advisor

import (
	"strings"
	"testing"

	"github.com/migadvisor/migadvisor/advisor/base/outcome"
	"github.com/migadvisor/migadvisor/catalog"
	"github.com/migadvisor/migadvisor/catalog/catalogtest"
	"github.com/migadvisor/migadvisor/slurm"
)

// selectRuns keeps the runs that speak for the job: on its number of
// GPUs, this version's once it has runs that ran, measured ones before
// emulated ones; and says what it left out.
func TestSelectRuns(t *testing.T) {
	site := catalogtest.Wulver(t)
	cancelled := newRun("full", 0).id("c")
	cancelled.Completed, cancelled.State = false, "CANCELLED"
	for _, c := range []struct {
		name    string
		runs    []Run
		use     *GPUUse
		kept    []string // the runs' ids
		earlier int
		note    string // the start of the only note; "": none
	}{
		{name: "all", runs: []Run{newRun("full", 600).id("a"), newRun("1g.10gb", 900).id("b")}, kept: []string{"a", "b"}},
		{name: "another number of GPUs", runs: []Run{onTwo(newRun("full", 600).id("a")), newRun("full", 900).id("b")}, kept: []string{"b"},
			note: "1 run on another number of GPUs than this job's 1 left out"},
		{name: "a 2-GPU job's own", use: &GPUUse{GPUs: 2}, runs: []Run{onTwo(newRun("full", 600).id("a")), newRun("full", 900).id("b")}, kept: []string{"a"},
			note: "1 run on another number of GPUs than this job's 2 left out"},
		{name: "this version's own", runs: []Run{newRun("full", 600).earlier().id("a"), newRun("full", 900).id("b")}, kept: []string{"b"},
			note: "1 run of an earlier version left out"},
		{name: "an earlier version while this one has none that ran", runs: []Run{newRun("full", 600).earlier().id("a"), cancelled},
			kept: []string{"a", "c"}, earlier: 1},
		{name: "measured before emulated", runs: []Run{newRun("2g.20gb", 300).emulatedOn("NVIDIA H100 80GB HBM3").id("e"), newRun("2g.20gb", 400).id("m")},
			kept: []string{"m"}},
	} {
		t.Run(c.name, func(t *testing.T) {
			sel := selectRuns(site, Job{Script: "job.sh", Runs: c.runs}, c.use)
			var kept []string
			for _, r := range sel.runs {
				kept = append(kept, r.JobID)
			}
			if strings.Join(kept, ",") != strings.Join(c.kept, ",") || sel.earlier() != c.earlier {
				t.Errorf("kept %v (%d earlier), want %v (%d)", kept, sel.earlier(), c.kept, c.earlier)
			}
			if (c.note == "") != (len(sel.notes) == 0) || c.note != "" && (len(sel.notes) != 1 || !strings.HasPrefix(sel.notes[0], c.note)) {
				t.Errorf("notes %q, want %q…", sel.notes, c.note)
			}
		})
	}
}

// prepare gathers the evidence from the runs: the memory need, the --mem
// after a host OOM, the time budget, the points the runtime model is
// fitted on, the work; the prior where there are no runs; and the notes
// on what it found.
func TestPrepare(t *testing.T) {
	site := catalogtest.Wulver(t)
	set, _ := catalog.ReferenceFor(site)
	gmx, _ := set.Benchmark("gromacs_performance")
	killed := newRun("2g.20gb", 300).peak(2048).id("k")
	killed.Completed, killed.HostOOM, killed.State, killed.ReqMemMiB, killed.MaxRSSMiB = false, true, "OUT_OF_MEMORY", 4096, 4090
	budget := []Run{newRun("full", 14407).peak(3072).timeout().id("1"), newRun("full", 14405).peak(3072).timeout().id("2")}
	for _, c := range []struct {
		name, directives string
		runs             []Run
		prior            *catalog.Benchmark
		check            func(t *testing.T, ev evidence)
		notes            []string // the notes' starts
	}{
		{name: "a need and a point", runs: []Run{newRun("full", 3600).peak(3072)}, check: func(t *testing.T, ev evidence) {
			if ev.basis != BasisMeasured || ev.need.MiB != 3072 || len(ev.points) != 1 || ev.points[0].Profile != "full" || ev.budget != 0 {
				t.Errorf("basis %s, need %v, points %+v, budget %v", ev.basis, ev.need.MiB, ev.points, ev.budget)
			}
		}},
		{name: "a time budget", directives: "#SBATCH --time=4:00:00\n", runs: budget, check: func(t *testing.T, ev evidence) {
			if ev.budget != 14407 || len(ev.points) != 1 || ev.points[0].Seconds != 14406 {
				t.Errorf("budget %v, points %+v", ev.budget, ev.points)
			}
		}, notes: []string{"every run ran to its time limit, 04:00:07 on full"}},
		{name: "two limits are bounds", runs: []Run{budget[0], newRun("full", 7207).peak(3072).timeout().id("3")}, check: func(t *testing.T, ev evidence) {
			if ev.budget != 0 || len(ev.points) != 0 || len(ev.timeLimitBounds(site)) != 1 {
				t.Errorf("budget %v, points %+v, bounds %+v", ev.budget, ev.points, ev.timeLimitBounds(site))
			}
		}, notes: []string{"job 1 reached its time limit on full after 04:00:07", "job 3 reached its time limit on full after 02:00:07"}},
		{name: "a bound makes a median no point", runs: []Run{newRun("1g.10gb", 4).peak(1024), newRun("1g.10gb", 68).peak(1024).timeout().id("t"), newRun("full", 11).peak(1024)},
			check: func(t *testing.T, ev evidence) {
				if len(ev.points) != 1 || ev.points[0].Profile != "full" {
					t.Errorf("points %+v", ev.points)
				}
			}, notes: []string{"job t reached its time limit"}},
		{name: "host memory", runs: []Run{killed, newRun("full", 600).peak(2048)}, check: func(t *testing.T, ev evidence) {
			if ev.host.mem != "8G" || ev.base.MemMiB != 8192 || !strings.HasPrefix(ev.host.reason, "job k of this script ran out of host memory with --mem=4G") {
				t.Errorf("host %+v, --mem %v MiB", ev.host, ev.base.MemMiB)
			}
		}, notes: []string{"job k of this script ran out of host memory with --mem=4G (sacct saw its RSS reach 4.0 GiB before the kill) (OUT_OF_MEMORY)"}},
		{name: "a script that asks for more memory", directives: "#SBATCH --mem=16G\n", runs: []Run{killed}, check: func(t *testing.T, ev evidence) {
			if ev.host.mem != "" || ev.base.MemMiB != 16384 {
				t.Errorf("host %+v, --mem %v MiB", ev.host, ev.base.MemMiB)
			}
		}},
		{name: "the same work", runs: []Run{newRun("1g.10gb", 3000).peak(2048).work(100, "ns"), newRun("full", 800).peak(2048).work(100, "ns")},
			check: func(t *testing.T, ev evidence) {
				if ev.work != 100 || ev.workUnit != "ns" || len(ev.workPoints) != 2 {
					t.Errorf("work %v %s, points %+v", ev.work, ev.workUnit, ev.workPoints)
				}
			}},
		{name: "different work", runs: []Run{newRun("1g.10gb", 600).peak(2048).work(1, "ns"), newRun("full", 600).peak(2048).work(3.8, "ns")},
			check: func(t *testing.T, ev evidence) {
				if ev.work != 0 || ev.workUnit != "ns" || len(ev.workPoints) != 2 {
					t.Errorf("work %v %s, points %+v", ev.work, ev.workUnit, ev.workPoints)
				}
			}, notes: []string{"the runs did different amounts of work (1 to 3.8 ns)"}},
		{name: "a prior", prior: gmx, check: func(t *testing.T, ev evidence) {
			if ev.basis != BasisPrior || ev.prior == nil || ev.prior.Benchmark != gmx.Name || len(ev.runs) != len(gmx.Rows) {
				t.Errorf("basis %s, prior %+v, %d runs", ev.basis, ev.prior, len(ev.runs))
			}
		}, notes: []string{"the script looks like the gromacs_performance reference benchmark"}},
		{name: "failures said", runs: []Run{newRun("full", 600).peak(1024), func() Run {
			r := newRun("2g.20gb", 5).id("f")
			r.Completed, r.State = false, "FAILED"
			r.Outcome = outcome.Outcome{Kind: outcome.Failed, Text: "failed with exit code 1"}
			return r
		}()}, check: func(t *testing.T, ev evidence) {}, notes: []string{"job f on 2g.20gb failed with exit code 1"}},
	} {
		t.Run(c.name, func(t *testing.T) {
			s := slurm.Parse("job.sh", []byte(script+c.directives+"srun ./train\n"))
			job := Job{Script: "job.sh", Resources: s.Resources, Runs: c.runs, Prior: c.prior}
			base, err := site.JobFor(job.Resources)
			if err != nil {
				t.Fatal(err)
			}
			ev, notes := prepare(site, job, base, selectRuns(site, job, nil), nil)
			c.check(t, ev)
			if len(notes) != len(c.notes) {
				t.Fatalf("notes %q, want %q…", notes, c.notes)
			}
			for i, n := range c.notes {
				if !strings.HasPrefix(notes[i], n) {
					t.Errorf("note %q, want %q…", notes[i], n)
				}
			}
		})
	}
}
