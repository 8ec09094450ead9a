package runmodel

import (
	"fmt"
	"math"
	"slices"

	"github.com/migadvisor/migadvisor/catalog"
)

// BenchmarkPoints are a benchmark's completed runs as points on the site.
func BenchmarkPoints(site *catalog.Site, b *catalog.Benchmark) []Point {
	var points []Point
	for _, r := range b.Rows {
		p, ok := site.Profile(r.Profile)
		if !ok || r.OOM || r.Seconds <= 0 {
			continue
		}
		points = append(points, Point{Profile: r.Profile, Shares: site.Shares(p), Seconds: r.Seconds})
	}
	return points
}

// PriorScaling is the scaling of a job measured on one profile or none.
// The GPU's utilization u (%) on that profile bounds how much of the job's
// time can scale with a slice: the GPU was idle the rest of the time, and
// a bigger or smaller slice does not change the idle part. Under the model,
// on a profile whose share of the resource that bounds the job is s,
// u = busy / (fixed + busy) if all of the busy time scales, so the fixed
// share is at least f = (1 − u) / (u·s + 1 − u): from the whole GPU, a
// slice with 1/k of it takes at most (1 − u) + u·k of the time. Where the
// job looks like one of the site's reference benchmarks (References.Like),
// that benchmark's scaling is the prior, its fixed share raised only where
// it would predict the job slower than its idle time allows on one of the
// site's profiles (busyBound), its range kept within the bound. Otherwise the
// bound is the prior (the most the job could slow on a smaller slice, and
// the least it gains on a bigger): its memory utilization m (%, the time
// device memory was read or written; < 0: unknown) says what the busy part
// waits on (boundBy). Without utilization, References.Prior.
func PriorScaling(refs References, utilization, memUtilization float64, measured []Point) Scaling {
	busy := utilization >= 0 && utilization <= 100 && len(measured) == 1
	if s, ok := refs.likePrior(); ok {
		if busy {
			s = s.busyBound(utilization, measured[0], refs.profileShares())
		}
		return s
	}
	if !busy {
		return refs.Prior()
	}
	r, words := boundBy(utilization, memUtilization)
	u, sh := utilization/100, measured[0].Shares.Of(r)
	f := clamp01((1 - u) / (u*sh + 1 - u))
	return Scaling{Resource: r, Fixed: f,
		Source: fmt.Sprintf("fixed share %.2f, from the GPU utilization on %s", f, measured[0].Profile),
		Why: fmt.Sprintf("one profile measured: the GPU was busy %.0f%% of the time on %s%s, and only that part shrinks on a bigger slice",
			utilization, measured[0].Profile, words)}
}

// busyBound raises the fixed share to the least that a GPU busy
// utilization % of the time at point allows on each of the site's
// profiles: only the busy part can scale, and a busy second takes at most
// the ratio of the two profiles' shares of the resource (1/k on a slice of
// 1/k), so from there a profile of share y takes at most (1 − u) + u·x/y
// of the time (x: the point's share), and a bigger one at least that.
// The bound is on the raw shares, never on the scaling's floor (Limit): a
// benchmark's floor was fitted on its wall times, its own idle time in
// them, so reading the job's idle time against it counts the idle time
// twice (GROMACS, busy 34% of the time on a whole GPU, would run 1g.10gb
// 1.6× as long as there, where Wulver's table has 2.74×, well inside the
// 3.3× the utilization allows). A scaling that predicts within the bound
// everywhere is left as it is; its range reaches the bound, not a job
// bound by SMs alone, which the utilization rules out.
func (s Scaling) busyBound(utilization float64, at Point, profiles []catalog.Shares) Scaling {
	x := at.Shares.Of(s.Resource)
	if !(x > 0) {
		return s
	}
	u := utilization / 100
	bound := Scaling{Resource: s.Resource, Fixed: clamp01((1 - u) / (u*x + 1 - u))}
	s.farthest = &bound
	if s.allWithin(bound, at, profiles) {
		return s
	}
	s.table = nil // ruled out: the form, raised to the bound, stands
	f := s.Fixed
	for _, to := range profiles {
		f = math.Max(f, s.leastFixedWithin(bound, at, to))
	}
	if f <= s.Fixed {
		return s
	}
	s.Fixed = f
	if s.spread.ok {
		s.spread.lo, s.spread.hi = math.Max(s.spread.lo, f), math.Max(s.spread.hi, f)
	}
	s.Source += fmt.Sprintf(", raised to %.2f by the GPU utilization on %s", f, at.Profile)
	s.Why += fmt.Sprintf("; its GPU was busy only %.0f%% of the time on %s, and at most that part scales", utilization, at.Profile)
	return s
}

