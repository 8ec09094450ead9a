//go:build !noreport

package main

import (
	"encoding/json"
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/migadvisor/migadvisor/advisor/app/sitereplay"
	"github.com/migadvisor/migadvisor/catalog"
	"github.com/migadvisor/migadvisor/slurm/slurmtest"
)

// planMonth collects a generated month of a MIG site into a site history,
// as an admin would, and returns the period's flags.
func planMonth(t *testing.T, seed uint64) []string {
	t.Helper()
	isolate(t)
	dir := t.TempDir()
	m := sitereplay.Generate(sitereplay.Options{Seed: seed, GPUTRES: true})
	files, err := m.Write(dir)
	if err != nil {
		t.Fatal(err)
	}
	t.Setenv("MIGADVISOR_DB", filepath.Join(dir, "site.db"))
	t.Setenv("MIGADVISOR_SITE", "wulver")
	mustRunCLI(t, "collect", "--sacct-file", files.Dump, "--outputs", files.Outputs)
	from, until := m.Period()
	return []string{"--since", from.Format("2006-01-02"), "--until", until.Format("2006-01-02")}
}

type planOutcome struct {
	GPUs     [][]string `json:"gpus"`
	WaitP95S int64      `json:"wait_p95_s"`
	SU       float64    `json:"su"`
	Unplaced int        `json:"jobs_unplaced"`
	Profiles []struct {
		Profile string `json:"profile"`
		Slices  int    `json:"slices"`
	} `json:"profiles"`
}

// The plain flow on a generated month, on a site of three whole GPUs its
// jobs keep busy: plan --json proposes a valid layout for every GPU with a
// lower p95 wait and no more SU, with the configs to apply it (the
// month's whole-GPU jobs, two GPUs' worth, hold the p95 above half of
// today's: the unit tests' busier demand checks the half); every GPU job
// of the month is sized once.
func TestPlanOnACollectedMonth(t *testing.T) {
	period := planMonth(t, 1)
	out := mustRunCLI(t, append([]string{"plan", "--json", "--gpus", "3", "--gpus-per-node", "1"}, period...)...)
	var p struct {
		Demand struct {
			Jobs, Moved, Kept int
			Unknown           int            `json:"unknown_fit"`
			Whole             int            `json:"multi_gpu"`
			OOM               int            `json:"out_of_memory"`
			Left              map[string]int `json:"left_out"`
		} `json:"demand"`
		Current  planOutcome `json:"current"`
		Proposed *struct {
			planOutcome
		} `json:"proposed"`
		Configs struct {
			MigParted string `json:"mig_parted"`
			SlurmConf string `json:"slurm_conf"`
		} `json:"configs"`
		Calculator struct {
			GPUs int `json:"gpus_to_convert"`
		} `json:"mig_calculator"`
		Fidelity *struct {
			Jobs    int              `json:"jobs"`
			Skipped []map[string]any `json:"skipped"`
			Bound   float64          `json:"bound_s"`
		} `json:"fidelity"`
	}
	if err := json.Unmarshal([]byte(out), &p); err != nil {
		t.Fatalf("plan --json: %v\n%s", err, out)
	}
	d := p.Demand
	if d.Jobs == 0 || d.Moved+d.Kept+d.Unknown+d.Whole+d.OOM != d.Jobs || d.Moved == 0 {
		t.Errorf("demand %+v: every job sized once, some moved", d)
	}
	if p.Current.WaitP95S == 0 {
		t.Fatalf("today's p95 wait is 0: three whole GPUs are meant to be busy with this month")
	}
	o := p.Proposed
	if o == nil {
		t.Fatalf("no proposal:\n%s", out)
	}
	site, _ := catalog.Builtin("wulver")
	for i, g := range o.GPUs {
		if _, err := site.GPULayout(strings.Join(g, ",")); err != nil && strings.Join(g, ",") != "full" {
			t.Errorf("GPU %d cut %v: %v", i, g, err)
		}
	}
	if len(o.GPUs) != 3 || o.WaitP95S >= p.Current.WaitP95S || o.SU > p.Current.SU || o.Unplaced > 0 {
		t.Errorf("proposed %v: p95 %ds, %g SU, %d unplaced; today p95 %ds, %g SU", o.GPUs, o.WaitP95S, o.SU, o.Unplaced, p.Current.WaitP95S, p.Current.SU)
	}
	// The month's jobs ran on slices too: on three whole GPUs only those
	// that ran on one are replayed as they ran, the others said skipped.
	if f := p.Fidelity; f == nil || f.Jobs == 0 || len(f.Skipped) == 0 || f.Bound < 30 {
		t.Errorf("fidelity on today's layout: %+v", f)
	}
	if !strings.HasPrefix(p.Configs.MigParted, "version: v1\nmig-configs:\n") || !strings.Contains(p.Configs.SlurmConf, "Gres=gpu:") {
		t.Errorf("configs:\n%s\n%s", p.Configs.MigParted, p.Configs.SlurmConf)
	}
}

// Without flags the site file's [[gpu_nodes]] are today's GPUs (Wulver's
// hundred), and the text says what to keep or cut; a --page writes the
// docs page and the configs.
func TestPlanReadsTheSitesNodes(t *testing.T) {
	period := planMonth(t, 2)
	page := t.TempDir()
	out := mustRunCLI(t, append([]string{"plan", "--page", page}, period...)...)
	for _, want := range []string{"today  ", "96 × full", "4 × 3g.40gb+2g.20gb+1g.10gb+1g.10gb", "Princeton's MIG calculator", "wrote " + filepath.Join(page, "plan.svg")} {
		if !strings.Contains(out, want) {
			t.Errorf("plan's text lacks %q:\n%s", want, out)
		}
	}
}

