package wrapper

import (
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"os"
	"os/exec"
	"path/filepath"
	"reflect"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/migadvisor/migadvisor/advisor/history"
	"github.com/migadvisor/migadvisor/advisor/index"
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
		draft: `{"Cluster":"","JobID":"","Fingerprint":"f"}`}
}

// The newest answer first, one a key, none older than a day, at most
// filterCacheEntries; a file that is not whole reads as none.
func TestFilterCacheFile(t *testing.T) {
	path := filepath.Join(t.TempDir(), "history.db.clifilter")
	if got := readFilterCache(path); got != nil {
		t.Errorf("no file: %v", got)
	}
	now := int64(1_800_000_000)
	odd := filterCacheEntry{written: now - 10, key: "/a\t1\t2", advice: "line\nentry 1 2 3 4 5\nend\n", sets: "", draft: ""}
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
// settings, the draft; an answer with a problem, a lint line, or of a
// script edited since the filter read it is not cached; a refresh of the
// user's index removes the cache.
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
	if len(got) != 1 || got[0].key != key || got[0].advice != f.stderr.String() || got[0].written != f.now.Unix() ||
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

// cli_filter.lua computes what Go does: the checksum, the key of the
// options and environment filter-advise reads, the cache's answers, and
// the record it writes to the spool. Run with Lua 5.1's interpreter
// (Debian's lua5.1), where it is installed; the Slurm tests run the same
// file inside sbatch.
func TestFilterLuaAgrees(t *testing.T) {
	lua, err := exec.LookPath("lua5.1")
	if err != nil {
		t.Skip("no lua5.1 (apt-get install lua5.1)")
	}
	dir := t.TempDir()
	run := func(env []string, program string) string {
		t.Helper()
		cmd := exec.Command(lua, "-e", "slurm = { SUCCESS = 0 }; dofile('../../scripts/cli_filter.lua')\n"+program)
		cmd.Env = append([]string{"PATH=/usr/bin:/bin"}, env...)
		out, err := cmd.CombinedOutput()
		if err != nil {
			t.Fatalf("lua: %v\n%s", err, out)
		}
		return string(out)
	}

	rng := rand.New(rand.NewPCG(1, 2))
	var samples [][]byte
	for _, n := range []int{0, 1, 2, 7, 8, 9, 15, 16, 17, 4096, 100_003} {
		b := make([]byte, n)
		for i := range b {
			b[i] = byte(rng.IntN(256))
		}
		samples = append(samples, b)
	}
	samples = append(samples, []byte(strings.Repeat("\xff", 5000)), []byte(fullA100))
	var program strings.Builder
	for i, s := range samples {
		file := filepath.Join(dir, fmt.Sprint("s", i))
		os.WriteFile(file, s, 0o644)
		fmt.Fprintf(&program, "local f = io.open(%q, 'rb'); print(string.format('%%d', migadvisor.checksum(f:read('*a')))); f:close()\n", file)
	}
	for i, line := range strings.Fields(run(nil, program.String())) {
		if want := strconv.FormatUint(filterChecksum(samples[i]), 10); line != want {
			t.Errorf("sample %d (%d bytes): Lua %s, Go %s", i, len(samples[i]), line, want)
		}
	}

	// The key: of the options filter-advise reads, as sbatch's options
	// table gives them, and what filter-advise checks against the script.
	if got, want := run(nil, "print(table.concat(migadvisor.key_options, ' '))"), strings.Join(append(slices.Clone(filterFlags), filterResources...), " ")+"\n"; got != want {
		t.Errorf("the key's options %q, filter-advise reads %q", got, want)
	}
	script := filepath.Join(dir, "job.sh")
	os.WriteFile(script, []byte(fullA100), 0o644)
	key := run([]string{"SBATCH_GRES=gpu:a100:1", "PWD=/home/u"}, fmt.Sprintf(
		"io.write(migadvisor.key({ argv = { %q, 'arg' }, gres = 'gres:gpu:a100:1', partition = 'gpu', type = 'sbatch' }))", script))
	if !filterKeyMatches(key, []string{script, "arg"}, []byte(fullA100)) || !strings.Contains(key, "\tgpu\t") ||
		!strings.Contains(key, "\tgres:gpu:a100:1\t") || !strings.Contains(key, "\t/home/u\t") || !strings.HasSuffix(key, "\tgpu:a100:1\t\t\t\t\t\t\t\t\t") {
		t.Errorf("key %q", key)
	}
	if got := run(nil, "print(migadvisor.key({ argv = {}, wrap = 'a\\tb' }))"); got != "nil\n" {
		t.Errorf("a tab in a value: key %q", got)
	}
	large := filepath.Join(dir, "large.sh")
	os.WriteFile(large, []byte(fullA100+strings.Repeat("#\n", 128*1024)), 0o644)
	if got := run(nil, fmt.Sprintf("print(migadvisor.key({ argv = { %q } }))", large)); got != "nil\n" {
		t.Errorf("a script over 256 KiB: key %.80q", got)
	}

	// The cache's answers: Go writes, Lua reads.
	cache := filepath.Join(dir, "history.db.clifilter")
	now := int64(1_800_000_000)
	odd := filterCacheEntry{written: now - 100, key: "/a b\t1\t2", advice: "it's \"x\"\nentry 1 2 3 4 5\n\x00end\n", draft: ""}
	day := int64(filterCacheTTL / time.Second)
	for _, e := range []filterCacheEntry{entryOf(now, "k"), odd, entryOf(now-day, "old")} {
		writeFilterCache(cache, e)
	}
	lookup := func(key string, at int64) string {
		return run(nil, fmt.Sprintf("local a, s, d = migadvisor.lookup(%q, %q, %d); io.write(string.format('%%q %%q %%q', tostring(a), tostring(s), tostring(d)))",
			cache, key, at))
	}
	q := func(a, s, d string) string { return fmt.Sprintf("%s %s %s", luaQuoted(a), luaQuoted(s), luaQuoted(d)) }
	for _, c := range []struct {
		key  string
		at   int64
		want string
	}{
		{"k", now, q(entryOf(now, "k").advice, entryOf(now, "k").sets, entryOf(now, "k").draft)},
		{odd.key, now, q(odd.advice, "", "")},
		{"old", now, q("nil", "nil", "nil")}, // a day old by now
		{"old", now - 20, q(entryOf(0, "old").advice, entryOf(0, "old").sets, entryOf(0, "old").draft)},
		{"k", now - 3600, q("nil", "nil", "nil")}, // written in the future
		{"absent", now, q("nil", "nil", "nil")},
		{"", now, q("nil", "nil", "nil")},
	} {
		if got := lookup(c.key, c.at); got != c.want {
			t.Errorf("lookup %q at %d: %s, want %s", c.key, c.at, got, c.want)
		}
	}

	// The record: the draft with the job's id and time, in the spool.
	db := filepath.Join(dir, "history.db")
	os.Mkdir(db+".spool", 0o700)
	draft, _ := json.Marshal(history.Submission{Cluster: `a"JobID":""`, Fingerprint: "fp", Source: "/s.sh", Script: "/s.sh", Submitted: time.Now()})
	out := run([]string{"MIGADVISOR_DB=" + db}, fmt.Sprintf("print(migadvisor.spool(migadvisor.filled(%s, '4243', %d), '4243', %d))", luaQuoted(string(draft)), now, now))
	files, _ := history.SpoolFor(db).Pending()
	if out != "true\n" || len(files) != 1 || filepath.Base(files[0]) != fmt.Sprintf("%d000000000-4243.json", now) {
		t.Fatalf("spooled %q: %v", out, files)
	}
	var sub history.Submission
	if err := json.Unmarshal([]byte(mustReadFile(t, files[0])), &sub); err != nil || sub.JobID != "4243" || sub.Cluster != `a"JobID":""` ||
		!sub.Submitted.Equal(time.Unix(now, 0)) || sub.Fingerprint != "fp" {
		t.Errorf("record %+v, %v", sub, err)
	}
	if out := run([]string{"MIGADVISOR_DB=" + filepath.Join(dir, "none", "history.db")}, "print(migadvisor.spool('{}', '1', 1))"); out != "false\n" {
		t.Errorf("no spool: %q", out)
	}
}

// The filter stays silent where migadvisor advised: sbatch run by a
// migadvisor-sbatch (the wrapper in its place), or with a child the shim
// started beside it (it then ran sbatch in its own place).
func TestFilterLuaKnowsMigadvisorAdvised(t *testing.T) {
	lua, err := exec.LookPath("lua5.1")
	if err != nil {
		t.Skip("no lua5.1 (apt-get install lua5.1)")
	}
	filter, _ := filepath.Abs("../../scripts/cli_filter.lua")
	program := fmt.Sprintf("slurm = { SUCCESS = 0 }; dofile(%q); io.write(tostring(migadvisor.advised()))", filter)
	dir := t.TempDir()
	script := func(name, text string) string {
		path := filepath.Join(dir, name)
		if err := os.WriteFile(path, []byte("#!/bin/sh\n"+text+"\n"), 0o755); err != nil {
			t.Fatal(err)
		}
		return path
	}
	sleeper := script("migadvisor", "sleep 1")
	for _, c := range []struct {
		name string
		cmd  *exec.Cmd
		want string
	}{
		{"run by another program", exec.Command(lua, "-e", program), "false"},
		{"run by the wrapper", exec.Command(script("migadvisor-sbatch", fmt.Sprintf("%s -e '%s'", lua, program))), "true"},
		{"beside the wrapper", exec.Command(script("sbatch", fmt.Sprintf("%s </dev/null >/dev/null 2>&1 & exec %s -e '%s'", sleeper, lua, program))), "true"},
	} {
		if out, err := c.cmd.CombinedOutput(); err != nil || string(out) != c.want {
			t.Errorf("%s: %q %v, want %s", c.name, out, err, c.want)
		}
	}
}

// luaQuoted is s as Lua's %q writes it.
func luaQuoted(s string) string {
	if s == "nil" {
		return `"nil"`
	}
	var b strings.Builder
	b.WriteByte('"')
	for i := 0; i < len(s); i++ {
		switch c := s[i]; c {
		case '"', '\\':
			b.WriteByte('\\')
			b.WriteByte(c)
		case '\n':
			b.WriteString("\\\n")
		case '\r':
			b.WriteString(`\r`)
		case 0:
			b.WriteString(`\000`)
		default:
			b.WriteByte(c)
		}
	}
	b.WriteByte('"')
	return b.String()
}

func mustReadFile(t *testing.T, path string) string {
	t.Helper()
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	return string(data)
}