// allWithin reports whether the scaling's time on each profile, from point
// at, lies within bound's (leastFixedWithin).
func (s Scaling) allWithin(bound Scaling, at Point, profiles []catalog.Shares) bool {
	for _, to := range profiles {
		if !within(bound, at, to, s.timeAt(at, to)) {
			return false
		}
	}
	return true
}

// within reports whether time t on shares to, from point at, lies within
// bound's: no slower on a smaller profile, no faster on a bigger one.
func within(bound Scaling, at Point, to catalog.Shares, t float64) bool {
	limit := bound.scale(at, to, bound.Fixed)
	if to.Of(bound.Resource) < at.Shares.Of(bound.Resource) {
		return t <= limit*(1+1e-9)
	}
	return t >= limit*(1-1e-9)
}

// leastFixedWithin is the least fixed share, from the scaling's own, at
// which its time on shares to, from point at, lies within bound's: no
// slower on a smaller profile, no faster on a bigger one. A higher fixed
// share moves every time toward at's, so the search is a bisection.
func (s Scaling) leastFixedWithin(bound Scaling, at Point, to catalog.Shares) float64 {
	ok := func(f float64) bool { return within(bound, at, to, s.scale(at, to, f)) }
	if ok(s.Fixed) {
		return s.Fixed
	}
	lo, hi := s.Fixed, 1.0
	for range 50 {
		if mid := (lo + hi) / 2; ok(mid) {
			hi = mid
		} else {
			lo = mid
		}
	}
	return hi
}

// Memory busy for this share of the GPU's busy time or more is a job bound
// by bandwidth; below boundBySMs, by the SMs. Measured on an H100
// (testdata/nvml/h100-utilization.csv): an fp16 GEMM keeps memory busy 32%
// of its busy time, a 4 GiB copy 100%.
const (
	boundByBandwidth = 0.75
	boundBySMs       = 0.5
)

// BoundBy is the resource the busy part of a job waits on, from its mean
// GPU and memory utilization (percent; memory -1 when unknown): SMs,
// bandwidth, or Mixed when they do not say.
func BoundBy(utilization, memUtilization float64) catalog.Resource {
	if memUtilization < 0 || utilization <= 0 {
		return catalog.Mixed
	}
	r, _ := boundBy(utilization, memUtilization)
	return r
}

// boundBy is the resource the busy part of a job waits on, from its GPU and
// memory utilization, and those words for the reason.
func boundBy(utilization, memUtilization float64) (catalog.Resource, string) {
	if memUtilization < 0 || utilization <= 0 {
		return catalog.SMs, ""
	}
	words := fmt.Sprintf(" (its memory %.0f%%)", memUtilization)
	switch ratio := memUtilization / utilization; {
	case ratio >= boundByBandwidth:
		return catalog.Bandwidth, words
	case ratio < boundBySMs:
		return catalog.SMs, words
	}
	return catalog.Mixed, words
}

