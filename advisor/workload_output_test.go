package advisor

import (
	"context"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/migadvisor/migadvisor/advisor/base/history"
	"github.com/migadvisor/migadvisor/advisor/base/history/historytest"
	"github.com/migadvisor/migadvisor/catalog"
	"github.com/migadvisor/migadvisor/catalog/catalogtest"
	"github.com/migadvisor/migadvisor/slurm"
)

// Outputs the reference benchmarks' lines name.
const (
	gromacsBanner = "                      :-) GROMACS - gmx mdrun, 2023.3 (-:\n"
	mnistDownload = "Extracting ./data/MNIST/raw/train-images-idx3-ubyte.gz to ./data/MNIST/raw\n"
)

// recordOutputs records each job's output as collect scans it, with the
// site's reference benchmarks' lines.
func recordOutputs(t *testing.T, site *catalog.Site, st *history.Store, outputs map[string]string) {
	t.Helper()
	for id, text := range outputs {
		ev, err := slurm.ScanOutput(strings.NewReader(text), slurm.ScanOptions{Workloads: catalog.OutputWorkloads(site)})
		if err != nil {
			t.Fatal(err)
		}
		if err := st.RecordOutput(context.Background(), "migdev", id, "/o/"+id, int64(len(text)), time.Unix(1, 0), ev); err != nil {
			t.Fatal(err)
		}
	}
}

// linkedScript is a script at a path of its own, jobs of trainDump
// recorded as its runs.
func linkedScript(t *testing.T, st *history.Store, text string, ids ...string) (string, *slurm.Script) {
	t.Helper()
	path := filepath.Join(t.TempDir(), "train.sh")
	s := catalogtest.WriteScript(t, path, text)
	var subs []history.Submission
	for _, id := range ids {
		subs = append(subs, history.Submission{Cluster: "migdev", JobID: id, Fingerprint: s.Fingerprint(), Source: path, Script: path, Submitted: time.Now()})
	}
	if err := st.RecordSubmissions(context.Background(), subs); err != nil {
		t.Fatal(err)
	}
	return path, s
}

// The runs' output says what a script is where the script does not: the
// benchmark most of the outputs resemble (of equally many, the first of
// the site's set, as a script's recognition takes the first that matches);
// an output that resembles nothing takes no side.
func TestGatherReadsTheWorkloadTheOutputsShow(t *testing.T) {
	ctx := context.Background()
	site, _ := catalog.Builtin("wulver")
	for _, c := range []struct {
		name    string
		outputs map[string]string
		want    string
	}{
		{"one says", map[string]string{"11": "epoch 1: loss 0.4\n", "14": gromacsBanner}, "gromacs_performance"},
		{"most say", map[string]string{"11": mnistDownload, "12": mnistDownload, "14": gromacsBanner}, "pytorch_mnist_simplecnn"},
		{"as many", map[string]string{"11": mnistDownload, "14": gromacsBanner}, "gromacs_performance"},
		{"none say", map[string]string{"11": "epoch 1: loss 0.4\n"}, ""},
		// Bob's job 13 is no run of alice's script: its output does not count.
		{"another's job", map[string]string{"13": gromacsBanner}, ""},
	} {
		st := historytest.FromDump(t, site, trainDump)
		path, s := linkedScript(t, st, trainV1, "11", "12", "14")
		recordOutputs(t, site, st, c.outputs)
		job, err := GatherFor(ctx, site, GatherRequest{Path: path, Script: s, WaitsSince: time.Unix(0, 0)}, st)
		if err != nil {
			t.Fatal(err)
		}
		got := ""
		if job.Resembles != nil {
			got = job.Resembles.Name
		}
		if got != c.want {
			t.Errorf("%s: %q, want %q", c.name, got, c.want)
		}
	}
}

