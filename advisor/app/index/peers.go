package index

import (
	"encoding/binary"
	"errors"
	"fmt"
	"io/fs"
	"math"

	"github.com/migadvisor/migadvisor/advisor"
	"github.com/migadvisor/migadvisor/advisor/base/runmodel"
	"github.com/migadvisor/migadvisor/catalog"
)

// peersKey is the entry of the index's peers: the newest scripts' times
// on two profiles or more, that a job measured on one profile is scaled
// like (runmodel.References.Prior). It holds figures and keys that name
// nothing.
var peersKey = KeyOf("peers", "v1")

// The peers' entry is binary, not JSON like the scripts': the wrapper may
// read a few hundred peers on a submission, and decoding them as JSON costs
// a millisecond. Little-endian: the count of profile names, each name (a
// byte of length, then the name); the count of peers (u32), each peer's key
// (peerKeySize bytes), when it last ran (i64, unix seconds), its count of
// profiles (u8) and for each the name's index (u16) and the median seconds
// (f64).
const peerKeySize = 8

// peerKey is the key of a script's peer: the start of its entry's key, a
// hash of its fingerprint.
func peerKey(fingerprint string) string {
	k := KeyOf("fp", fingerprint)
	return string(k[:peerKeySize])
}

// peerOf is the peer a script's runs make, keyed by peerKey and dated by
// its newest submission.
func peerOf(fingerprint string, runs []advisor.Run) (runmodel.DatedPeer, bool) {
	var at int64
	for _, r := range runs {
		if !r.Submitted.IsZero() {
			at = max(at, r.Submitted.Unix())
		}
	}
	peer, ok := advisor.PeerOf(runs)
	return runmodel.DatedPeer{Script: peerKey(fingerprint), Peer: peer, At: at}, ok
}

func encodePeers(peers []runmodel.DatedPeer) ([]byte, error) {
	le := binary.LittleEndian
	var names []string
	index := map[string]uint16{}
	for _, p := range peers {
		for name := range p.Peer {
			if _, ok := index[name]; !ok {
				if len(name) > 255 || len(names) == 1<<16-1 {
					return nil, fmt.Errorf("peers: profile %.40q cannot be written", name)
				}
				index[name] = uint16(len(names))
				names = append(names, name)
			}
		}
	}
	buf := le.AppendUint16(nil, uint16(len(names)))
	for _, name := range names {
		buf = append(append(buf, byte(len(name))), name...)
	}
	buf = le.AppendUint32(buf, uint32(len(peers)))
	for _, p := range peers {
		if len(p.Script) != peerKeySize || len(p.Peer) > 255 {
			return nil, fmt.Errorf("peers: a peer keyed %q of %d profiles cannot be written", p.Script, len(p.Peer))
		}
		buf = le.AppendUint64(append(buf, p.Script...), uint64(p.At))
		buf = append(buf, byte(len(p.Peer)))
		for _, name := range runmodel.SortedProfiles(p.Peer) {
			buf = le.AppendUint64(le.AppendUint16(buf, index[name]), math.Float64bits(p.Peer[name]))
		}
	}
	return buf, nil
}

// Peers are the index's peers; none in an index written before it kept
// them.
func (r *Reader) Peers() ([]runmodel.DatedPeer, error) {
	data, ok, err := r.Get(peersKey)
	if err != nil || !ok {
		return nil, err
	}
	peers, err := decodePeers(data)
	if err != nil {
		return nil, fmt.Errorf("%w: %s: the peers' entry: %v", ErrNotIndex, r.path, err)
	}
	return peers, nil
}

