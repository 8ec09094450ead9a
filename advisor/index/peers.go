package index

import (
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"

	"github.com/migadvisor/migadvisor/advisor"
	"github.com/migadvisor/migadvisor/catalog"
)

// peersKey is the entry of the index's peers: the newest scripts' times
// on two profiles or more, that a job measured on one profile is scaled
// like (advisor.References.Prior). It holds figures and keys that name
// nothing.
var peersKey = KeyOf("peers", "v1")

// peerSet is the peers' entry.
type peerSet struct {
	Peers []advisor.DatedPeer `json:"peers"`
}

// peerOf is the peer a script's entry makes, keyed by a hash of its
// fingerprint and dated by its newest submission.
func peerOf(fingerprint string, s script) (advisor.DatedPeer, bool) {
	runs := make([]advisor.Run, len(s.Runs))
	var at int64
	for i, x := range s.Runs {
		runs[i] = x.toRun()
		at = max(at, x.Submitted)
	}
	peer, ok := advisor.PeerOf(runs)
	k := KeyOf("fp", fingerprint)
	return advisor.DatedPeer{Script: hex.EncodeToString(k[:8]), Peer: peer, At: at}, ok
}

// Peers are the index's peers; none in an index written before it kept
// them.
func (r *Reader) Peers() ([]advisor.DatedPeer, error) {
	data, ok, err := r.Get(peersKey)
	if err != nil || !ok {
		return nil, err
	}
	var set peerSet
	if err := json.Unmarshal(data, &set); err != nil {
		return nil, fmt.Errorf("%w: %s: the peers' entry: %v", ErrNotIndex, r.path, err)
	}
	return set.Peers, nil
}

// ReadPeers are the peers of the user's index (own, nil when there is
// none) and the site's, each script once, the newest advisor.MaxPeers.
func ReadPeers(own *Reader, site ...*Reader) ([]advisor.Peer, error) {
	readers := site
	if own != nil {
		readers = append([]*Reader{own}, site...)
	}
	var sets [][]advisor.DatedPeer
	for _, r := range readers {
		peers, err := r.Peers()
		if err != nil {
			return nil, err
		}
		sets = append(sets, peers)
	}
	return advisor.PeersOf(advisor.NewestPeers(sets...)), nil
}

// PeersBeside are the peers of the user's index beside their history at db
// and of the site's advice index (catalog.History.SiteIndexPath), as the
// sbatch wrapper reads them: recommend and the report scale a job measured
// on one profile like the same peers. An index not written yet is none; one
// that cannot be read is an error naming it, beside the other's peers.
func PeersBeside(db string, site *catalog.Site) ([]advisor.Peer, error) {
	var paths []string
	if db != "" {
		paths = append(paths, OwnPath(db))
	}
	if p := site.History.SiteIndexPath(); p != "" {
		paths = append(paths, p)
	}
	var readers []*Reader
	var errs []error
	for _, path := range paths {
		r, err := Open(path)
		switch {
		case errors.Is(err, fs.ErrNotExist):
			continue
		case err != nil:
			errs = append(errs, err)
			continue
		}
		defer r.Close()
		readers = append(readers, r)
	}
	var peers []advisor.Peer
	if len(readers) > 0 {
		var err error
		peers, err = ReadPeers(readers[0], readers[1:]...)
		errs = append(errs, err)
	}
	return peers, errors.Join(errs...)
}
