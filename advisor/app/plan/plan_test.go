package plan

import (
	"context"
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/migadvisor/migadvisor/advisor"
	"github.com/migadvisor/migadvisor/advisor/app/savings"
	"github.com/migadvisor/migadvisor/advisor/base/history"
	"github.com/migadvisor/migadvisor/advisor/base/replay"
	"github.com/migadvisor/migadvisor/catalog"
	"github.com/migadvisor/migadvisor/slurm"
	"github.com/migadvisor/migadvisor/slurm/slurmtest"
)

func wulver(t testing.TB) *catalog.Site {
	t.Helper()
	site, err := catalog.Builtin("wulver")
	if err != nil {
		t.Fatal(err)
	}
	return site
}

// testJob is a demand job that asked for a whole GPU and needs a
// profile, with its runtime's ratio on the slices it can run on, and the
// accounting's GPU figures.
type testJob struct {
	Job
	needs     string
	ratio     map[string]float64
	mem, util *float64
}

func job(id int64, submit, limit, secs int64, needs string, ratio map[string]float64) testJob {
	return testJob{Job: Job{ID: id, Submit: submit, Start: submit, Count: 1, Moved: needs != "full", LimitS: limit, ElapsedS: secs},
		needs: needs, ratio: ratio}
}

// record is the job as accounting has it: 4 CPUs, 16 GiB, partition gpu.
func (tj testJob) record() *history.JobRecord {
	cpus, mem := int64(4), float64(16*1024)
	start := time.Unix(tj.Submit, 0)
	end := start.Add(time.Duration(tj.ElapsedS) * time.Second)
	secs := tj.ElapsedS
	return &history.JobRecord{JobID: fmt.Sprint(tj.ID), Profile: "full", GPUCount: int64(tj.Count), CPUs: &cpus, ReqMemMiB: &mem, Partition: "gpu",
		QOS: "standard", Submit: &start, Start: &start, End: &end, ElapsedS: &secs, AcctGPUMemMiB: tj.mem, GPUUtil: tj.util}
}

func demandOf(site *catalog.Site, jobs []testJob) *Demand {
	d := &Demand{LeftWhy: map[string]int{}}
	for _, p := range site.ProfilesBySize() {
		d.Profiles = append(d.Profiles, p.Name)
	}
	for _, tj := range jobs {
		tj.Asked, tj.Needs = uint8(d.rank("full")), uint8(d.rank(tj.needs))
		el := float32(tj.ElapsedS)
		rts := make([]runtime, len(d.Profiles))
		rts[tj.Asked] = runtime{el, el, el}
		for p, r := range tj.ratio {
			rts[d.rank(p)] = runtime{el * float32(r), el * float32(r) * 0.9, el * float32(r) * 1.2}
		}
		rec := tj.record()
		d.Jobs = append(d.Jobs, tj.Job)
		d.runtimes = append(d.runtimes, rts...)
		d.rates = append(d.rates, d.ratesOf(site, tj.Job, rec)...)
		d.calc.add(site, rec, tj.Job)
	}
	d.sortBySubmit()
	return d
}

// A busy site of whole GPUs whose jobs mostly need small slices: every
// 10 minutes of two days, a burst of jobs of 1–3 h, most fitting 1g.10gb
// (1.6× slower there) or 3g.40gb (1.2×), a fifth needing the whole GPU.
func busyDemand(site *catalog.Site, seed uint64) *Demand {
	rng := rand.New(rand.NewPCG(seed, 1))
	var jobs []testJob
	id := int64(1000)
	for t := int64(0); t < 2*86400; t += 600 {
		for range rng.IntN(3) + 1 {
			id++
			rt := int64(3600 + rng.IntN(7200))
			switch x := rng.Float64(); {
			case x < 0.5:
				jobs = append(jobs, job(id, t, 4*3600, rt, "1g.10gb", map[string]float64{"1g.10gb": 1.6, "2g.20gb": 1.3, "3g.40gb": 1.2}))
			case x < 0.8:
				jobs = append(jobs, job(id, t, 4*3600, rt, "3g.40gb", map[string]float64{"3g.40gb": 1.2}))
			default:
				jobs = append(jobs, job(id, t, 4*3600, rt, "full", nil))
			}
		}
	}
	return demandOf(site, jobs)
}