// References are what a site already measured: its reference benchmarks'
// completed profiles, a set per benchmark, less those named to leave out
// (the benchmark being scored, which must not predict itself); and the
// peers, the other scripts its histories measured on two profiles or more.
type References struct {
	site    *catalog.Site
	exclude []string
	sets    []referencePoints
	peers   [][]Point
	like    *referencePoints // the benchmark the job looks like, if any
}

type referencePoints struct {
	name   string
	points []Point
}

// ReferencesOf are the site's reference benchmarks but those named.
func ReferencesOf(site *catalog.Site, exclude ...string) References {
	refs := References{site: site, exclude: exclude}
	if site == nil {
		return refs
	}
	if set, ok := catalog.ReferenceFor(site); ok {
		for i := range set.Benchmarks {
			if b := &set.Benchmarks[i]; b.IsPrior() && !slices.Contains(exclude, b.Name) {
				refs.sets = append(refs.sets, referencePoints{b.Name, usable(BenchmarkPoints(site, b))})
			}
		}
	}
	return refs
}

// profileShares are the shares of the site's profiles.
func (refs References) profileShares() []catalog.Shares {
	if refs.site == nil {
		return nil
	}
	out := make([]catalog.Shares, len(refs.site.Profiles))
	for i := range refs.site.Profiles {
		out[i] = refs.site.Shares(&refs.site.Profiles[i])
	}
	return out
}

// each calls fn with each benchmark's name and usable points.
func (refs References) each(fn func(name string, points []Point)) {
	for _, set := range refs.sets {
		fn(set.name, set.points)
	}
}

// calibrationExclude is the benchmark a prediction's range must not learn
// from ("": none).
func (refs References) calibrationExclude() string {
	if len(refs.exclude) == 0 {
		return ""
	}
	return refs.exclude[0]
}

// WithPeers are the references with the peers: other scripts' completed
// times, one point per profile (PeerPoints). Those measured on fewer than
// two profiles say nothing of scaling and are left out.
func (refs References) WithPeers(peers [][]Point) References {
	refs.peers = nil
	for _, p := range peers {
		if p = usable(p); distinctShares(catalog.SMs, p) >= 2 {
			refs.peers = append(refs.peers, p)
		}
	}
	return refs
}

// Like are the references with the benchmark the job's script looks like
// (advisor.RecogniseWorkload; nil: none): a job measured on one profile is
// scaled as that benchmark's own profiles explain it, before any peer. A
// benchmark left out (the one being scored) is not.
func (refs References) Like(b *catalog.Benchmark) References {
	refs.like = nil
	if b != nil && b.IsPrior() && !slices.Contains(refs.exclude, b.Name) {
		refs.like = &referencePoints{b.Name, usable(BenchmarkPoints(refs.site, b))}
	}
	return refs
}

// likePrior is the scaling of the benchmark the job looks like, as its own
// profiles explain it (the other benchmarks deciding between two); ok is
// false without one measured on two profiles.
func (refs References) likePrior() (Scaling, bool) {
	l := refs.like
	if l == nil {
		return Scaling{}, false
	}
	others := refs
	others.like, others.exclude = nil, append(slices.Clone(refs.exclude), l.name)
	others.sets = slices.DeleteFunc(slices.Clone(refs.sets), func(r referencePoints) bool { return r.name == l.name })
	s, ok := ExplainTimes(l.points, others)
	if !ok {
		return Scaling{}, false
	}
	why := s.Bound()
	if len(s.own) > 0 {
		why += fmt.Sprintf(", which predicts each of its %d profiles from the others to %.1f%%", len(l.points), 100*meanAbs(s.own))
	}
	s.exclude, s.guess, s.own, s.table = refs.calibrationExclude(), true, nil, l.points
	s.Source = fmt.Sprintf("the %s reference benchmark's: %s", l.name, s.Source)
	s.Why = fmt.Sprintf("one profile measured: scaled like the %s reference benchmark it looks like (%s; between two of its profiles, as its table has them)", l.name, why)
	return s, true
}

