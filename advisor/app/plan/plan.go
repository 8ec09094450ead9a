package plan

import (
	"fmt"
	"slices"

	"github.com/migadvisor/migadvisor/advisor/base/replay"
	"github.com/migadvisor/migadvisor/advisor/base/replay/fidelity"
	"github.com/migadvisor/migadvisor/catalog"
)

// Request is what Make plans from.
type Request struct {
	Site   *catalog.Site
	Today  Fleet
	Demand *Demand
	Search Options
	Replay replay.Options
}

// Plan is the layout proposed for the site, beside today's.
type Plan struct {
	Site   string        `json:"site"`
	Demand DemandSummary `json:"demand"`
	// Current is today's layout replayed with the demand; Proposed the
	// best layout the search found at no more SU (nil: none beats
	// today's, which is then the advice); Others the next best.
	Current    *Outcome    `json:"current"`
	Proposed   *Outcome    `json:"proposed"`
	Configs    *Configs    `json:"configs,omitempty"` // what applies Proposed
	Others     []*Outcome  `json:"others"`
	Calculator *Calculator `json:"mig_calculator,omitempty"`
	// Fidelity is the period's queue replayed as it ran on today's
	// layout, its waits set against the ones Slurm recorded.
	Fidelity *fidelity.Result `json:"fidelity"`
	Replays  int              `json:"replays"`

	rank map[string]int // each profile's place from the smallest
}

// DemandSummary counts the period's GPU jobs by what the plan made of them.
type DemandSummary struct {
	Jobs    int            `json:"jobs"`
	Moved   int            `json:"moved"`
	Kept    int            `json:"kept"`
	Unknown int            `json:"unknown_fit"`
	Whole   int            `json:"multi_gpu"`
	OOM     int            `json:"out_of_memory,omitempty"`
	Left    map[string]int `json:"left_out,omitempty"`
	// SpentSU is what the jobs spent as they ran, on the profiles they ran
	// on: the layouts' SU are the same jobs as each layout runs them, on
	// the slice the report moves them to where the layout has it.
	SpentSU float64 `json:"spent_su"`
}

// Make searches the layouts for the demand and compares the best with
// today's fleet and with the MIG calculator's.
func Make(req Request) (*Plan, error) {
	d := req.Demand
	p := &Plan{Site: req.Site.Name, rank: map[string]int{}, Demand: DemandSummary{Jobs: len(d.Jobs), Moved: d.Moved, Kept: d.Kept, Unknown: d.Unknown, Whole: d.Whole, OOM: d.OOM, Left: d.LeftWhy,
		SpentSU: d.spentSU()}}
	for i, name := range d.Profiles {
		p.rank[name] = i
	}
	if len(req.Today) == 0 {
		return nil, fmt.Errorf("no GPU nodes to plan: give --gpus (and --gpus-per-node, --current), or [[gpu_nodes]] in the site file")
	}
	if len(d.Jobs) == 0 {
		return nil, fmt.Errorf("no GPU job of the period can be replayed (%s): collect the period's accounting first, or widen --since", leftWords(d))
	}
	ev := newEvaluator(req.Site, d, req.Today, req.Replay)
	var err error
	if p.Current, err = ev.evaluate(req.Today, mid, true); err != nil {
		return nil, err
	}
	if p.Fidelity, err = ev.fidelity(); err != nil {
		return nil, err
	}
	cands, err := Candidates(req.Site)
	if err != nil {
		return nil, err
	}
	s := &searcher{ev: ev, cands: cands, seen: map[string]*Outcome{}, today: p.Current, left: replaysFor(req.Search, len(d.Jobs))}
	ranked, err := s.search()
	if err != nil {
		return nil, err
	}
	p.Replays = len(s.seen) + 1
	top := req.Search.Top
	if top <= 0 {
		top = 3
	}
	for _, o := range ranked {
		if len(p.Others) == top {
			break
		}
		if o.Changes > 0 { // today's own layout is the first row already
			p.Others = append(p.Others, o)
		}
	}
	if len(p.Others) > 0 && better(p.Others[0], p.Current) {
		p.Proposed, p.Others = p.Others[0], p.Others[1:]
	}
	if p.Calculator = calculate(req.Site, d.calc, len(req.Today.GPUs())); p.Calculator != nil && p.Calculator.Profile != "" {
		if p.Calculator.Outcome, err = ev.evaluate(calculatorFleet(req.Today, p.Calculator, req.Site), mid, true); err != nil {
			return nil, err
		}
	}
	for _, o := range p.shown() {
		if err := ev.finish(o, o == p.Current || o == p.Proposed); err != nil {
			return nil, err
		}
	}
	for _, o := range p.Others {
		o.waits, o.placed = nil, nil // charted are today's, the proposal's and the calculator's
	}
	if p.Proposed != nil {
		if p.Configs, err = ConfigsFor(req.Site, p.Proposed.Fleet, req.Today); err != nil {
			return nil, err
		}
	}
	return p, nil
}

