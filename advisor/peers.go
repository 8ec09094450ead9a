package advisor

import (
	"cmp"
	"maps"
	"slices"
)

// A Peer is another script's completed times, the median per profile it
// ran on: how that job scaled. A job measured on one profile alone is
// scaled like the median of its peers (References.Prior), the site's own
// jobs, before the site's reference benchmarks.
type Peer map[string]float64

// MaxPeers is how many peers a history's index keeps, those run most
// recently: enough for a stable median, few enough that reading them costs
// the wrapper nothing it would notice.
const MaxPeers = 256

// PeerOf is the peer a script's runs make: its completed runs on one GPU
// of a profile itself (an emulated slice's time is not the profile's), the
// median seconds per profile; ok only when they cover two profiles or more.
func PeerOf(runs []Run) (Peer, bool) {
	byProfile := map[string][]float64{}
	for _, r := range runs {
		if r.Completed && r.Seconds > 0 && r.Profile != "" && r.GPUs <= 1 && r.Emulated == "" && r.RanAt == nil {
			byProfile[r.Profile] = append(byProfile[r.Profile], r.Seconds)
		}
	}
	if len(byProfile) < 2 {
		return nil, false
	}
	peer := Peer{}
	for p, secs := range byProfile {
		slices.Sort(secs)
		peer[p] = median(secs)
	}
	return peer, true
}

// NeedsPrior reports whether a script's runs leave its scaling to a prior
// (they cover fewer than two profiles: PeerOf), so that its peers and the
// reference benchmark it looks like are worth reading.
func NeedsPrior(runs []Run) bool {
	_, scaled := PeerOf(runs)
	return !scaled
}

// SortedProfiles are the peer's profiles by name.
func SortedProfiles(p Peer) []string { return slices.Sorted(maps.Keys(p)) }

// DatedPeer is a peer, a key for its script that names nothing (the same
// in a user's history and the site's, so that it counts once), and when
// the script last ran (unix seconds), to keep the newest.
type DatedPeer struct {
	Script string
	Peer   Peer
	At     int64
}

// NewestPeers are the peers of the sets, each script once (the first
// set's where several hold it), the MaxPeers run most recently.
func NewestPeers(sets ...[]DatedPeer) []DatedPeer {
	seen := map[string]bool{}
	var all []DatedPeer
	for _, set := range sets {
		for _, p := range set {
			if !seen[p.Script] {
				seen[p.Script] = true
				all = append(all, p)
			}
		}
	}
	slices.SortStableFunc(all, func(a, b DatedPeer) int { return cmp.Compare(b.At, a.At) })
	return all[:min(len(all), MaxPeers)]
}
