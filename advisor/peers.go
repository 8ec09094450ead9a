package advisor

import (
	"slices"

	"github.com/migadvisor/migadvisor/advisor/base/runmodel"
)

// PeerOf is the peer a script's runs make: its completed runs on one GPU
// of a profile itself (an emulated slice's time is not the profile's), the
// median seconds per profile; ok only when they cover two profiles or more.
func PeerOf(runs []Run) (runmodel.Peer, bool) {
	byProfile := map[string][]float64{}
	for _, r := range runs {
		if r.Completed && r.Seconds > 0 && r.Profile != "" && r.GPUs <= 1 && r.Emulated == "" && r.RanAt == nil {
			byProfile[r.Profile] = append(byProfile[r.Profile], r.Seconds)
		}
	}
	if len(byProfile) < 2 {
		return nil, false
	}
	peer := runmodel.Peer{}
	for p, secs := range byProfile {
		slices.Sort(secs)
		peer[p] = runmodel.Median(secs)
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
