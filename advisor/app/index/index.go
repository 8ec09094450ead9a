// Package index is the advice index: what the sbatch wrapper and recommend
// need of a history, per script fingerprint (its runs' profiles, outcomes,
// memory, times, work), in one immutable file that a reader opens and looks
// a script up in with a few small reads, without SQLite. A history's writer
// publishes it (Publish: a temporary file, fsync, rename) beside a
// read-only snapshot of the history, so readers on other hosts of a shared
// file system see the old file or the new one, never a mix: the Lmod
// spider-cache way, not a live database shared over NFS.
//
// A site's index holds no user names, job names, paths or accounts: only
// keys (hashes of fingerprints) and figures, so a user learns about a
// script only by holding the same script. A user's own index adds the
// hashes of their scripts' paths, to find the earlier versions of a script,
// and their interactive sessions by user and job name (sessions.go), which
// a site's index never holds: a job name is guessed as easily as a user's,
// so a key of both would tell anyone another user's sessions.
//
// The file: a header (magic, version, entry count, where the table and the
// data end), a table of entries sorted by key (a key, where its payload
// is, its length and CRC-32), then the payloads (JSON). A reader checks the
// header and the file's size (a truncated file is refused whole) and each
// payload's checksum (a corrupt one is refused alone).
package index

import (
	"bytes"
	"crypto/sha256"
	"encoding/binary"
	"errors"
	"fmt"
	"hash/crc32"
	"io"
	"os"
	"sort"
)

// Version is the format this build writes; it reads those from
// oldestVersion on, and refuses a newer file, naming both. Version 2 adds
// a user's sessions (a version 1 index has none: Refresh rewrites it);
// the layout is version 1's.
const Version = 2

const oldestVersion = 1

var magic = [8]byte{'M', 'I', 'G', 'A', 'D', 'I', 'D', 'X'}

const (
	headerSize = 32 // magic, version u32, count u32, table offset u64, data end u64
	entrySize  = 32 // key [16], offset u64, length u32, crc32 u32
	keySize    = 16
)

// Key is an entry's key: a hash of what it is about.
type Key [keySize]byte

// KeyOf is the key of kind ("fp", "path") and value.
func KeyOf(kind, value string) Key {
	sum := sha256.Sum256([]byte("migadvisor-index-v1\x00" + kind + "\x00" + value))
	var k Key
	copy(k[:], sum[:keySize])
	return k
}

// entry is one key and its payload.
type entry struct {
	key     Key
	payload []byte
}

// Write writes entries (each key once) as an index file.
func Write(w io.Writer, entries map[Key][]byte) error {
	sorted := make([]entry, 0, len(entries))
	for k, p := range entries {
		sorted = append(sorted, entry{k, p})
	}
	sort.Slice(sorted, func(i, j int) bool { return bytes.Compare(sorted[i].key[:], sorted[j].key[:]) < 0 })
	table := uint64(headerSize)
	off := table + uint64(len(sorted))*entrySize
	var buf bytes.Buffer
	buf.Grow(int(off))
	buf.Write(magic[:])
	le := binary.LittleEndian
	buf.Write(le.AppendUint32(nil, Version))
	buf.Write(le.AppendUint32(nil, uint32(len(sorted))))
	buf.Write(le.AppendUint64(nil, table))
	end := off
	for _, e := range sorted {
		end += uint64(len(e.payload))
	}
	buf.Write(le.AppendUint64(nil, end))
	for _, e := range sorted {
		buf.Write(e.key[:])
		buf.Write(le.AppendUint64(nil, off))
		buf.Write(le.AppendUint32(nil, uint32(len(e.payload))))
		buf.Write(le.AppendUint32(nil, crc32.ChecksumIEEE(e.payload)))
		off += uint64(len(e.payload))
	}
	if _, err := w.Write(buf.Bytes()); err != nil {
		return err
	}
	for _, e := range sorted {
		if _, err := w.Write(e.payload); err != nil {
			return err
		}
	}
	return nil
}

