package wrapper

import (
	"os"
	"reflect"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/migadvisor/migadvisor/advisor/app/index"
	"github.com/migadvisor/migadvisor/slurm"
)

// luaKey is cli_filter.lua's key of a request (migadvisor.key,
// migadvisor.session_key): head (a script's path, size and checksum, or a
// session's command, program and "session"), then the values of the
// options filter-advise reads, then those of the environment.
func luaKey(head []string, options map[string]string, env []string) string {
	parts := slices.Clone(head)
	for _, name := range slices.Concat(filterFlags, filterResources) {
		parts = append(parts, options[name])
	}
	names := filterKeyEnv
	if head[2] == sessionKeyTag {
		names = append(slices.Clone(names), sessionKeyEnv)
	}
	for _, name := range names {
		parts = append(parts, envValue(env, name))
	}
	return strings.Join(parts, "\t")
}

// scriptHead is the part of a script's key that is the script's.
func scriptHead(t *testing.T, path string) []string {
	t.Helper()
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	return []string{path, strconv.Itoa(len(data)), strconv.FormatUint(filterChecksum(data), 10)}
}

// refresh is a collect's refresh of the user's index (RefreshIndex), with
// the fixture's clock, site and indexes.
func (f *fixture) refresh(t *testing.T) {
	t.Helper()
	wrote, err := refreshIndex(t.Context(), f.db, Options{Now: func() time.Time { return f.now }, OpenIndex: f.openIndex,
		LoadSite: f.loadSite, AdviceDeadline: f.deadline})
	if !wrote || err != nil {
		t.Fatalf("refresh: %v %v", wrote, err)
	}
}

// cachedAnswer is the cache's entry of key; false for none.
func (f *fixture) cachedAnswer(key string) (filterCacheEntry, bool) {
	for _, e := range readFilterCache(index.FilterCachePath(f.db)) {
		if e.key == key {
			return e, true
		}
	}
	return filterCacheEntry{}, false
}

// A refresh that rewrites the user's index answers again, of the new
// index, the submissions the cache answered: the same answer filter-advise
// gives now, with the new advice; a script gone or edited since, an
// answer a day old and a key of another layout are not answered again.
func TestRefreshIndexRemakesFilterCache(t *testing.T) {
	f := newFixture(t)
	f.setenv("PWD", f.dir)
	job, gone, edited, old := f.script(t, "job.sh", fullA100), f.script(t, "gone.sh", fullA100),
		f.script(t, "edited.sh", fullA100), f.script(t, "old.sh", fullA100)
	opts := wulverOptions(job, nil)
	keys := map[string]string{}
	for _, path := range []string{job, gone, edited, old} {
		keys[path] = luaKey(scriptHead(t, path), opts, f.env)
		f.filterKeyed(filterOptions(t, opts, path), keys[path])
	}
	f.filterKeyed(filterOptions(t, opts, job), cacheKey(t, job, "gpu")) // another layout
	first, ok := f.cachedAnswer(keys[job])
	all := readFilterCache(index.FilterCachePath(f.db))
	if !ok || first.advice != "" || first.options != filterOptions(t, opts, job) || len(all) != 5 {
		t.Fatalf("no history: cached %+v", all)
	}
	dayOld := first
	dayOld.key, dayOld.options, dayOld.written = keys[old], filterOptions(t, opts, old), f.now.Add(-filterCacheTTL).Unix()
	if err := writeFilterCache(index.FilterCachePath(f.db), dayOld); err != nil {
		t.Fatal(err)
	}

	script, _ := slurm.ReadScript(job)
	historyWithJob2(t, f.db, script.Fingerprint(), job)
	os.Remove(gone)
	os.WriteFile(edited, []byte(fullA100+"# edited\n"), 0o644)
	f.refresh(t)
	remade := readFilterCache(index.FilterCachePath(f.db))
	if len(remade) != 1 || remade[0].key != keys[job] || !filterAdviceLine.MatchString(remade[0].advice) || remade[0].draft == "" {
		t.Fatalf("remade %+v", remade)
	}
	os.Remove(index.FilterCachePath(f.db))
	f.filterKeyed(filterOptions(t, opts, job), keys[job])
	if now, _ := f.cachedAnswer(keys[job]); !reflect.DeepEqual(now, remade[0]) {
		t.Errorf("remade %+v, filter-advise answers %+v", remade[0], now)
	}
}

