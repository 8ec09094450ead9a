package wrapper

import (
	"bytes"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/migadvisor/migadvisor/advisor/app/index"
	"github.com/migadvisor/migadvisor/internal/atomicfile"
)

// The filter's cache (index.FilterCachePath, beside the user's history and
// advice index): filter-advise's answers, so that cli_filter.lua answers
// the same submission again in sbatch's own Lua, with no process started
// (a process inside sbatch costs about 3 ms). Lmod's spider cache, for the
// filter: a plain file that Lua 5.1 reads with io.open and string.match.
//
// The file: filterCacheMagic, then the entries, newest first, each a line
// "entry WRITTEN KEYLEN ADVICELEN SETSLEN DRAFTLEN OPTIONSLEN" (WRITTEN in
// Unix seconds) and that many bytes of its key, its advice (what
// filter-advise printed on stderr), its "set" lines, its draft (the
// record's JSON without a job id; "" for none) and the options it was
// asked with (sbatch's JSON, which the filter skips: what the cache is
// made anew of), then "\n"; then filterCacheEnd.
//
// An entry's key is the one cli_filter.lua made (filter-advise gets it
// with the options): the script's path, size and checksum (filterChecksum),
// then the options and environment the advice reads, tab-separated. The
// filter takes an entry younger than filterCacheTTL. index.Refresh removes
// the file with the user's index it was made of, and RefreshIndex makes it
// anew of the new one (filtercache_remake.go). The site's index is
// published apart from any user's: its runs reach a cached answer within
// filterCacheTTL.
const (
	filterCacheMagic = "migadvisor-clifilter 2\n"
	filterCacheEnd   = "end\n"
	filterCacheTTL   = 24 * time.Hour
	// The most entries kept, and the largest: the filter reads the file
	// whole on every submission.
	filterCacheEntries  = 32
	filterCacheMaxEntry = 16 << 10
	// filterChecksumPrime is the modulus of filterChecksum, 2^36-5: Lua
	// 5.1's numbers are doubles, whose division (its %) is exact for
	// products below 2^52, and two bytes at a time (h*65536+b1*256+b2)
	// stay below that.
	filterChecksumPrime = 1<<36 - 5
)

// filterChecksum is the checksum of a script's bytes that cli_filter.lua
// computes (migadvisor.checksum): the bytes as a number in base 256, mod a
// prime. Two versions of a script of the same size that differ in at most
// four bytes in a row never share it; others, once in 2^36.
func filterChecksum(data []byte) uint64 {
	var h uint64
	for _, b := range data {
		h = (h<<8 | uint64(b)) % filterChecksumPrime
	}
	return h
}

// filterCacheEntry is one answer of filter-advise, and the options it
// answered (sbatch's JSON: with the key, what it is answered again of).
type filterCacheEntry struct {
	written                           int64 // Unix seconds
	key, advice, sets, draft, options string
}

func (e filterCacheEntry) size() int {
	return len(e.key) + len(e.advice) + len(e.sets) + len(e.draft) + len(e.options)
}

// filterKeyMatches reports whether key (cli_filter.lua's) is of the script
// filter-advise read: its path (argv's first, "" for none), size and
// checksum. One edited after the filter read it is not cached.
func filterKeyMatches(key string, argv []string, data []byte) bool {
	fields := strings.SplitN(key, "\t", 4)
	if len(fields) != 4 || strings.ContainsAny(key, "\n\r") {
		return false
	}
	path := ""
	if len(argv) > 0 {
		path = argv[0]
	}
	if path == "" {
		return fields[0] == "" && fields[1] == "0" && fields[2] == "0"
	}
	return fields[0] == path && data != nil && fields[1] == strconv.Itoa(len(data)) &&
		fields[2] == strconv.FormatUint(filterChecksum(data), 10)
}

