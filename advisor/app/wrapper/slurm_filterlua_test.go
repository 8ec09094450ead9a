//go:build slurm

// cli_filter.lua run by Lua 5.1's interpreter, beside the Go it must agree
// with: in the Slurm tier, whose scripts/dev-cluster.sh installs lua5.1
// (make test runs it; the unit tier needs no Lua).

package wrapper

import (
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/migadvisor/migadvisor/advisor/base/history"
)

// luaInterpreter is Debian's lua5.1; its absence fails the test, never
// skips it: the dev cluster installs it.
func luaInterpreter(t *testing.T) string {
	t.Helper()
	lua, err := exec.LookPath("lua5.1")
	if err != nil {
		t.Fatal("no lua5.1: scripts/dev-cluster.sh up installs it (apt-get install lua5.1)")
	}
	return lua
}

// cli_filter.lua computes what Go does: the checksum, the key of the
// options and environment filter-advise reads, the cache's answers, and
// the record it writes to the spool. Run with Lua 5.1's interpreter
// (Debian's lua5.1), which scripts/dev-cluster.sh installs; the cmd
// Slurm tests run the same file inside sbatch.
func TestSlurmFilterLuaAgrees(t *testing.T) {
	lua := luaInterpreter(t)
	dir := t.TempDir()
	run := func(env []string, program string) string {
		t.Helper()
		cmd := exec.Command(lua, "-e", "slurm = { SUCCESS = 0 }; dofile('../../../scripts/cli_filter.lua')\n"+program)
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
	if got, want := run(nil, "print(table.concat(migadvisor.key_env, ' '))"), strings.Join(filterKeyEnv, " ")+"\n"; got != want {
		t.Errorf("the key's environment %q, a refresh reads %q", got, want)
	}
	if kind, env, ok := keyEnvironment(key); !ok || kind != "" || !slices.Equal(env, []string{"PWD=/home/u", "SBATCH_GRES=gpu:a100:1"}) {
		t.Errorf("key %q holds %q %q %v", key, kind, env, ok)
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
	odd := filterCacheEntry{written: now - 100, key: "/a b\t1\t2", advice: "it's \"x\"\nentry 1 2 3 4 5 6\n\x00end\n", draft: "",
		options: "{}\nentry 1 2 3 4 5 6\nend\n"}
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
func TestSlurmFilterLuaKnowsMigadvisorAdvised(t *testing.T) {
	lua := luaInterpreter(t)
	filter, _ := filepath.Abs("../../../scripts/cli_filter.lua")
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

// The key of an salloc or srun request (migadvisor.session_key) is one
// filter-advise files a session's answer under, of its command, program,
// options and job name; a script's key is never one.
func TestSlurmFilterLuaSessionKey(t *testing.T) {
	lua := luaInterpreter(t)
	filter, _ := filepath.Abs("../../../scripts/cli_filter.lua")
	dir := t.TempDir()
	run := func(env []string, program string) string {
		t.Helper()
		cmd := exec.Command(lua, "-e", fmt.Sprintf("slurm = { SUCCESS = 0 }; dofile(%q)\n", filter)+program)
		cmd.Env = append([]string{"PATH=/usr/bin:/bin"}, env...)
		cmd.Dir = dir
		out, err := cmd.CombinedOutput()
		if err != nil {
			t.Fatalf("lua: %v\n%s", err, out)
		}
		return string(out)
	}
	salloc := run([]string{"USER=ab12", "MIGADVISOR_APPLY=1"},
		"io.write(migadvisor.session_key({ type = 'salloc', argv = {}, gres = 'gres:gpu:a100:1', ['job-name'] = 'jupyter' }))")
	if !sessionKeyMatches(salloc, FilterSalloc) || sessionKeyMatches(salloc, FilterSrun) || !strings.HasPrefix(salloc, "salloc\t\tsession\t") ||
		!strings.Contains(salloc, "\tgres:gpu:a100:1\t") || !strings.Contains(salloc, "\tjupyter\t") || !strings.Contains(salloc, "\t1\t") ||
		!strings.Contains(salloc, "\tab12\t") {
		t.Errorf("salloc's key %q", salloc)
	}
	srun := run([]string{"SLURM_JOB_NAME=lab"}, "io.write(migadvisor.session_key({ type = 'srun', argv = { '/opt/bin/jupyter', 'lab' } }))")
	if !sessionKeyMatches(srun, FilterSrun) || !strings.HasPrefix(srun, "srun\t/opt/bin/jupyter\tsession\t") || !strings.HasSuffix(srun, "\tlab") {
		t.Errorf("srun's key %q", srun)
	}
	for key, want := range map[string][]string{salloc: {"MIGADVISOR_APPLY=1", "USER=ab12"}, srun: {"SLURM_JOB_NAME=lab"}} {
		if kind, env, ok := keyEnvironment(key); !ok || kind != key[:strings.IndexByte(key, '\t')] || !slices.Equal(env, want) {
			t.Errorf("key %q holds %q %q %v, want %q", key, kind, env, ok, want)
		}
	}
	if got := run(nil, "print(migadvisor.session_key({ type = 'salloc', argv = {}, ['job-name'] = 'a\\tb' }))"); got != "nil\n" {
		t.Errorf("a tab in a value: key %q", got)
	}
	for _, name := range []string{"salloc", "srun"} { // a script named like the command, submitted where it is
		os.WriteFile(filepath.Join(dir, name), []byte(fullA100), 0o644)
		key := run(nil, fmt.Sprintf("io.write(migadvisor.key({ type = 'sbatch', argv = { %q } }))", name))
		if key == "" || sessionKeyMatches(key, FilterSalloc) || sessionKeyMatches(key, FilterSrun) {
			t.Errorf("a script's key %q is a session's", key)
		}
	}
}

// Which requests the filter advises: salloc's and srun's that ask for a
// GPU (any of its options) and make a job, outside one; others start no
// process (here: no line saying the binary is missing).
func TestSlurmFilterLuaAdvisesSessionsOfAGPU(t *testing.T) {
	lua := luaInterpreter(t)
	for _, c := range []struct {
		options string
		env     []string
		advised bool
	}{
		{"type = 'salloc', gres = 'gres:gpu:a100:1'", nil, true},
		{"type = 'salloc', gres = 'gres:gpu:a100:1'", []string{"SLURM_JOB_ID=42"}, false},
		{"type = 'salloc', gres = 'gres:shard:1'", nil, false},
		{"type = 'salloc'", nil, false},
		{"type = 'salloc', gpus = 'unset'", nil, false},
		{"type = 'srun', gpus = 'a100:1', jobid = 'unset'", nil, true},
		{"type = 'srun', ['gpus-per-node'] = 'a100:1'", nil, true},
		{"type = 'srun', ['gpus-per-task'] = '1', jobid = '42'", nil, false},
		{"type = 'srun', gres = 'gres:gpu:a100:1'", []string{"MIGADVISOR_DISABLE=1"}, false},
		{"type = 'other', gres = 'gres:gpu:a100:1'", nil, false},
	} {
		cmd := exec.Command(lua, "-e", "slurm = { SUCCESS = 0 }; dofile('../../../scripts/cli_filter.lua')\n"+
			"io.write(migadvisor.pre_submit({ argv = {}, "+c.options+" }, 0))")
		cmd.Env = append([]string{"PATH=/usr/bin:/bin", "MIGADVISOR_DB=" + filepath.Join(t.TempDir(), "history.db")}, c.env...)
		out, err := cmd.CombinedOutput()
		want := "0"
		if c.advised {
			want = "migadvisor: no advice this time: @PREFIX@/libexec/migadvisor/migadvisor-sbatch is not installed\n0"
		}
		if err != nil || string(out) != want {
			t.Errorf("{ %s } %v: %v %q, want %q", c.options, c.env, err, out, want)
		}
	}
}
