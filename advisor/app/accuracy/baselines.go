package accuracy

import (
	"cmp"
	"math"
	"slices"

	"github.com/migadvisor/migadvisor/advisor/base/runmodel"
	"github.com/migadvisor/migadvisor/catalog"
)

// The baselines are the simple rules the runtime model must beat to be
// worth its complexity. Their rules were fixed before any of them was
// scored, and are the same under every protocol: each scales the time of
// one known profile, the one nearest the target in the share the rule
// scales with (by ratio; the first known of equal distance), and never fits
// the case's own times, however many are known. Fitting them is what the
// model does.

// ShareLaw is a baseline that scales the time of the known profile nearest
// the target in one share of the GPU by that share to a power:
// time ∝ 1/share^Power.
type ShareLaw struct {
	Label    string
	Resource catalog.Resource // catalog.SMs or catalog.Bandwidth
	Power    float64
}

// The share laws scored beside the model. The bandwidth share is the
// profile's in the catalog's GPU data (catalog.Profile.BandwidthShare), as
// the runtime model reads it.
var (
	Naive          = ShareLaw{"naive 1/SM", catalog.SMs, 1}
	SqrtSM         = ShareLaw{"1/√SM", catalog.SMs, 0.5}
	BandwidthShare = ShareLaw{"1/bandwidth", catalog.Bandwidth, 1}
)

func (l ShareLaw) Name() string { return l.Label }

func (l ShareLaw) Predict(_ Case, known []runmodel.Point, target runmodel.Point) (float64, float64, float64, bool) {
	to := target.Shares.Of(l.Resource)
	from, ok := nearestOn(l.Resource, known, to)
	if !ok {
		return 0, 0, 0, false
	}
	t := from.Seconds * math.Pow(from.Shares.Of(l.Resource)/to, l.Power)
	return t, t, t, true
}

// nearestOn is the known point nearest share to of resource r, by ratio;
// ok is false when there is none or a share is not positive.
func nearestOn(r catalog.Resource, known []runmodel.Point, to float64) (runmodel.Point, bool) {
	known = slices.DeleteFunc(slices.Clone(known), func(p runmodel.Point) bool { return !(p.Shares.Of(r) > 0) })
	if !(to > 0) || len(known) == 0 {
		return runmodel.Point{}, false
	}
	return slices.MinFunc(known, func(a, b runmodel.Point) int {
		return cmp.Compare(math.Abs(math.Log(a.Shares.Of(r)/to)), math.Abs(math.Log(b.Shares.Of(r)/to)))
	}), true
}

// PeersFixed is the baseline of a fixed part taken from the peers: the
// fixed share the model's prior takes from the case's peers (the set's
// other cases; References.Prior: the median of their fixed shares fitted
// on the SMs, else the site's reference benchmarks' but the case's own),
// applied as Amdahl's law in the SM share to the known profile nearest the
// target in SMs: t = t₀ × (f + (1−f)/s) / (f + (1−f)/s₀). With one profile
// known it is the model's point prediction (the model's prior is this
// rule), without the model's range.
type PeersFixed struct {
	Site  *catalog.Site
	Cases []Case // the set scored: each case's peers are the others, as the model's are
}

func (PeersFixed) Name() string { return "peers' fixed part" }

func (p PeersFixed) Predict(c Case, known []runmodel.Point, target runmodel.Point) (float64, float64, float64, bool) {
	to := target.Shares.SM
	from, ok := nearestOn(catalog.SMs, known, to)
	if !ok {
		return 0, 0, 0, false
	}
	f := peerReferences(p.Site, p.Cases, c).Prior().Fixed
	g := func(s float64) float64 { return f + (1-f)/s }
	t := from.Seconds * g(to) / g(from.Shares.SM)
	return t, t, t, true
}

// peerReferences are what the model knows besides a case's own times: the
// site's reference benchmarks but the case's own, and its peers, the set's
// other cases.
func peerReferences(site *catalog.Site, cases []Case, c Case) runmodel.References {
	var peers [][]runmodel.Point
	for _, o := range cases {
		if o.Name != c.Name {
			peers = append(peers, o.Points)
		}
	}
	return runmodel.ReferencesOf(site, c.benchmark()).WithPeers(peers)
}

// Baselines are the simple rules scored beside the model on a set, in the
// order the table prints them.
func Baselines(site *catalog.Site, cases []Case) []Predictor {
	return []Predictor{Naive, SqrtSM, BandwidthShare, PeersFixed{site, cases}}
}