// Prior is the scaling of a job measured on one profile: like the
// reference benchmark its script looks like, where it looks like one.
// Otherwise how the site's other jobs scaled is the best guess of how this
// one does: the median of the peers' fixed shares on the SMs, each weighed
// by the profiles it was measured on (peerFixedShares), the range reaching
// the 10th and 90th percentiles of them (all of them, with fewer than ten
// peers). The peers come first: they are the site's own jobs, where the
// reference benchmarks are a few that a docs team chose (Wulver's five are
// all far from GPU-bound, and a GEMM there scales with the SMs alone).
// Fewer than fewPeers are thin evidence: the range also reaches the
// reference benchmarks' median. Without peers, that median itself, its
// range reaching a job bound by SMs alone. Leaving a job's own benchmark
// out measures how well the prior serves a job the references do not
// already hold.
func (refs References) Prior() Scaling {
	if s, ok := refs.likePrior(); ok {
		return s
	}
	fs, n := peerFixedShares(refs.peers)
	if n == 0 {
		return refs.referencePrior()
	}
	f, lo, hi := Median(fs), fs[0], fs[len(fs)-1]
	if n >= 10 {
		lo, hi = quantile(fs, 0.1), quantile(fs, 0.9)
	}
	if n < fewPeers {
		byRefs := refs.referencePrior().Fixed
		lo, hi = math.Min(lo, byRefs), math.Max(hi, byRefs)
	}
	scripts := "the one other script"
	if n > 1 {
		scripts = fmt.Sprintf("the median of %d other scripts", n)
	}
	why := fmt.Sprintf("one profile measured: scaled like %s measured on two profiles or more (%.0f%% of the time fixed", scripts, 100*f)
	if n > 1 && math.Round(100*fs[0]) != math.Round(100*fs[len(fs)-1]) {
		why += fmt.Sprintf("; theirs range from %.0f%% to %.0f%%", 100*fs[0], 100*fs[len(fs)-1])
	}
	return Scaling{Resource: catalog.SMs, Fixed: f, exclude: refs.calibrationExclude(), spread: fixedRange{lo, hi, true},
		Why:    why + ")",
		Source: fmt.Sprintf("fixed share %.2f, %s measured on two profiles or more", f, scripts)}
}

// fewPeers is how many peers the prior needs before the range leaves the
// reference benchmarks behind.
const fewPeers = 3

// referencePrior is the prior without peers: the median of the reference
// benchmarks' fixed shares on the SMs, else a guess halfway.
func (refs References) referencePrior() Scaling {
	var sets [][]Point
	refs.each(func(_ string, points []Point) { sets = append(sets, points) })
	fs := fixedShares(sets)
	exclude := refs.calibrationExclude()
	if len(fs) == 0 {
		return Scaling{Fixed: 0.5, Source: "fixed share 0.5, a guess between GPU-bound and not", exclude: exclude, guess: true,
			Why: "one profile measured, no other script known to have run on two profiles or more, and no reference benchmarks: a guess halfway between GPU-bound and not"}
	}
	f := Median(fs)
	why := fmt.Sprintf("one profile measured, and no other script known to have run on two profiles or more: scaled like the median of %d %s reference benchmarks (%.0f%% of the time fixed)", len(fs), refs.site.Name, 100*f)
	return Scaling{Resource: catalog.SMs, Fixed: f, Why: why, exclude: exclude, guess: true,
		Source: fmt.Sprintf("fixed share %.2f, the median of %d %s reference benchmarks", f, len(fs), refs.site.Name)}
}

// quantile is the q-quantile of sorted values, linearly interpolated.
func quantile(sorted []float64, q float64) float64 {
	x := q * float64(len(sorted)-1)
	i := int(x)
	if i+1 >= len(sorted) {
		return sorted[len(sorted)-1]
	}
	return sorted[i] + (x-float64(i))*(sorted[i+1]-sorted[i])
}