func allWhole(t *testing.T, site *catalog.Site, gpus, perNode int) Fleet {
	t.Helper()
	f, err := FleetFromCounts(site, gpus, perNode, nil)
	if err != nil {
		t.Fatal(err)
	}
	return f
}

// On a busy all-whole site whose jobs need slices, the plan cuts GPUs: a
// valid layout for every GPU, a p95 wait at most half of today's, no more
// SU, and mig-parted's config for it.
func TestPlanCutsABusySiteOfWholeGPUs(t *testing.T) {
	site := wulver(t)
	for seed := uint64(1); seed <= 3; seed++ {
		d := busyDemand(site, seed)
		p, err := Make(Request{Site: site, Today: allWhole(t, site, 16, 4), Demand: d})
		if err != nil {
			t.Fatal(err)
		}
		if p.Current.WaitP95S < 3600 {
			t.Fatalf("seed %d: today's p95 wait is %ds: the demand is meant to load 16 whole GPUs", seed, p.Current.WaitP95S)
		}
		o := p.Proposed
		if o != nil {
			t.Logf("seed %d: today %s: p95 %ds, %g SU; proposed %s: p95 %ds, %g SU (%d replays)", seed, p.Current.Layout, p.Current.WaitP95S, p.Current.SU, o.Layout, o.WaitP95S, o.SU, p.Replays)
		}
		if o == nil {
			t.Fatalf("seed %d: no proposal; today p95 %ds", seed, p.Current.WaitP95S)
		}
		for i, g := range o.GPUs {
			if _, err := site.GPULayout(strings.Join(g, ",")); err != nil && !(len(g) == 1 && g[0] == "full") {
				t.Errorf("seed %d: GPU %d: %v", seed, i, err)
			}
		}
		if len(o.GPUs) != 16 {
			t.Errorf("seed %d: %d GPUs, want 16", seed, len(o.GPUs))
		}
		if 2*o.WaitP95S > p.Current.WaitP95S || o.SU > p.Current.SU || o.Unplaced > 0 {
			t.Errorf("seed %d: proposed p95 %ds, %g SU, %d unplaced; today %ds, %g SU", seed, o.WaitP95S, o.SU, o.Unplaced, p.Current.WaitP95S, p.Current.SU)
		}
		if !strings.HasPrefix(p.Configs.MigParted, "version: v1\nmig-configs:\n") || !strings.Contains(p.Configs.MigParted, "mig-enabled: true") {
			t.Errorf("seed %d: mig-parted config:\n%s", seed, p.Configs.MigParted)
		}
		if o.Range == nil || o.Range.WaitP95S[0] > o.WaitP95S || o.Range.WaitP95S[1] < o.WaitP95S {
			t.Errorf("seed %d: p95 %d outside its range %+v", seed, o.WaitP95S, o.Range)
		}
	}
}