// Reader is an open index file.
type Reader struct {
	f       *os.File
	path    string
	version uint32
	count   int64
	table   int64
	end     int64 // where the payloads end: the file's size
}

// ErrNotIndex wraps every reason a file is not a usable index: not one,
// truncated, corrupt, or of a newer version.
var ErrNotIndex = errors.New("not a usable advice index")

// Open opens the index at path and checks its header against its size.
func Open(path string) (*Reader, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	r, err := check(f, path)
	if err != nil {
		f.Close()
		return nil, err
	}
	return r, nil
}

func check(f *os.File, path string) (*Reader, error) {
	var h [headerSize]byte
	if _, err := io.ReadFull(f, h[:]); err != nil {
		return nil, fmt.Errorf("%w: %s: %d bytes, shorter than a header", ErrNotIndex, path, sizeOf(f))
	}
	if !bytes.Equal(h[:8], magic[:]) {
		return nil, fmt.Errorf("%w: %s is not a migadvisor advice index", ErrNotIndex, path)
	}
	le := binary.LittleEndian
	v := le.Uint32(h[8:])
	if v < oldestVersion || v > Version {
		return nil, fmt.Errorf("%w: %s is version %d; this migadvisor reads versions %d to %d (publish it again with this version, or upgrade)",
			ErrNotIndex, path, v, oldestVersion, Version)
	}
	count, table, end := int64(le.Uint32(h[12:])), int64(le.Uint64(h[16:])), int64(le.Uint64(h[24:]))
	if size := sizeOf(f); size != end {
		return nil, fmt.Errorf("%w: %s is %d bytes where its header says %d: truncated or overwritten", ErrNotIndex, path, size, end)
	}
	if table != headerSize || table+count*entrySize > end {
		return nil, fmt.Errorf("%w: %s: its header does not describe its table: corrupt", ErrNotIndex, path)
	}
	return &Reader{f: f, path: path, version: v, count: count, table: table, end: end}, nil
}

func sizeOf(f *os.File) int64 {
	info, err := f.Stat()
	if err != nil {
		return -1
	}
	return info.Size()
}

// Close closes the file.
func (r *Reader) Close() error { return r.f.Close() }

// Version is the file's format version.
func (r *Reader) Version() int { return int(r.version) }

// Len is how many entries it holds.
func (r *Reader) Len() int { return int(r.count) }

// Get is the payload of key, false when there is none. A payload whose
// checksum does not match is an error.
func (r *Reader) Get(key Key) ([]byte, bool, error) {
	var e [entrySize]byte
	lo, hi := int64(0), r.count
	for lo < hi {
		mid := lo + (hi-lo)/2
		if _, err := r.f.ReadAt(e[:], r.table+mid*entrySize); err != nil {
			return nil, false, fmt.Errorf("%s: %w", r.path, err)
		}
		switch c := bytes.Compare(e[:keySize], key[:]); {
		case c < 0:
			lo = mid + 1
		case c > 0:
			hi = mid
		default:
			return r.payload(e)
		}
	}
	return nil, false, nil
}

func (r *Reader) payload(e [entrySize]byte) ([]byte, bool, error) {
	le := binary.LittleEndian
	off, n, sum := int64(le.Uint64(e[16:])), le.Uint32(e[24:]), le.Uint32(e[28:])
	if off < r.table+r.count*entrySize || off+int64(n) > r.end {
		return nil, false, fmt.Errorf("%w: %s: an entry points outside the file: corrupt", ErrNotIndex, r.path)
	}
	p := make([]byte, n)
	if _, err := r.f.ReadAt(p, off); err != nil {
		return nil, false, fmt.Errorf("%w: %s: an entry past its end (%v)", ErrNotIndex, r.path, err)
	}
	if crc32.ChecksumIEEE(p) != sum {
		return nil, false, fmt.Errorf("%w: %s: an entry's checksum does not match: corrupt", ErrNotIndex, r.path)
	}
	return p, true, nil
}