// fixedShares are the fixed shares of each set of points fitted on the
// SMs, sorted.
func fixedShares(sets [][]Point) []float64 {
	var fs []float64
	for _, points := range sets {
		if f, ok := fitFixed(catalog.SMs, points); ok {
			fs = append(fs, f)
		}
	}
	slices.Sort(fs)
	return fs
}

// peerFixedShares are the peers' fixed shares on the SMs, sorted, each
// weighed by how much it says of scaling: as many times as the profiles it
// was measured on beyond the first (a script probed on six profiles is
// surer evidence than two times that any fixed share fits exactly); and how
// many peers they are. A peer whose times are in the ratio of its SMs
// within run-to-run noise has none (a least-squares fit would read the
// noise as one). Cheap: the wrapper may weigh a few hundred peers.
func peerFixedShares(peers [][]Point) (weighed []float64, n int) {
	for _, points := range peers {
		f, ok := 0.0, true
		if !pureOnSMs(points) {
			f, ok = fitFixed(catalog.SMs, points)
		}
		if !ok {
			continue
		}
		n++
		for range distinctShares(catalog.SMs, points) - 1 {
			weighed = append(weighed, f)
		}
	}
	slices.Sort(weighed)
	return weighed, n
}

// pureOnSMs reports whether times are in the ratio of the points' SM
// shares within run-to-run noise, as pureOfTwo judges two.
func pureOnSMs(points []Point) bool {
	lo, hi := math.Inf(1), math.Inf(-1)
	for _, p := range points {
		work := math.Log(p.Seconds * p.Shares.SM)
		lo, hi = math.Min(lo, work), math.Max(hi, work)
	}
	return hi-lo <= 2*RunNoise
}

// PeerPoints are the peers' times as points on the site's profiles; a
// profile the site lacks is left out.
func PeerPoints(site *catalog.Site, peers []Peer) [][]Point {
	out := make([][]Point, 0, len(peers))
	for _, peer := range peers {
		var points []Point
		for _, name := range SortedProfiles(peer) {
			if p, ok := site.Profile(name); ok {
				points = append(points, Point{Profile: name, Shares: site.Shares(p), Seconds: peer[name]})
			}
		}
		out = append(out, points)
	}
	return out
}

// forPair is the explanation that, fitted on the same two profiles of each
// reference benchmark measured on both, best predicted its other profiles
// (the median over the benchmarks of each one's mean error, so that no one
// benchmark decides for the rest): two times fit every explanation exactly,
// and the site's own benchmarks say which has held between those profiles.
// ok is false when no reference benchmark was measured on both and on
// another.
func (refs References) forPair(a, b Point) (best explanation, medianErr float64, benchmarks int, ok bool) {
	errs := map[explanation][]float64{} // per benchmark
	refs.each(func(_ string, points []Point) {
		i := slices.IndexFunc(points, func(p Point) bool { return p.Profile == a.Profile })
		j := slices.IndexFunc(points, func(p Point) bool { return p.Profile == b.Profile })
		if i < 0 || j < 0 || len(points) < 3 {
			return
		}
		pair := []Point{points[i], points[j]}
		benchmarks++
		for _, e := range explanations {
			s, fitted := e.fit(pair)
			if !fitted {
				continue
			}
			var own []float64
			for k, p := range points {
				if k != i && k != j {
					own = append(own, math.Log(p.Seconds/s.at(pair, p.Shares)))
				}
			}
			errs[e] = append(errs[e], meanAbs(own))
		}
	})
	medianErr = math.Inf(1)
	for _, e := range explanations {
		if len(errs[e]) == benchmarks && benchmarks > 0 {
			slices.Sort(errs[e])
			if m := Median(errs[e]); m < medianErr-1e-9 {
				best, medianErr, ok = e, m, true
			}
		}
	}
	return best, medianErr, benchmarks, ok
}
