package plan

import (
	"cmp"
	"fmt"
	"math"
	"slices"
	"strings"

	"github.com/migadvisor/migadvisor/catalog"
)

// Candidates are the layouts of one GPU the plan chooses among: the whole
// GPU, then every layout NVIDIA's placements allow of the site's own MIG
// profiles (a profile the site does not offer has no runtimes or price),
// fewest instances first. Each is the site's profile names.
func Candidates(site *catalog.Site) ([][]string, error) {
	whole, err := site.GPULayout(catalog.WholeGPU)
	if err != nil {
		return nil, err
	}
	out := [][]string{whole}
	model, ok := site.Model()
	if !ok {
		return out, nil
	}
	bySlice := map[string]string{}
	for _, p := range site.Profiles {
		if p.IsMIG() && p.GPUCount <= 1 {
			bySlice[p.Slice] = p.Name
		}
	}
	for _, l := range model.Layouts() {
		names := make([]string, 0, len(l))
		for _, in := range l {
			if n, ok := bySlice[in.Profile]; ok {
				names = append(names, n)
			}
		}
		if len(names) == len(l) {
			out = append(out, names)
		}
	}
	return out, nil
}

// Options tune the search.
type Options struct {
	// Budget bounds the search's replays by their size: job-replays in
	// all (a replay of n jobs costs n). 0: DefaultBudget.
	Budget int
	// Top is how many layouts to show beside today's. 0: 3.
	Top int
}

// DefaultBudget is about 30 s of replays on two cores: 20 replays of a
// year of a 500-GPU site (a million jobs, BenchmarkPlan1M), up to
// maxReplays of a month of 10,000.
const DefaultBudget = 20_000_000

// maxReplays bounds the replays of a small demand, where the budget
// would allow more than the search has to try.
const maxReplays = 600

// searcher walks layouts of the fleet, node by node alike.
type searcher struct {
	ev    *evaluator
	cands [][]string
	left  int // replays the budget allows still
	seen  map[string]*Outcome
	today *Outcome
}

// fleetOf is the fleet with counts[c] nodes cut as candidate c on each of
// their GPUs: a node keeps today's layout where it is one of them, so
// that a proposal re-cuts as few GPUs as it can.
func (s *searcher) fleetOf(counts []int) Fleet {
	today := s.ev.today
	need := slices.Clone(counts)
	assigned := make([]int, len(today))
	for i := range assigned {
		assigned[i] = -1
		if c := s.uniform(today[i]); c >= 0 && need[c] > 0 {
			assigned[i] = c
			need[c]--
		}
	}
	c := 0
	for i := range assigned {
		for assigned[i] < 0 {
			for c < len(need) && need[c] == 0 {
				c++
			}
			if c == len(need) {
				assigned[i] = 0 // counts short of the nodes: the rest whole
				break
			}
			assigned[i] = c
			need[c]--
		}
	}
	f := make(Fleet, len(today))
	for i, n := range today {
		f[i] = Node{Name: n.Name, GPUs: make([][]string, len(n.GPUs)), MadeUp: n.MadeUp}
		for g := range n.GPUs {
			f[i].GPUs[g] = s.cands[assigned[i]]
		}
	}
	return f
}

// uniform is the candidate every GPU of the node is cut as, or -1.
func (s *searcher) uniform(n Node) int {
	for c, l := range s.cands {
		if slices.IndexFunc(n.GPUs, func(g []string) bool { return !slices.Equal(g, l) }) < 0 {
			return c
		}
	}
	return -1
}

// try replays counts unless it was replayed or the budget is spent.
func (s *searcher) try(counts []int) (*Outcome, error) {
	k := fmt.Sprint(counts)
	if o, ok := s.seen[k]; ok {
		return o, nil
	}
	if s.left <= 0 {
		return nil, nil
	}
	s.left--
	o, err := s.ev.evaluate(s.fleetOf(counts), mid, false) // figures only: a large site's search keeps no job's start
	if err != nil {
		return nil, err
	}
	s.seen[k] = o
	return o, nil
}

// better orders outcomes: fewer jobs the layout cannot hold, then the
// lower p95 wait (a minute or 2% apart, else a tie), then the lower SU
// (0.5% apart), then fewer GPUs re-cut, then fewer kinds of node, then
// the lower median wait.
func better(a, b *Outcome) bool {
	if a.Unplaced != b.Unplaced {
		return a.Unplaced < b.Unplaced
	}
	if d := a.WaitP95S - b.WaitP95S; math.Abs(float64(d)) > max(60, 0.02*float64(max(a.WaitP95S, b.WaitP95S))) {
		return d < 0
	}
	if d := a.SU - b.SU; math.Abs(d) > 0.005*max(a.SU, b.SU) {
		return d < 0
	}
	if a.Changes != b.Changes {
		return a.Changes < b.Changes
	}
	if ka, kb := a.Fleet.kinds(), b.Fleet.kinds(); ka != kb {
		return ka < kb // nodes alike where the demand allows
	}
	return a.WaitP50S < b.WaitP50S
}

// allowed: more of the period's jobs than today's layout holds, whatever
// their SU (a job a layout cannot hold costs nothing, so against one that
// drops jobs, SU would refuse every layout that runs them); else as many,
// at no more SU.
func (s *searcher) allowed(o *Outcome) bool {
	if o == nil {
		return false
	}
	return o.Unplaced < s.today.Unplaced || o.Unplaced == s.today.Unplaced && o.SU <= s.today.SU*(1+1e-9)
}