// An idle site keeps its layout unless cutting saves SU; a site whose
// jobs all need whole GPUs keeps it outright.
func TestPlanKeepsWhatServesTheDemand(t *testing.T) {
	site := wulver(t)
	var jobs []testJob
	for i := range 40 {
		jobs = append(jobs, job(int64(i+1), int64(i)*7200, 4*3600, 3600, "full", nil))
	}
	p, err := Make(Request{Site: site, Today: allWhole(t, site, 4, 4), Demand: demandOf(site, jobs)})
	if err != nil {
		t.Fatal(err)
	}
	if p.Proposed != nil {
		t.Errorf("proposed %s for jobs that all need whole GPUs", p.Proposed.Layout)
	}
	var text strings.Builder
	p.WriteText(&text)
	if !strings.Contains(text.String(), "Keep today's layout") {
		t.Errorf("text does not say to keep the layout:\n%s", text.String())
	}
	// What the jobs spent as they ran is said beside the layouts' SU,
	// which are theirs as each layout runs them. Seen in review: "today"
	// read as the period's spend, 1445 SU below it.
	if p.Demand.SpentSU != 40*20 || !strings.Contains(text.String(), "as they ran, they spent 800 SU") {
		t.Errorf("spent %g SU, want 800 (40 jobs of 1 h at 20 SU/h):\n%s", p.Demand.SpentSU, text.String())
	}
}

// Today's layout of MIG slices alone holds no job that needs a whole GPU:
// those jobs cost nothing there and wait for nothing, so against SU alone
// every layout that runs them lost. Seen in review: "Keep today's layout"
// with 29 of 112 jobs fitting nowhere.
func TestPlanRunsWhatTodaysLayoutCannot(t *testing.T) {
	site := wulver(t)
	var jobs []testJob
	for i := range 40 {
		needs, ratio := "1g.10gb", map[string]float64{"1g.10gb": 1.5, "2g.20gb": 1.2, "3g.40gb": 1.1}
		if i%4 == 0 {
			needs, ratio = "full", nil
		}
		jobs = append(jobs, job(int64(i+1), int64(i)*1800, 4*3600, 3600, needs, ratio))
	}
	sliced, err := FleetFromCounts(site, 8, 4, []string{"3g.40gb,2g.20gb,1g.10gb,1g.10gb"})
	if err != nil {
		t.Fatal(err)
	}
	p, err := Make(Request{Site: site, Today: sliced, Demand: demandOf(site, jobs)})
	if err != nil {
		t.Fatal(err)
	}
	if p.Current.Unplaced == 0 {
		t.Fatalf("the case needs jobs today's layout cannot hold: %+v", p.Current)
	}
	if p.Proposed == nil || p.Proposed.Unplaced >= p.Current.Unplaced {
		t.Fatalf("proposed %+v for %d jobs that fit nowhere today", p.Proposed, p.Current.Unplaced)
	}
	var text strings.Builder
	p.WriteText(&text)
	if !strings.Contains(text.String(), "that fit no slice of today's layout: today's SU and waits leave them out") {
		t.Errorf("the text does not say why the proposal costs more:\n%s", text.String())
	}
}

// A job whose profile the layout lacks runs on the smallest larger one it
// has a runtime on, its limit stretched as its runtime; a job that fits
// no slice of the layout is counted, never dropped.
func TestAJobRunsWhereTheLayoutHoldsIt(t *testing.T) {
	site := wulver(t)
	small := job(1, 0, 3600, 1800, "1g.10gb", map[string]float64{"1g.10gb": 2, "3g.40gb": 1.5})
	whole := job(2, 0, 3600, 1800, "full", nil)
	pair := job(3, 0, 3600, 1800, "full", nil)
	pair.Count = 2
	d := demandOf(site, []testJob{small, whole, pair})
	ev := newEvaluator(site, d, nil, replay.Options{})
	f := Fleet{{Name: "n1", GPUs: [][]string{{"3g.40gb", "3g.40gb"}, {"full"}}}}
	o, err := ev.evaluate(f, mid, true)
	if err != nil {
		t.Fatal(err)
	}
	placed := make([]string, len(o.placed))
	for i, k := range o.placed {
		if k > 0 {
			placed[i] = d.Profiles[k-1]
		}
	}
	if placed[0] != "3g.40gb" || placed[1] != "full" || placed[2] != "" || o.Unplaced != 1 || o.Elsewhere != 1 {
		t.Errorf("placed %q, %d unplaced, %d elsewhere", placed, o.Unplaced, o.Elsewhere)
	}
	if got := limitOn(&d.Jobs[0], 2700); got != 5400 {
		t.Errorf("limit for 2700 s of a 1800 s run limited to 3600 s: %d, want 5400", got)
	}
	if got := limitOn(&d.Jobs[0], 900); got != 3600 {
		t.Errorf("limit for a faster run: %d, want its own 3600", got)
	}
}