// readFilterCache is the cache's entries; none where it is not there or
// not whole (it is a cache: the next answer writes it again).
func readFilterCache(path string) []filterCacheEntry {
	data, err := os.ReadFile(path)
	if err != nil || !bytes.HasPrefix(data, []byte(filterCacheMagic)) || !bytes.HasSuffix(data, []byte(filterCacheEnd)) {
		return nil
	}
	rest := string(data[len(filterCacheMagic) : len(data)-len(filterCacheEnd)])
	var entries []filterCacheEntry
	for rest != "" {
		line, body, ok := strings.Cut(rest, "\n")
		f := strings.Fields(line)
		if !ok || len(f) != 7 || f[0] != "entry" {
			return nil
		}
		var n [6]int64
		total := int64(0)
		for i := range n {
			if n[i], err = strconv.ParseInt(f[i+1], 10, 64); err != nil || n[i] < 0 {
				return nil
			}
			if i > 0 {
				total += n[i]
			}
		}
		if int64(len(body)) < total+1 || body[total] != '\n' {
			return nil
		}
		e := filterCacheEntry{written: n[0]}
		e.key, body = body[:n[1]], body[n[1]:]
		e.advice, body = body[:n[2]], body[n[2]:]
		e.sets, body = body[:n[3]], body[n[3]:]
		e.draft, body = body[:n[4]], body[n[4]:]
		e.options, rest = body[:n[5]], body[n[5]+1:]
		entries = append(entries, e)
	}
	return entries
}

// writeFilterCache puts fresh (written at once, at least one) first in
// the cache at path, then the entries there of other keys younger than
// filterCacheTTL, one a key, filterCacheEntries at most: whole or not at
// all (a temporary file and a rename), so that writers at once lose an
// entry at worst, never the file.
func writeFilterCache(path string, fresh ...filterCacheEntry) error {
	var b strings.Builder
	b.WriteString(filterCacheMagic)
	now, kept := fresh[0].written, map[string]bool{}
	for _, x := range slices.Concat(fresh, readFilterCache(path)) {
		if len(kept) == filterCacheEntries || kept[x.key] || now-x.written >= int64(filterCacheTTL/time.Second) {
			continue
		}
		fmt.Fprintf(&b, "entry %d %d %d %d %d %d\n%s%s%s%s%s\n", x.written, len(x.key), len(x.advice), len(x.sets), len(x.draft),
			len(x.options), x.key, x.advice, x.sets, x.draft, x.options)
		kept[x.key] = true
	}
	b.WriteString(filterCacheEnd)
	return atomicfile.Write(path, []byte(b.String()), 0o600)
}

// filterCacheWrite is the cache's part in one filter-advise, or in the
// cache made anew: the state of the user's index before the advice read
// it, to check it against when the answers are written (a collect that
// rewrote it in between removed the cache, and answers made of the index
// replaced are not put back).
type filterCacheWrite struct {
	db    string
	index os.FileInfo // nil: there was none
	// gathered, where not nil, takes the answers instead of the file: the
	// cache made anew writes them all at once.
	gathered *[]filterCacheEntry
}

// startFilterCacheWrite is the cache's part in the answer to key (nil for
// none: "" is no key); gathered as filterCacheWrite's.
func startFilterCacheWrite(key, db string, gathered *[]filterCacheEntry) *filterCacheWrite {
	if key == "" {
		return nil
	}
	c := newFilterCacheWrite(db)
	c.gathered = gathered
	return c
}

// newFilterCacheWrite is a write of the cache of the history at db, of
// its user's index as it is now.
func newFilterCacheWrite(db string) *filterCacheWrite {
	c := &filterCacheWrite{db: db}
	c.index, _ = os.Stat(index.OwnPath(db))
	return c
}

// put writes the answers, the first first; the spool's directory too,
// where the filter writes the records (Lua makes no directories).
func (c *filterCacheWrite) put(spoolDir string, entries ...filterCacheEntry) error {
	var small []filterCacheEntry
	for _, e := range entries {
		if e.size() <= filterCacheMaxEntry {
			small = append(small, e)
		}
	}
	if now, _ := os.Stat(index.OwnPath(c.db)); len(small) == 0 || !sameState(c.index, now) {
		return nil
	}
	if c.gathered != nil {
		*c.gathered = append(*c.gathered, small...)
		return nil
	}
	if slices.ContainsFunc(small, func(e filterCacheEntry) bool { return e.draft != "" }) {
		if err := os.MkdirAll(spoolDir, 0o700); err != nil {
			return fmt.Errorf("spool: %w", err)
		}
	}
	path := index.FilterCachePath(c.db)
	if err := os.MkdirAll(filepath.Dir(path), 0o700); err != nil {
		return err
	}
	return writeFilterCache(path, small...)
}

// sameState reports whether two looks at a file (nil: none there) saw the
// same file, unchanged.
func sameState(a, b os.FileInfo) bool {
	if a == nil || b == nil {
		return a == nil && b == nil
	}
	return os.SameFile(a, b) && a.ModTime().Equal(b.ModTime()) && a.Size() == b.Size()
}