// Flags that describe no GPUs are refused; a period with no GPU job says so.
func TestPlanSaysWhyThereIsNothing(t *testing.T) {
	isolate(t)
	t.Setenv("MIGADVISOR_DB", filepath.Join(t.TempDir(), "history.db"))
	if _, errOut, code := migadvisor(t, "plan", "--current", "full"); code != 2 || !strings.Contains(errOut, "give --gpus") {
		t.Errorf("--current without --gpus: exit %d: %s", code, errOut)
	}
	if _, errOut, code := migadvisor(t, "plan", "--gpus", "4", "--current", "3g.40gb,3g.40gb,3g.40gb"); code != 1 || !strings.Contains(errOut, "the GPU holds at most 2") {
		t.Errorf("a layout the GPU cannot hold: exit %d: %s", code, errOut)
	}
	if _, errOut, code := migadvisor(t, "plan", "--gpus", "4"); code != 1 || !strings.Contains(errOut, "report and plan read the site history") {
		t.Errorf("no history: exit %d: %s", code, errOut)
	}
	dump, err := os.ReadFile("../../testdata/sacct/devcluster-22.05.psv")
	if err != nil {
		t.Fatal(err)
	}
	header, _, _ := strings.Cut(string(dump), "\n")
	empty := filepath.Join(t.TempDir(), "sacct.psv")
	os.WriteFile(empty, []byte(header+"\n"), 0o644)
	mustRunCLI(t, "collect", "--sacct-file", empty)
	if _, errOut, code := migadvisor(t, "plan", "--gpus", "4"); code != 1 || !strings.Contains(errOut, "no GPU job of the period") {
		t.Errorf("an empty history: exit %d: %s", code, errOut)
	}
}

// --from-slurm reads today's GPUs from scontrol: the dev cluster's node is
// a GPU cut 3g+2g+1g+1g and a whole one; a Slurm that cannot answer is
// said so, with the other ways to give the GPUs.
func TestPlanReadsSlurmsNodes(t *testing.T) {
	period := planMonth(t, 1)
	dev, err := os.ReadFile("../../testdata/scontrol/show-node-devcluster-22.05.txt")
	if err != nil {
		t.Fatal(err)
	}
	fake := slurmtest.New().Prints("scontrol", string(dev))
	out := mustRunWith(t, fake, append([]string{"plan", "--from-slurm", "--json"}, period...)...)
	var p struct {
		Current planOutcome `json:"current"`
	}
	if err := json.Unmarshal([]byte(out), &p); err != nil {
		t.Fatal(err)
	}
	if got := fmt.Sprint(p.Current.GPUs); got != "[[full] [3g.40gb 2g.20gb 1g.10gb 1g.10gb]]" {
		t.Errorf("today's GPUs from scontrol: %s", got)
	}
	if calls := fake.Calls("scontrol"); len(calls) != 1 || strings.Join(calls[0].Args, " ") != "--oneliner show node" {
		t.Errorf("scontrol calls: %+v", calls)
	}
	down := slurmtest.New().Fails("scontrol", "slurm_load_node error: Unable to contact slurm controller (connect failure)\n", 1)
	if _, errOut, code := migadvisorWith(t, down, append([]string{"plan", "--from-slurm"}, period...)...); code != 1 ||
		!strings.Contains(errOut, "--from-slurm reads Slurm's nodes, which could not be read") || !strings.Contains(errOut, "Unable to contact") {
		t.Errorf("scontrol failing: exit %d: %s", code, errOut)
	}
}

var planUpdate = flag.Bool("plan-update", false, "TestPlanExampleInTheDocs: rewrite the example in "+planDoc)

const planDoc = "../../docs/admin/plan.md"

// The example in docs/admin/plan.md is plan's text on the generated month
// it names, as a fresh run prints it (up to the proposal's slices).
func TestPlanExampleInTheDocs(t *testing.T) {
	period := planMonth(t, 1)
	out := mustRunCLI(t, append([]string{"plan", "--gpus", "3", "--gpus-per-node", "1"}, period...)...)
	out, _, _ = strings.Cut(out, "\nThe proposal's slices:")
	block := "```text\n" + strings.TrimRight(out, "\n") + "\n```\n"
	doc, err := os.ReadFile(planDoc)
	if err != nil {
		t.Fatal(err)
	}
	const begin, end = "<!-- plan-example begin", "<!-- plan-example end -->"
	text := string(doc)
	a, b := strings.Index(text, begin), strings.Index(text, end)
	if a < 0 || b < a {
		t.Fatalf("%s has no plan-example block", planDoc)
	}
	a += strings.Index(text[a:], "\n") + 1
	if text[a:b] == block {
		return
	}
	if !*planUpdate {
		t.Fatalf("%s's example is not what plan prints now; rerun with -plan-update. plan prints:\n%s", planDoc, block)
	}
	if err := os.WriteFile(planDoc, []byte(text[:a]+block+text[b:]), 0o644); err != nil {
		t.Fatal(err)
	}
}