// The configs name each node's layout, count the site's GRES types in
// slurm.conf, and re-cut only the nodes that change.
func TestConfigsApplyTheLayout(t *testing.T) {
	site := wulver(t)
	today := allWhole(t, site, 8, 4)
	cut := []string{"3g.40gb", "2g.20gb", "1g.10gb", "1g.10gb"}
	next := Fleet{{Name: today[0].Name, GPUs: today[0].GPUs}, {Name: today[1].Name, GPUs: [][]string{cut, cut, cut, cut}}}
	c, err := ConfigsFor(site, next, today)
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"all-disabled:", "all-3g.40gb-2g.20gb-2x1g.10gb:", `"1g.10gb": 2`, `"3g.40gb": 1`, "mig-enabled: false"} {
		if !strings.Contains(c.MigParted, want) {
			t.Errorf("mig-parted config lacks %q:\n%s", want, c.MigParted)
		}
	}
	if !strings.Contains(c.SlurmConf, "NodeName="+today[1].Name+" Gres=gpu:a100_10g:8,gpu:a100_20g:4,gpu:a100_40g:4\n") ||
		!strings.Contains(c.SlurmConf, "NodeName="+today[0].Name+" Gres=gpu:a100:4\n") {
		t.Errorf("slurm.conf:\n%s", c.SlurmConf)
	}
	if len(c.Steps) == 0 || slices.ContainsFunc(c.Steps, func(s string) bool { return strings.Contains(s, today[0].Name+" ") }) {
		t.Errorf("steps re-cut the unchanged node %s or nothing: %q", today[0].Name, c.Steps)
	}
	// Wulver's types are its own (a100_40g), not the a100_3g.40gb NVML's
	// autodetection gives a slice: slurmd would find other types than
	// slurm.conf names, so gres.conf lists the slices by hand. Seen in
	// review: AutoDetect=nvml beside Gres=gpu:a100_40g:4.
	if strings.Contains(c.GresConf, "\nAutoDetect=nvml") || !strings.Contains(c.GresConf, "Type=a100_10g") {
		t.Errorf("gres.conf for the site's own types:\n%s", c.GresConf)
	}
	nvml := *site
	nvml.Profiles = slices.Clone(site.Profiles)
	for i := range nvml.Profiles {
		if p := &nvml.Profiles[i]; p.IsMIG() {
			p.GRESType = "a100_" + p.Name
		}
	}
	if c, err := ConfigsFor(&nvml, next, today); err != nil || !strings.Contains(c.GresConf, "\nAutoDetect=nvml\n") {
		t.Errorf("gres.conf for NVML's own types (%v):\n%s", err, c.GresConf)
	}
}

// The calculator passes whole-GPU jobs under its thresholds, by GPU-hours,
// and cannot pass a job without figures.
func TestCalculatorCountsGPUHours(t *testing.T) {
	site := wulver(t)
	f := func(v float64) *float64 { return &v }
	a := job(1, 0, 7200, 3600, "full", nil)
	a.mem, a.util = f(20*1024), f(30) // passes
	b := job(2, 0, 7200, 3*3600, "full", nil)
	b.mem, b.util = f(60*1024), f(30)       // too much memory
	c := job(3, 0, 7200, 3600, "full", nil) // no figures
	calc := calculate(site, demandOf(site, []testJob{a, b, c}).calc, 10)
	if calc.GPUHours != 5 || calc.EligibleHours != 1 || calc.Share != 0.2 || calc.GPUs != 2 || calc.NoEvidence != 1 || calc.Profile != "3g.40gb" {
		t.Errorf("calculator: %+v", calc)
	}
}

