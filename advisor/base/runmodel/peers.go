package runmodel

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