// decodePeers reads the peers' entry, every length checked against what
// is left of it.
func decodePeers(data []byte) ([]runmodel.DatedPeer, error) {
	d := decoder{data: data}
	names := make([]string, d.u16())
	for i := range names {
		names[i] = string(d.bytes(int(d.u8())))
	}
	n := int(d.u32())
	if d.err == nil && n > len(d.data)/(peerKeySize+9) {
		return nil, fmt.Errorf("%d peers in %d bytes", n, len(d.data))
	}
	peers := make([]runmodel.DatedPeer, 0, n)
	for range n {
		p := runmodel.DatedPeer{Script: string(d.bytes(peerKeySize)), At: int64(d.u64())}
		count := int(d.u8())
		p.Peer = make(runmodel.Peer, count)
		for range count {
			i, secs := int(d.u16()), math.Float64frombits(d.u64())
			switch {
			case d.err != nil:
			case i >= len(names):
				return nil, fmt.Errorf("profile %d of %d", i, len(names))
			case !(secs > 0) || math.IsInf(secs, 0):
				return nil, fmt.Errorf("%v seconds on %s", secs, names[i])
			default:
				if _, dup := p.Peer[names[i]]; dup {
					return nil, fmt.Errorf("%s twice in a peer", names[i])
				}
				p.Peer[names[i]] = secs
			}
		}
		if d.err != nil {
			return nil, d.err
		}
		peers = append(peers, p)
	}
	if d.err == nil && len(d.data) > 0 {
		return nil, fmt.Errorf("%d bytes after the last peer", len(d.data))
	}
	return peers, d.err
}

// decoder reads little-endian values off the front of data; past its end
// it notes an error and reads zeros.
type decoder struct {
	data []byte
	err  error
}

func (d *decoder) bytes(n int) []byte {
	if d.err != nil || n > len(d.data) {
		if d.err == nil {
			d.err = fmt.Errorf("truncated: %d bytes wanted, %d left", n, len(d.data))
		}
		return make([]byte, n)
	}
	b := d.data[:n]
	d.data = d.data[n:]
	return b
}

func (d *decoder) u8() uint8   { return d.bytes(1)[0] }
func (d *decoder) u16() uint16 { return binary.LittleEndian.Uint16(d.bytes(2)) }
func (d *decoder) u32() uint32 { return binary.LittleEndian.Uint32(d.bytes(4)) }
func (d *decoder) u64() uint64 { return binary.LittleEndian.Uint64(d.bytes(8)) }

// PeerSet are the peers read from the indexes, each script once.
type PeerSet []runmodel.DatedPeer

// Except are the peers less the script being judged: its own times are no
// prior for it.
func (s PeerSet) Except(fingerprint string) []runmodel.Peer {
	self := peerKey(fingerprint)
	out := make([]runmodel.Peer, 0, len(s))
	for _, p := range s {
		if p.Script != self {
			out = append(out, p.Peer)
		}
	}
	return out
}

// ReadPeers are the peers of the user's index (own, nil when there is
// none) and the site's, each script once, the newest runmodel.MaxPeers. An
// index whose peers cannot be read is an error beside the others' peers:
// they are optional evidence, never a reason to give no advice.
func ReadPeers(own *Reader, site ...*Reader) (PeerSet, error) {
	readers := site
	if own != nil {
		readers = append([]*Reader{own}, site...)
	}
	var sets [][]runmodel.DatedPeer
	var errs []error
	for _, r := range readers {
		peers, err := r.Peers()
		if err != nil {
			errs = append(errs, err)
			continue
		}
		sets = append(sets, peers)
	}
	return runmodel.NewestPeers(sets...), errors.Join(errs...)
}

// PeersBeside are ReadPeers of the user's index beside their history at db
// and of the site's advice index (catalog.History.SiteIndexPath), as the
// sbatch wrapper reads them: recommend and the report scale a job measured
// on one profile like the same peers. An index not written yet is none; one
// that cannot be read is an error naming it, beside the other's peers.
func PeersBeside(db string, site *catalog.Site) (PeerSet, error) {
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
	if len(readers) == 0 {
		return nil, errors.Join(errs...)
	}
	peers, err := ReadPeers(readers[0], readers[1:]...)
	return peers, errors.Join(append(errs, err)...)
}
