package runmodel

import (
	"math"
	"strings"
	"testing"

	"github.com/migadvisor/migadvisor/catalog"
	"github.com/migadvisor/migadvisor/catalog/catalogtest"
)

// smBound is a peer whose times are in the ratio of its profiles' SMs.
func smBound(site *catalog.Site, seconds float64, profiles ...string) Peer {
	peer := Peer{}
	for _, name := range profiles {
		p, _ := site.Profile(name)
		peer[name] = seconds / site.Shares(p).SM
	}
	return peer
}

// A job measured on one profile is scaled like the site's other scripts
// when its histories hold some measured on two profiles or more: three
// GEMM-like peers bound by the SMs alone make the whole GPU 108/14 times as
// fast as 1g.10gb, where Wulver's reference benchmarks (all far from
// GPU-bound) would say about twice; the range spans the peers' fixed shares.
func TestPriorFromPeers(t *testing.T) {
	site := catalogtest.Wulver(t)
	p, _ := site.Profile("1g.10gb")
	one := []Point{{Profile: "1g.10gb", Shares: site.Shares(p), Seconds: 1000}}
	full := catalog.Shares{SM: 1, Bandwidth: 1}
	refsOnly, _, _, _ := ReferencesOf(site).Prior().Predict(one, full)

	peers := []Peer{smBound(site, 100, "1g.10gb", "2g.20gb", "3g.40gb", "full"), smBound(site, 50, "2g.20gb", "full"),
		smBound(site, 70, "1g.10gb", "3g.40gb", "full"), {"full": 30}} // the last ran on one profile: no peer
	refs := ReferencesOf(site).WithPeers(PeerPoints(site, peers))
	s := refs.Prior()
	if s.Fixed > 0.01 || !strings.Contains(s.Why, "the median of 3 other scripts") {
		t.Errorf("the prior from SM-bound peers: %+v", s)
	}
	sec, lo, hi, _ := s.Predict(one, full)
	if want := 1000 * 14.0 / 108; math.Abs(sec/want-1) > 0.01 || lo > sec || hi < sec {
		t.Errorf("full from 1g.10gb: %.0f s [%.0f, %.0f], want %.0f s as the peers scaled", sec, lo, hi, want)
	}
	if refsOnly < 2*sec {
		t.Errorf("the reference benchmarks alone should scale far less (%.0f s against %.0f s): the peers made no difference", refsOnly, sec)
	}

	// Peers that disagree: the median, and a range reaching both ends.
	slow := Peer{"1g.10gb": 100, "full": 80} // hardly faster on the whole GPU
	mixed := ReferencesOf(site).WithPeers(PeerPoints(site, []Peer{peers[0], peers[1], slow}))
	sec, lo, hi, _ = mixed.Prior().Predict(one, full)
	if math.Abs(sec/(1000*14.0/108)-1) > 0.01 || hi < 800-1e-6 || lo > 1000*14.0/108+1e-6 {
		t.Errorf("two SM-bound peers and a flat one: %.0f s [%.0f, %.0f], want the SM-bound time with a range up to 800 s", sec, lo, hi)
	}

	// Among many, one outlier does not stretch the range: it spans the 10th
	// to the 90th percentile of the peers' fixed shares.
	many := []Peer{slow}
	for i := range 9 {
		many = append(many, smBound(site, float64(10+i), "1g.10gb", "full"))
	}
	_, _, hi, _ = ReferencesOf(site).WithPeers(PeerPoints(site, many)).Prior().Predict(one, full)
	if hi > 600 {
		t.Errorf("nine SM-bound peers and a flat one: the range reaches %.0f s, the outlier's 800 s", hi)
	}

	// One peer is thin evidence: it gives the time, and the range reaches
	// what the reference benchmarks would say.
	lone := ReferencesOf(site).WithPeers(PeerPoints(site, peers[:1])).Prior()
	sec, lo, hi, _ = lone.Predict(one, full)
	if math.Abs(sec/(1000*14.0/108)-1) > 0.01 || hi < refsOnly-1e-6 || !strings.Contains(lone.Why, "scaled like the one other script") {
		t.Errorf("one peer: %.0f s [%.0f, %.0f] (%s), want the SM-bound time with a range up to the references' %.0f s", sec, lo, hi, lone.Why, refsOnly)
	}

	// Without peers, the reference benchmarks' prior says there were none.
	if why := ReferencesOf(site).WithPeers(nil).Prior().Why; !strings.Contains(why, "no other script known to have run on two profiles or more") {
		t.Errorf("the prior without peers: %s", why)
	}
}

// The newest peers, each script once: the first set's where two hold it.
func TestNewestPeers(t *testing.T) {
	own := []DatedPeer{{Script: "a", Peer: Peer{"full": 1}, At: 10}, {Script: "b", At: 30}}
	site := []DatedPeer{{Script: "a", Peer: Peer{"full": 2}, At: 10}, {Script: "c", At: 20}}
	got := NewestPeers(own, site)
	if len(got) != 3 || got[0].Script != "b" || got[1].Script != "c" || got[2].Peer["full"] != 1 {
		t.Errorf("%+v", got)
	}
	var many []DatedPeer
	for i := range MaxPeers + 10 {
		many = append(many, DatedPeer{Script: string(rune('a' + i)), At: int64(i)})
	}
	if got := NewestPeers(many); len(got) != MaxPeers || got[0].At != MaxPeers+9 {
		t.Errorf("%d peers kept, the first at %d", len(got), got[0].At)
	}
}

// A peer measured on more profiles weighs more: one script probed on four
// profiles, bound by the SMs, outweighs two that ran on two profiles each
// and hardly gained (unweighed, the median would be theirs).
func TestPeersWeighByTheirProfiles(t *testing.T) {
	site := catalogtest.Wulver(t)
	peers := []Peer{smBound(site, 100, "1g.10gb", "2g.20gb", "3g.40gb", "full"), {"1g.10gb": 100, "full": 80}, {"2g.20gb": 90, "full": 80}}
	s := ReferencesOf(site).WithPeers(PeerPoints(site, peers)).Prior()
	if s.Fixed != 0 || !strings.Contains(s.Why, "the median of 3 other scripts") {
		t.Errorf("%+v", s)
	}
}