// Slurm's nodes read as the site's profiles: the dev cluster's node (two
// 1g.10gb, a 2g.20gb and a 3g.40gb, and a whole A100) is one GPU cut
// 3g+2g+1g+1g and one whole; slices beyond one GPU's room go to another.
func TestFleetFromSlurmPacksTheSlices(t *testing.T) {
	site := wulver(t)
	dev, err := os.ReadFile("../../../testdata/scontrol/show-node-devcluster-22.05.txt")
	if err != nil {
		t.Fatal(err)
	}
	nodes, err := slurm.ParseGPUNodes(string(dev))
	if err != nil {
		t.Fatal(err)
	}
	nodes = append(nodes, slurm.GPUNode{Name: "big", GPUs: map[string]int{"a100_40g": 3, "a100_10g": 2}})
	f, err := FleetFromSlurm(site, nodes)
	if err != nil {
		t.Fatal(err)
	}
	if got := fmt.Sprint(f.GPUs()); got != "[[full] [3g.40gb 2g.20gb 1g.10gb 1g.10gb] [3g.40gb 3g.40gb] [3g.40gb 1g.10gb 1g.10gb]]" {
		t.Errorf("fleet %s", got)
	}
	if _, err := FleetFromSlurm(site, []slurm.GPUNode{{Name: "x", GPUs: map[string]int{"v100": 1}}}); err == nil || !strings.Contains(err.Error(), `"v100"`) {
		t.Errorf("an unknown type: %v", err)
	}
}

// --page writes the page, its chart of both panels (today's and the
// proposal's slices; their waits), and the configs that apply it.
func TestPageShowsTodayAgainstTheProposal(t *testing.T) {
	site := wulver(t)
	p, err := Make(Request{Site: site, Today: allWhole(t, site, 16, 4), Demand: busyDemand(site, 1)})
	if err != nil || p.Proposed == nil {
		t.Fatalf("%v, proposed %v", err, p)
	}
	dir := t.TempDir()
	files, err := p.WritePage(dir)
	if err != nil || len(files) != 5 {
		t.Fatalf("%v: %v", files, err)
	}
	svg, _ := os.ReadFile(filepath.Join(dir, "plan.svg"))
	for _, want := range []string{"Slices of each profile", "Jobs that waited at most", ">today<", ">proposed<", ">1g.10gb<", ">full<"} {
		if !strings.Contains(string(svg), want) {
			t.Errorf("plan.svg lacks %q", want)
		}
	}
	md, _ := os.ReadFile(filepath.Join(dir, "plan.md"))
	parted, _ := os.ReadFile(filepath.Join(dir, "mig-parted.yaml"))
	if !strings.Contains(string(md), "![") || !strings.Contains(string(md), "Proposed: ") || string(parted) != p.Configs.MigParted {
		t.Errorf("plan.md:\n%s\nmig-parted.yaml:\n%s", md, parted)
	}
}

// A job's number is what fmt.Sscan reads from its id, whether the id is a
// plain number or not.
func TestJobNumberIsSscans(t *testing.T) {
	for _, id := range []string{"1", "123", "4242", "999999999999999999", "9999999999999999999", "123_4", "123+0", "0", "0123", "0x1f",
		"-5", "+5", " 12", "12 ", "", "abc", "123_[1-3]", "1_000"} {
		want := int64(0)
		fmt.Sscan(id, &want)
		if got := jobNumber(id); got != want {
			t.Errorf("jobNumber(%q) = %d, Sscan reads %d", id, got, want)
		}
	}
}