// Advice on a script measured on one profile scales it like the benchmark
// it says it runs, else like the one its runs' output shows.
func TestAdviseScalesLikeTheScriptThenTheOutput(t *testing.T) {
	ctx := context.Background()
	site := siteWith(t, "")
	for _, c := range []struct {
		name, script, want string
	}{
		{"the script says nothing", trainV1, "pytorch_mnist_simplecnn"},
		{"the script says", strings.Replace(trainV1, "python train.py", "gmx mdrun -deffnm md", 1), "gromacs_performance"},
	} {
		st := historytest.FromDump(t, site, trainDump)
		// Job 11 completed on 1g.10gb, 12 failed on 2g.20gb: one profile measured.
		path, s := linkedScript(t, st, c.script, "11", "12")
		recordOutputs(t, site, st, map[string]string{"11": mnistDownload})
		req := AdviseRequest{Path: path, Script: s, Site: site, UserDB: st.Path(), User: "alice", Now: time.Now(), Options: Options{Objective: ObjectiveSU}}
		rec, err := Advise(ctx, req, AdviseDeps{Open: readOnly})
		if err != nil {
			t.Fatal(err)
		}
		if want := "scaled like the " + c.want + " reference benchmark"; !strings.Contains(rec.RuntimeWhy, want) {
			t.Errorf("%s: %q, want it %s", c.name, rec.RuntimeWhy, want)
		}
	}
}

// OutputResembles weighs the records it is given, as the report's groups
// of jobs not linked to a script have them; a site with no reference set
// has nothing to resemble.
func TestOutputResembles(t *testing.T) {
	site, _ := catalog.Builtin("wulver")
	gmx := &history.JobRecord{Cluster: "c", JobID: "1", OutputResembles: "gromacs_performance"}
	mnist := func(id string) *history.JobRecord {
		return &history.JobRecord{Cluster: "c", JobID: id, OutputResembles: "pytorch_mnist_simplecnn"}
	}
	if b := OutputResembles(site, gmx, mnist("2"), mnist("3")); b == nil || b.Name != "pytorch_mnist_simplecnn" {
		t.Errorf("two MNIST jobs and a GROMACS one: %v", b)
	}
	// The same job twice (in two histories) counts once.
	if b := OutputResembles(site, gmx, mnist("2"), mnist("2")); b == nil || b.Name != "gromacs_performance" {
		t.Errorf("a GROMACS job and one MNIST job twice: %v", b)
	}
	if b := OutputResembles(site, &history.JobRecord{JobID: "4"}); b != nil {
		t.Errorf("an output that resembles nothing: %v", b)
	}
	if b := OutputResembles(&catalog.Site{Name: "nowhere"}, gmx); b != nil {
		t.Errorf("a site with no reference set: %v", b)
	}
	if b := OutputResembles(site, &history.JobRecord{JobID: "5", OutputResembles: "gone_benchmark"}); b != nil {
		t.Errorf("a benchmark the set no longer has: %v", b)
	}
}

// ResemblesOf takes the script's word first, as Advise does, then the
// outputs'.
func TestResemblesOf(t *testing.T) {
	site, _ := catalog.Builtin("wulver")
	mnist := &history.JobRecord{Cluster: "c", JobID: "1", OutputResembles: "pytorch_mnist_simplecnn"}
	md := catalogtest.WriteScript(t, filepath.Join(t.TempDir(), "md.sh"), "#!/bin/bash\n#SBATCH --gres=gpu:a100:1\ngmx mdrun -deffnm md\n")
	quiet := catalogtest.WriteScript(t, filepath.Join(t.TempDir(), "run.sh"), trainV1)
	for _, c := range []struct {
		name   string
		script *slurm.Script
		want   string
	}{{"the script says", md, "gromacs_performance"}, {"the script says nothing", quiet, "pytorch_mnist_simplecnn"}, {"no script", nil, "pytorch_mnist_simplecnn"}} {
		got := ""
		if b := ResemblesOf(site, c.script, mnist); b != nil {
			got = b.Name
		}
		if got != c.want {
			t.Errorf("%s: %q, want %q", c.name, got, c.want)
		}
	}
}