// search finds the best layouts: for each candidate, cut the number of
// nodes the demand's slice-hours call for (a fluid estimate), then walk
// that count and mixes of the best candidates node by node while the
// replays improve on the best.
func (s *searcher) search() ([]*Outcome, error) {
	nodes := len(s.ev.today)
	order := s.fluidOrder()
	var best *Outcome
	var bestCounts []int
	consider := func(counts []int) (bool, error) {
		o, err := s.try(counts)
		if err != nil || o == nil || !s.allowed(o) {
			return false, err
		}
		if best == nil || better(o, best) {
			best, bestCounts = o, slices.Clone(counts)
			return true, nil
		}
		return false, nil
	}
	if counts, ok := s.todayCounts(); ok {
		if _, err := consider(counts); err != nil {
			return nil, err
		}
	}
	// Half the budget on the candidates the fluid estimate ranks first,
	// half on walking from the best of them.
	seeds := max(s.left/2, 2)
	for _, fc := range order[:min(seeds, len(order))] {
		counts := make([]int, len(s.cands))
		counts[fc.cand], counts[0] = fc.nodes, nodes-fc.nodes
		if _, err := consider(counts); err != nil {
			return nil, err
		}
	}
	// Walk node by node from the best: one node from one candidate to
	// another, among the candidates the fluid estimate ranks first.
	top := s.topCandidates(order, 4)
	for improved := true; improved && s.left > 0 && best != nil; {
		improved = false
		from := slices.Clone(bestCounts)
		for _, a := range top {
			for _, b := range top {
				if a == b || from[a] == 0 {
					continue
				}
				next := slices.Clone(from)
				next[a]--
				next[b]++
				ok, err := consider(next)
				if err != nil {
					return nil, err
				}
				improved = improved || ok
			}
		}
	}
	var all []*Outcome
	for _, o := range s.seen {
		if s.allowed(o) {
			all = append(all, o)
		}
	}
	slices.SortFunc(all, func(a, b *Outcome) int {
		switch {
		case better(a, b):
			return -1
		case better(b, a):
			return 1
		}
		return strings.Compare(a.Layout, b.Layout)
	})
	return all, nil
}

// fluidCount is a candidate cut on a number of nodes, the rest whole.
type fluidCount struct {
	cand, nodes int
	load        float64 // the busiest profile's demand over its capacity
}

// fluidOrder ranks the candidates by the fluid estimate: for each, the
// number of nodes to cut that loads the busiest profile least (the
// demand's slot-hours over the slices' hours in the period), best first;
// today's own layouts and all-whole come with them.
func (s *searcher) fluidOrder() []fluidCount {
	d := s.ev.demand
	span := float64(max(d.span(), 1))
	var out []fluidCount
	nodes := len(s.ev.today)
	perNode := len(s.ev.today[0].GPUs)
	for c := 1; c < len(s.cands); c++ {
		demand := s.slotSeconds(c)
		bestLoad, bestN := math.Inf(1), 0
		for n := 1; n <= nodes; n++ {
			load := 0.0
			for p, sec := range demand {
				slots := float64(n * perNode * count(s.cands[c], p))
				if p == s.cands[0][0] {
					slots += float64((nodes - n) * perNode)
				}
				load = max(load, sec/(slots*span))
			}
			if load < bestLoad {
				bestLoad, bestN = load, n
			}
		}
		out = append(out, fluidCount{c, bestN, bestLoad})
	}
	slices.SortFunc(out, func(a, b fluidCount) int { return cmp.Compare(a.load, b.load) })
	return append([]fluidCount{{0, 0, 0}}, out...)
}

// slotSeconds is the demand's slot-seconds on each profile when the GPUs
// are whole or cut as candidate c.
func (s *searcher) slotSeconds(c int) map[string]float64 {
	offered := map[string]int{s.cands[0][0]: math.MaxInt32}
	for _, p := range s.cands[c] {
		offered[p] = math.MaxInt32
	}
	out := map[string]float64{}
	d := s.ev.demand
	for i := range d.Jobs {
		if k, ok := s.ev.profileFor(i, offered); ok {
			r, _ := d.on(i, k)
			out[d.Profiles[k]] += float64(r.of(mid)) * float64(d.Jobs[i].Count)
		}
	}
	return out
}

func count(layout []string, p string) int {
	n := 0
	for _, q := range layout {
		if q == p {
			n++
		}
	}
	return n
}

// topCandidates are the whole GPU and the n candidates the fluid estimate
// ranks first.
func (s *searcher) topCandidates(order []fluidCount, n int) []int {
	out := []int{0}
	for _, fc := range order {
		if fc.cand != 0 && len(out) <= n {
			out = append(out, fc.cand)
		}
	}
	return out
}

// span is the period's length in seconds: the first submission to the
// last end where the period is open.
func (d *Demand) span() int64 {
	from, until := d.From, d.Until
	for _, j := range d.Jobs {
		if from == 0 || j.Submit < from {
			from = j.Submit
		}
		until = max(until, j.Start+j.ElapsedS)
	}
	return until - from
}

// todayCounts are today's fleet as counts of candidates, where each of its
// nodes is cut alike.
func (s *searcher) todayCounts() ([]int, bool) {
	counts := make([]int, len(s.cands))
	for _, n := range s.ev.today {
		c := s.uniform(n)
		if c < 0 {
			return nil, false
		}
		counts[c]++
	}
	return counts, true
}