// shown are the outcomes the plan prints.
func (p *Plan) shown() []*Outcome {
	out := []*Outcome{p.Current}
	if p.Proposed != nil {
		out = append(out, p.Proposed)
	}
	out = append(out, p.Others...)
	if p.Calculator != nil && p.Calculator.Outcome != nil {
		out = append(out, p.Calculator.Outcome)
	}
	return out
}

// finish adds what only shown outcomes need: the details (stranded
// slices, waits), replayed again where the search kept only the figures,
// and where ranged, the runtimes' range.
func (e *evaluator) finish(o *Outcome, ranged bool) error {
	if !o.detailed {
		again, err := e.evaluate(o.Fleet, mid, true)
		if err != nil {
			return err
		}
		*o = *again
	}
	if !ranged || o.Range != nil {
		return nil
	}
	fastest, err := e.evaluate(o.Fleet, fast, false)
	if err != nil {
		return err
	}
	slowest, err := e.evaluate(o.Fleet, slow, false)
	if err != nil {
		return err
	}
	o.Range = &OutcomeRange{WaitP95S: [2]int64{min(fastest.WaitP95S, slowest.WaitP95S), max(fastest.WaitP95S, slowest.WaitP95S)},
		SU: [2]float64{fastest.SU, slowest.SU}}
	return nil
}

// replaysFor is how many replays the budget allows a demand of n jobs.
func replaysFor(o Options, n int) int {
	budget := o.Budget
	if budget <= 0 {
		budget = DefaultBudget
	}
	return max(min(budget/max(n, 1), maxReplays), 8)
}

// calculatorFleet is today's fleet with the calculator's GPUs cut into
// two 40 GB slices each, by whole nodes, whole GPUs first.
func calculatorFleet(today Fleet, c *Calculator, site *catalog.Site) Fleet {
	f := make(Fleet, len(today))
	cut := []string{c.Profile, c.Profile}
	left := c.GPUs
	whole, _ := site.WholeProfile()
	for i, n := range today {
		f[i] = Node{Name: n.Name, GPUs: slices.Clone(n.GPUs), MadeUp: n.MadeUp}
		allWhole := slices.IndexFunc(n.GPUs, func(g []string) bool { return len(g) != 1 || g[0] != whole.Name }) < 0
		if left > 0 && allWhole {
			for g := range f[i].GPUs {
				f[i].GPUs[g] = cut
			}
			left -= len(n.GPUs)
		}
	}
	return f
}

func leftWords(d *Demand) string {
	if d.Left == 0 {
		return "the history has no GPU job that ended in it"
	}
	var parts []string
	for why, n := range d.LeftWhy {
		parts = append(parts, fmt.Sprintf("%d %s", n, why))
	}
	slices.Sort(parts)
	return fmt.Sprintf("%d GPU jobs left out: %v", d.Left, parts)
}
