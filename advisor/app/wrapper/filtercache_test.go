package wrapper

import (
	"fmt"
	"os"
	"path/filepath"
	"reflect"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/migadvisor/migadvisor/advisor/app/index"
	"github.com/migadvisor/migadvisor/advisor/base/history"
)

// The checksum is the script's bytes in base 256 mod 2^36-5.
func TestFilterChecksum(t *testing.T) {
	for _, c := range []struct {
		data string
		want uint64
	}{
		{"", 0},
		{"\x01", 1},
		{"\x01\x00", 256},
		{"\x01\x00\x00\x00\x00", 1 << 32},
		{"\x10\x00\x00\x00\x00", 5},          // 2^36 is 5 past the prime
		{"\x01\x00\x00\x00\x00\x00", 5 * 16}, // 2^40 = 2^36 * 16
	} {
		if got := filterChecksum([]byte(c.data)); got != c.want {
			t.Errorf("%q: %d, want %d", c.data, got, c.want)
		}
	}
	a, b := []byte("#!/bin/bash\n#SBATCH --gres=gpu:a100:1\nAa\n"), []byte("#!/bin/bash\n#SBATCH --gres=gpu:a100:1\nBB\n")
	if filterChecksum(a) == filterChecksum(b) {
		t.Error("an edit of two bytes keeps the checksum")
	}
}

func entryOf(written int64, key string) filterCacheEntry {
	return filterCacheEntry{written: written, key: key, advice: "migadvisor: " + key + "\n", sets: "set\tgres\tgpu:a100_10g:1\n",
		draft: `{"Cluster":"","JobID":"","Fingerprint":"f"}`, options: `{"argv":["/` + key + `"],"gres":"gres:gpu:a100:1"}`}
}

// The newest answer first, one a key, none older than a day, at most
// filterCacheEntries; a file that is not whole reads as none.
func TestFilterCacheFile(t *testing.T) {
	path := filepath.Join(t.TempDir(), "history.db.clifilter")
	if got := readFilterCache(path); got != nil {
		t.Errorf("no file: %v", got)
	}
	now := int64(1_800_000_000)
	odd := filterCacheEntry{written: now - 10, key: "/a\t1\t2", advice: "line\nentry 1 2 3 4 5 6\nend\n", options: "\nend\n"}
	for _, e := range []filterCacheEntry{entryOf(now-int64(filterCacheTTL/time.Second), "old"), odd, entryOf(now-5, "k"), entryOf(now, "k")} {
		if err := writeFilterCache(path, e); err != nil {
			t.Fatal(err)
		}
	}
	want := []filterCacheEntry{entryOf(now, "k"), odd} // "old" is a day older than the newest
	if got := readFilterCache(path); !reflect.DeepEqual(got, want) {
		t.Errorf("entries %+v, want %+v", got, want)
	}
	if info, _ := os.Stat(path); info.Mode().Perm() != 0o600 {
		t.Errorf("mode %v: the user's alone", info.Mode().Perm())
	}
	for i := range filterCacheEntries + 5 {
		writeFilterCache(path, entryOf(now, fmt.Sprint("key", i)))
	}
	if got := readFilterCache(path); len(got) != filterCacheEntries || got[0].key != fmt.Sprint("key", filterCacheEntries+4) {
		t.Errorf("%d entries, the first %q", len(got), got[0].key)
	}
	// Several at once (the cache made anew): theirs first, in their order,
	// one a key, then the file's of other keys.
	writeFilterCache(path, entryOf(now, "a"), entryOf(now, "key0"), entryOf(now, "a"))
	if got := readFilterCache(path); len(got) != filterCacheEntries || got[0].key != "a" || got[1].key != "key0" ||
		got[2].key != fmt.Sprint("key", filterCacheEntries+4) {
		t.Errorf("%d entries, the first %q %q %q", len(got), got[0].key, got[1].key, got[2].key)
	}
	data, _ := os.ReadFile(path)
	for _, bad := range []string{string(data[:len(data)-1]), string(data[:len(data)/2]) + filterCacheEnd, "x" + string(data[1:]),
		strings.Replace(string(data), "entry ", "entry -", 1)} {
		os.WriteFile(path, []byte(bad), 0o600)
		if got := readFilterCache(path); got != nil {
			t.Errorf("%.40q...: %d entries", bad, len(got))
		}
	}
}

// Writers at once lose an entry at worst, never the file.
func TestFilterCacheWritersAtOnce(t *testing.T) {
	path := filepath.Join(t.TempDir(), "history.db.clifilter")
	var wg sync.WaitGroup
	for w := range 8 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := range 20 {
				if err := writeFilterCache(path, entryOf(1, fmt.Sprint(w, "-", i))); err != nil {
					t.Error(err)
				}
				if readFilterCache(path) == nil {
					t.Error("a writer left the file unreadable")
				}
			}
		}()
	}
	wg.Wait()
}

