package advisor

import (
	"math"
	"strings"
	"testing"

	"github.com/migadvisor/migadvisor/advisor/base/runmodel"
	"github.com/migadvisor/migadvisor/catalog"
	"github.com/migadvisor/migadvisor/catalog/catalogtest"
)

// smBound is a peer whose times are in the ratio of its profiles' SMs.
func smBound(site *catalog.Site, seconds float64, profiles ...string) runmodel.Peer {
	peer := runmodel.Peer{}
	for _, name := range profiles {
		p, _ := site.Profile(name)
		peer[name] = seconds / site.Shares(p).SM
	}
	return peer
}

// A peer is a script's completed runs on the profiles themselves, the
// median per profile; emulated, failed or multi-GPU runs are not its times.
func TestPeerOf(t *testing.T) {
	shares := catalog.Shares{SM: 0.5, Bandwidth: 0.5}
	runs := []Run{
		{Profile: "1g.10gb", Completed: true, Seconds: 90},
		{Profile: "1g.10gb", Completed: true, Seconds: 110},
		{Profile: "1g.10gb", Completed: true, Seconds: 400},
		{Profile: "full", Completed: false, Seconds: 5},
		{Profile: "2g.20gb", Completed: true, Seconds: 10, Emulated: "NVIDIA H100", RanAt: &shares},
		{Profile: "3g.40gb", Completed: true, Seconds: 10, GPUs: 2},
	}
	if p, ok := PeerOf(runs); ok {
		t.Errorf("one profile of its own: %v is no peer", p)
	}
	runs = append(runs, Run{Profile: "full", Completed: true, Seconds: 20})
	p, ok := PeerOf(runs)
	if !ok || len(p) != 2 || p["1g.10gb"] != 110 || p["full"] != 20 {
		t.Errorf("peer %v (ok %v), want 1g.10gb 110 s (the median) and full 20 s", p, ok)
	}
}

// Recommend scales a job measured on one profile like its peers: the
// runtime it predicts on 1g.10gb, and that it says why.
func TestRecommendScalesLikeThePeers(t *testing.T) {
	site := catalogtest.Wulver(t)
	job := Job{Script: "gemm.sh", Runs: []Run{newRun("full", 100).peak(2048), newRun("full", 100).peak(2048)}}
	predicted := func(job Job) (float64, *Recommendation) {
		rec, err := Recommend(site, job, Options{})
		if err != nil {
			t.Fatal(err)
		}
		for _, p := range rec.Profiles {
			if p.Profile == "1g.10gb" && p.RuntimeS != nil {
				return *p.RuntimeS, rec
			}
		}
		t.Fatalf("no runtime on 1g.10gb: %+v", rec.Profiles)
		return 0, nil
	}
	alone, _ := predicted(job)
	job.Peers = []runmodel.Peer{smBound(site, 100, "1g.10gb", "3g.40gb", "full"), smBound(site, 40, "2g.20gb", "full")}
	withPeers, rec := predicted(job)
	if want := 100 * 108 / 14.0; math.Abs(withPeers/want-1) > 0.01 || alone > 0.6*withPeers {
		t.Errorf("1g.10gb: %.0f s with SM-bound peers (want %.0f s), %.0f s without", withPeers, want, alone)
	}
	if !strings.Contains(rec.RuntimeWhy, "2 other scripts measured on two profiles") {
		t.Errorf("why: %s", rec.RuntimeWhy)
	}
}

// A script that looks like one of the site's reference benchmarks, measured
// on one profile, is scaled as that benchmark scaled, before any peer:
// Wulver's CIFAR-10 deep CNN ran 1.86× as long on 1g.10gb as on 3g.40gb.
func TestPriorFromTheBenchmarkItLooksLike(t *testing.T) {
	site := catalogtest.Wulver(t)
	set, _ := catalog.ReferenceFor(site)
	cnn, _ := set.Benchmark("pytorch_cifar10_deepcnn")
	job := Job{Script: "cifar.sh", Runs: []Run{newRun("3g.40gb", 100).peak(600)}, Resembles: cnn,
		Peers: []runmodel.Peer{smBound(site, 100, "1g.10gb", "3g.40gb", "full")}}
	rec, err := Recommend(site, job, Options{})
	if err != nil {
		t.Fatal(err)
	}
	if p := rec.Profiles[0]; p.Profile != "1g.10gb" || p.RuntimeS == nil || math.Abs(*p.RuntimeS/186-1) > 0.05 {
		t.Errorf("1g.10gb: %+v, want about 186 s as the deep CNN scaled", p)
	}
	if !strings.Contains(rec.RuntimeWhy, "pytorch_cifar10_deepcnn reference benchmark it looks like") {
		t.Errorf("why: %s", rec.RuntimeWhy)
	}
	// The benchmark being scored is left out: it cannot predict itself.
	if s := runmodel.ReferencesOf(site, cnn.Name).Like(cnn).Prior(); strings.Contains(s.Why, "looks like") {
		t.Errorf("a left-out benchmark was the prior: %s", s.Why)
	}
}