// A session's answer is made anew as filter-advise makes it, with the
// environment its key holds (who asks).
func TestRefreshIndexRemakesSessions(t *testing.T) {
	f := newFixture(t)
	f.setenv("USER", "ab12")
	salloc := map[string]string{"job-name": "jupyter", "gres": "gres:gpu:a100:1"}
	key := luaKey([]string{FilterSalloc, "", sessionKeyTag}, salloc, f.env)
	f.filterSession(FilterSalloc, filterOptions(t, salloc), key)
	if e, ok := f.cachedAnswer(key); !ok || e.advice != "" {
		t.Fatalf("no sessions yet: cached %+v", e)
	}
	f.importSessions(t, "jupyter")
	f.refresh(t)
	remade, _ := f.cachedAnswer(key)
	if !strings.HasPrefix(remade.advice, jupyterAdvice+"; next time ask with --gres=gpu:a100_10g:1") {
		t.Fatalf("remade %+v", remade)
	}
	os.Remove(index.FilterCachePath(f.db))
	f.filterSession(FilterSalloc, filterOptions(t, salloc), key)
	if now, _ := f.cachedAnswer(key); !reflect.DeepEqual(now, remade) {
		t.Errorf("remade %+v, filter-advise answers %+v", remade, now)
	}
}

// Answers made while the index changed again are not written: that
// refresh makes its own; the cache is none until then.
func TestRefreshIndexRemakesOfOneIndex(t *testing.T) {
	f := newFixture(t)
	f.setenv("PWD", f.dir)
	job := f.script(t, "job.sh", fullA100)
	opts := wulverOptions(job, nil)
	f.filterKeyed(filterOptions(t, opts, job), luaKey(scriptHead(t, job), opts, f.env))
	script, _ := slurm.ReadScript(job)
	historyWithJob2(t, f.db, script.Fingerprint(), job)
	f.openIndex = func(path string) (*index.Reader, error) {
		later := time.Now().Add(time.Hour)
		os.Chtimes(index.OwnPath(f.db), later, later) // another collect's
		return index.Open(path)
	}
	f.refresh(t)
	if _, err := os.Stat(index.FilterCachePath(f.db)); !os.IsNotExist(err) {
		t.Errorf("answers of an index replaced since: %v", err)
	}
}

// What a key holds beyond the options: a session's command, and the
// environment's values, those set.
func TestKeyEnvironment(t *testing.T) {
	env := []string{"PWD=/home/ab12", "SBATCH_GRES=gpu:a100:1", "USER=ab12"}
	held := []string{"USER=ab12", "PWD=/home/ab12", "SBATCH_GRES=gpu:a100:1"} // in the key's order
	script := luaKey([]string{"/home/ab12/job.sh", "10", "123"}, map[string]string{"gres": "gres:gpu:a100:1"}, env)
	for _, c := range []struct {
		key, kind string
		env       []string
		ok        bool
	}{
		{script, "", held, true},
		{luaKey([]string{"", "0", "0"}, nil, nil), "", nil, true},
		{luaKey([]string{FilterSrun, "/opt/bin/jupyter", sessionKeyTag}, nil, []string{"SLURM_JOB_NAME=lab"}), FilterSrun,
			[]string{"SLURM_JOB_NAME=lab"}, true},
		{luaKey([]string{FilterSalloc, "", sessionKeyTag}, nil, env), FilterSalloc, held, true},
		{luaKey([]string{"sbatch", "", sessionKeyTag}, nil, nil), "", nil, false},
		{script + "\tx", "", nil, false},
		{"/home/ab12/job.sh\t10\t123\tgpu", "", nil, false},
		{"", "", nil, false},
	} {
		kind, env, ok := keyEnvironment(c.key)
		if kind != c.kind || !reflect.DeepEqual(env, c.env) || ok != c.ok {
			t.Errorf("%q: %q %q %v, want %q %q %v", c.key, kind, env, ok, c.kind, c.env, c.ok)
		}
	}
}