func TestFilterKeyMatches(t *testing.T) {
	data := []byte(fullA100)
	key := func(path string, size int, sum uint64) string {
		return fmt.Sprintf("%s\t%d\t%d\tgpu\tgres:gpu:a100:1", path, size, sum)
	}
	good := key("/home/u/job.sh", len(data), filterChecksum(data))
	for _, c := range []struct {
		key  string
		argv []string
		data []byte
		want bool
	}{
		{good, []string{"/home/u/job.sh", "arg"}, data, true},
		{key("", 0, 0), nil, nil, true}, // --wrap, stdin
		{key("/home/u/job.sh", len(data), filterChecksum(data)+1), []string{"/home/u/job.sh"}, data, false},
		{key("/home/u/job.sh", len(data)-1, filterChecksum(data)), []string{"/home/u/job.sh"}, data, false},
		{good, []string{"/home/u/other.sh"}, data, false},
		{good, []string{"/home/u/job.sh"}, nil, false},
		{good, []string{"/home/u/job.sh"}, []byte(fullA100 + "\n"), false},
		{good + "\n", []string{"/home/u/job.sh"}, data, false},
		{"/home/u/job.sh", []string{"/home/u/job.sh"}, data, false},
		{key("", 0, 0), []string{"/home/u/job.sh"}, data, false},
	} {
		if got := filterKeyMatches(c.key, c.argv, c.data); got != c.want {
			t.Errorf("%q with %q: %v, want %v", c.key, c.argv, got, c.want)
		}
	}
}

// cacheKey is the key cli_filter.lua makes of a script and values.
func cacheKey(t *testing.T, path string, values ...string) string {
	t.Helper()
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	return strings.Join(append([]string{path, strconv.Itoa(len(data)), strconv.FormatUint(filterChecksum(data), 10)}, values...), "\t")
}

// filter-advise with a key caches its answer: the advice as printed, the
// settings, the draft, and the options it answered; an answer with a
// problem, a lint line, or of a script edited since the filter read it is
// not cached; index.Refresh of the user's index removes the cache
// (RefreshIndex makes it anew).
func TestFilterAdviseCaches(t *testing.T) {
	f := newFixture(t)
	f.setenv("PWD", f.dir)
	path := f.script(t, "job.sh", fullA100)
	f.withJob2(t, path)
	f.setenv(EnvApply, "1")
	opts := filterOptions(t, wulverOptions(path, nil), path)
	key := cacheKey(t, path, "gpu", "1")
	answer := f.filterKeyed(opts, key)
	cache := index.FilterCachePath(f.db)
	got := readFilterCache(cache)
	if len(got) != 1 || got[0].key != key || got[0].advice != f.stderr.String() || got[0].written != f.now.Unix() || got[0].options != opts ||
		got[0].sets+FilterRecord+"\t"+got[0].draft+"\n"+FilterOK+"\n" != answer {
		t.Fatalf("cached %+v for %q, %q", got, f.stderr.String(), answer)
	}
	if info, err := os.Stat(history.SpoolFor(f.db).Dir); err != nil || !info.IsDir() {
		t.Errorf("no spool for the filter to write its record in: %v", err)
	}

	os.Remove(cache)
	os.WriteFile(path, []byte(strings.Replace(fullA100, "train", "tRain", 1)), 0o644) // after the filter read it
	f.filterKeyed(opts, key)
	if got := readFilterCache(cache); got != nil || draft(t, f.stdout.String()) == nil {
		t.Errorf("edited since the filter read it: cached %+v", got)
	}
	os.WriteFile(path, []byte(fullA100), 0o644)
	for name, c := range map[string]struct{ opts, key string }{
		"another script": {filterOptions(t, wulverOptions(path, nil), path+"x"), key},
		"a problem":      {filterOptions(t, map[string]string{"wrap": "true"}), "\t0\t0\tx"}, // cannot be applied: a warning
		"no key":         {opts, ""},
	} {
		f.filterKeyed(c.opts, c.key)
		if got := readFilterCache(cache); got != nil {
			t.Errorf("%s: cached %+v", name, got)
		}
	}
	lint := f.script(t, "lint.sh", strings.Replace(fullA100, "#SBATCH -p gpu\n", "#SBATCH -p gpu\n#SBATCH -o nodir/out\n", 1))
	f.filterKeyed(filterOptions(t, wulverOptions(lint, nil), lint), cacheKey(t, lint, "gpu"))
	if !strings.Contains(f.stderr.String(), "output-dir-missing") || readFilterCache(cache) != nil {
		t.Errorf("a lint line %q is cached: %+v", f.stderr.String(), readFilterCache(cache))
	}

	f.filterKeyed(opts, key)
	if len(readFilterCache(cache)) != 1 {
		t.Fatal("not cached")
	}
	time.Sleep(10 * time.Millisecond)
	os.Chtimes(f.db, time.Now(), time.Now()) // the history changed: its index is stale
	if wrote, err := index.Refresh(t.Context(), f.db); !wrote || err != nil {
		t.Fatalf("refresh: %v %v", wrote, err)
	}
	if _, err := os.Stat(cache); !os.IsNotExist(err) {
		t.Errorf("the cache outlived the index it was made of: %v", err)
	}
}