// --from-slurm passes over the site file's [[gpu_nodes]]: where Slurm's
// nodes cannot be read, the error says that, not that the file has none.
func TestTodayFromSlurmSaysWhatFailed(t *testing.T) {
	site := wulver(t)
	if len(site.GPUNodes) == 0 {
		t.Fatal("the case needs a site file with [[gpu_nodes]]")
	}
	fails := &slurm.Client{Runner: slurmtest.New().Fails("scontrol", "scontrol: error: Unable to contact slurm controller", 1)}
	_, err := Today(context.Background(), FleetSource{Site: site, FromSlurm: true, Slurm: fails})
	if err == nil || !strings.Contains(err.Error(), "--from-slurm reads Slurm's nodes, which could not be read") {
		t.Errorf("%v", err)
	}
}

// A job that ran out of GPU memory where it ran is not right-sized there.
// Seen in review: three seg-unet jobs that died on 1g.10gb were counted
// among the jobs "where they ran (right-sized)".
func TestAJobThatRanOutOfMemoryIsNotRightSized(t *testing.T) {
	site := wulver(t)
	d := &Demand{LeftWhy: map[string]int{}}
	for _, p := range site.ProfilesBySize() {
		d.Profiles = append(d.Profiles, p.Name)
	}
	rec := job(7, 0, 3600, 1200, "1g.10gb", nil).record()
	rec.Profile, rec.GPUOOM = "1g.10gb", "PyTorch"
	d.add(site, savings.Judged{Record: rec, Recommendation: &advisor.Recommendation{}})
	if d.OOM != 1 || d.Kept != 0 || len(d.Jobs) != 1 {
		t.Errorf("out of memory %d, right-sized %d, jobs %d", d.OOM, d.Kept, len(d.Jobs))
	}
}

// A [[gpu_nodes]] name may be a Slurm hostlist: the nodes take its names,
// which the configs give slurm.conf and scontrol. Seen in review:
// NodeName=n[0101-0103]-1,n[0101-0103]-2, and a count of 2 against three
// hosts taken without a word.
func TestGPUNodesNamedByAHostlist(t *testing.T) {
	site := *wulver(t)
	site.GPUNodes = []catalog.GPUNodes{{Name: "n[0101-0103]", Count: 3, GPUs: 4, Layout: "full"}}
	f, err := FleetFromSite(&site)
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, n := range f {
		names = append(names, n.Name)
	}
	if strings.Join(names, " ") != "n0101 n0102 n0103" {
		t.Errorf("nodes %q", names)
	}
	// Slurm's own names are given as they are; --gpus's are made up, and
	// the configs say so.
	if c, err := ConfigsFor(&site, f, f); err != nil || len(c.MadeUpNames) != 0 {
		t.Errorf("made-up names among a hostlist's: %v %v", c.MadeUpNames, err)
	}
	counted := allWhole(t, &site, 8, 4)
	if c, err := ConfigsFor(&site, counted, counted); err != nil || len(c.MadeUpNames) != 2 {
		t.Errorf("--gpus's node names are not said to be made up: %v %v", c.MadeUpNames, err)
	}
	site.GPUNodes[0].Count = 2
	if _, err := FleetFromSite(&site); err == nil || !strings.Contains(err.Error(), "names 3 nodes, where its count is 2") {
		t.Errorf("%v", err)
	}
}

// A --current that cuts no GPU is refused, not passed over. Seen in
// review: of two bare layouts the last won without a word, and one after
// N:LAYOUTs that cut every GPU was ignored.
func TestCurrentThatCutsNothingIsRefused(t *testing.T) {
	site := wulver(t)
	for _, layouts := range [][]string{
		{"3g.40gb,3g.40gb", "full", "1g.10gb"},
		{"1:full", "1:full", "3g.40gb,3g.40gb"},
	} {
		if f, err := FleetFromCounts(site, 2, 1, layouts); err == nil {
			t.Errorf("%q: %v, want an error", layouts, f)
		}
	}
	if _, err := FleetFromCounts(site, 3, 1, []string{"1:full", "3g.40gb,3g.40gb"}); err != nil {
		t.Errorf("one bare layout for the GPU left: %v", err)
	}
}
