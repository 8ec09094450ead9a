package wrapper

import (
	"bytes"
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"reflect"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/migadvisor/migadvisor/advisor/app/index"
	"github.com/migadvisor/migadvisor/advisor/base/history"
	"github.com/migadvisor/migadvisor/internal/faultfs"
	"github.com/migadvisor/migadvisor/slurm"
)

// filter is one pre_submit of sbatch's cli_filter with the options sbatch
// parsed (slurm.json_cli_options's JSON); it returns the answer on stdout.
func (f *fixture) filter(options string) string { return f.filterKeyed(options, "") }

// filterKeyed is filter with cli_filter.lua's key of the filter's cache.
func (f *fixture) filterKeyed(options, key string) string {
	f.stdout.Reset()
	f.stderr.Reset()
	FilterAdvise(context.Background(), Options{
		Env: f.env, Now: func() time.Time { return f.now }, WorkDir: f.dir, DefaultDB: f.db,
		Stdout: &f.stdout, Stderr: &f.stderr, AdviceDeadline: f.deadline,
		OpenIndex: f.openIndex, LoadSite: f.loadSite, User: f.user,
	}, options, key)
	return f.stdout.String()
}

// filterOptions is what sbatch's cli_filter gives for options and argv.
func filterOptions(t *testing.T, options map[string]string, argv ...string) string {
	t.Helper()
	m := map[string]any{"argv": append([]string{}, argv...)}
	for k, v := range options {
		m[k] = v
	}
	data, err := json.Marshal(m)
	if err != nil {
		t.Fatal(err)
	}
	return string(data)
}

// draft is the record in a filter's answer, nil when there is none.
func draft(t *testing.T, answer string) *history.Submission {
	t.Helper()
	for _, line := range strings.Split(answer, "\n") {
		if rest, ok := strings.CutPrefix(line, FilterRecord+"\t"); ok {
			var sub history.Submission
			if err := json.Unmarshal([]byte(rest), &sub); err != nil {
				t.Fatalf("draft %q: %v", rest, err)
			}
			return &sub
		}
	}
	return nil
}

var filterAdviceLine = regexp.MustCompile(`^migadvisor: .*1g\.10gb.*\. Next time, submit with --gres=gpu:a100_10g:1, or with MIGADVISOR_APPLY=1 in the environment to have it changed for you\.\n$`)

// As sbatch's cli_filter gives them: the script's own options (Slurm's
// forms: "gres:" before each GRES, minutes as [D-]HH:MM:SS) and the
// script's absolute path.
func wulverOptions(path string, extra map[string]string) map[string]string {
	opts := map[string]string{"partition": "gpu", "gres": "gres:gpu:a100:1", "time": "00:05:00", "job-name": "job.sh"}
	for k, v := range extra {
		opts[k] = v
	}
	return opts
}

func TestFilterAdvises(t *testing.T) {
	f := newFixture(t)
	path := f.script(t, "job.sh", fullA100)
	f.withJob2(t, path)
	answer := f.filter(filterOptions(t, wulverOptions(path, nil), path, "arg 1"))
	if !filterAdviceLine.MatchString(f.stderr.String()) {
		t.Errorf("advice: %q", f.stderr.String())
	}
	if strings.Contains(answer, FilterSet+"\t") || !strings.HasSuffix(answer, "\nok\n") {
		t.Errorf("no consent, yet the answer is %q", answer)
	}
	sub := draft(t, answer)
	script, _ := slurm.ReadScript(path)
	if sub == nil || sub.JobID != "" || sub.Profile != "full" || sub.Fingerprint != script.Fingerprint() || sub.Source != path ||
		sub.WorkDir != f.dir || !sub.Submitted.Equal(f.now) {
		t.Errorf("draft %+v", sub)
	}
}

// With consent, the options to set, the change said on stderr, and the
// draft on the profile submitted on.
func TestFilterApplies(t *testing.T) {
	f := newFixture(t)
	path := f.script(t, "job.sh", fullA100)
	f.withJob2(t, path)
	f.setenv(EnvApply, "1")
	answer := f.filter(filterOptions(t, wulverOptions(path, nil), path))
	if !strings.HasPrefix(answer, "set\tgres\tgpu:a100_10g:1\nrecord\t") || !strings.HasSuffix(answer, "\nok\n") {
		t.Errorf("answer %q", answer)
	}
	if !strings.HasSuffix(f.stderr.String(), "migadvisor: submitting on 1g.10gb: --gres=gpu:a100:1 -> --gres=gpu:a100_10g:1\n") {
		t.Errorf("stderr %q", f.stderr.String())
	}
	if sub := draft(t, answer); sub == nil || sub.Profile != "1g.10gb" {
		t.Errorf("draft %+v", sub)
	}
}

// An option that overrides the script's (sbatch's command line or the
// environment) is what the advice reads: asking for the slice already,
// there is nothing to say; test-only, wrap and stdin make no record.
func TestFilterReadsSbatchsOptions(t *testing.T) {
	f := newFixture(t)
	path := f.script(t, "job.sh", fullA100)
	f.withJob2(t, path)
	f.setenv(EnvApply, "1")
	answer := f.filter(filterOptions(t, wulverOptions(path, map[string]string{"gres": "gres:gpu:a100_10g:1"}), path))
	if f.stderr.String() != "" || strings.Contains(answer, "set\t") {
		t.Errorf("already on the advice: %q, %q", f.stderr.String(), answer)
	}
	if sub := draft(t, answer); sub == nil || sub.Profile != "1g.10gb" {
		t.Errorf("draft %+v", sub)
	}
	for name, opts := range map[string]string{
		"test-only": filterOptions(t, wulverOptions(path, map[string]string{"test-only": "set"}), path),
		"wrap":      filterOptions(t, map[string]string{"wrap": "python train.py", "gres": "gres:gpu:a100:1"}),
		"stdin":     filterOptions(t, map[string]string{"gres": "gres:gpu:a100:1"}),
	} {
		answer := f.filter(opts)
		// --test-only shows when the job would start as changed, as the
		// wrapper in sbatch's place does.
		if draft(t, answer) != nil || strings.Contains(answer, "set\t") != (name == "test-only") || !strings.HasSuffix(answer, "ok\n") {
			t.Errorf("%s: %q", name, answer)
		}
		if name == "test-only" && !strings.Contains(f.stderr.String(), "submitting on 1g.10gb") {
			t.Errorf("%s: the advice %q", name, f.stderr.String())
		}
		if name != "test-only" && !strings.Contains(f.stderr.String(), "cannot be applied") {
			t.Errorf("%s: %q", name, f.stderr.String())
		}
	}
}

// The command line the advice reads: what the script's lines and the
// environment already say stays theirs; Slurm's forms of an option read as
// the user's; what differs overrides them, as sbatch's command line does.
func TestFilterCommandLine(t *testing.T) {
	script := slurm.Parse("job.sh", []byte("#!/bin/bash\n#SBATCH --time=5\n#SBATCH --mem=64M\n#SBATCH --gres=gpu:a100:1\n#SBATCH -J named\nhostname\n"))
	env := []string{"SBATCH_PARTITION=debug_gpu"}
	req := filterRequest{opts: map[string]string{"time": "00:05:00", "mem": "64", "gres": "gres:gpu:a100:1", "job-name": "named",
		"partition": "debug_gpu", "chdir": "/scratch/x", "parsable": "set", "exclusive": "exclusive", "export": "ALL"},
		argv: []string{"/home/ab12/job.sh", "a b"}}
	want := []string{"--chdir=/scratch/x", "--exclusive", "/home/ab12/job.sh", "a b"}
	if got := req.args(script, env); !reflect.DeepEqual(got, want) {
		t.Errorf("args %q, want %q", got, want)
	}
	req.opts["time"], req.opts["gres"], req.opts["test-only"] = "1-00:00:00", "gres:gpu:a100_20g:1,gres:shard:2", "set"
	want = []string{"--test-only", "--chdir=/scratch/x", "--time=1-00:00:00", "--exclusive", "--gres=gpu:a100_20g:1,shard:2", "/home/ab12/job.sh", "a b"}
	if got := req.args(script, env); !reflect.DeepEqual(got, want) {
		t.Errorf("args %q, want %q", got, want)
	}
}

// Nothing in the way of a submission: what the filter cannot read costs
// one line and still ends its answer; a script changed after sbatch read
// it is no record; MIGADVISOR_DISABLE=1 is silent.
func TestFilterFailsOpen(t *testing.T) {
	f := newFixture(t)
	path := f.script(t, "job.sh", fullA100)
	for _, bad := range []string{"", "{", `{"argv": 3}`, "null"} {
		if answer := f.filter(bad); answer != "ok\n" || strings.Count(f.stderr.String(), "\n") > 1 {
			t.Errorf("%q: %q, %q", bad, answer, f.stderr.String())
		}
	}
	if answer := f.filter(filterOptions(t, nil, "/nowhere/job.sh")); answer != "ok\n" || f.stderr.String() != "" {
		t.Errorf("no script: %q, %q", answer, f.stderr.String())
	}
	later := time.Now().Add(time.Hour)
	os.Chtimes(path, later, later)
	if answer := f.filter(filterOptions(t, wulverOptions(path, nil), path)); answer != "ok\n" {
		t.Errorf("changed since sbatch read it: %q", answer)
	}
	f.openIndex = func(string) (*index.Reader, error) { panic("a damaged index") }
	os.Chtimes(path, f.now, f.now)
	f.withJob2(t, path)
	if answer := f.filter(filterOptions(t, wulverOptions(path, nil), path)); draft(t, answer) == nil ||
		!strings.HasPrefix(f.stderr.String(), "migadvisor: no advice this time: internal error: a damaged index") || strings.Count(f.stderr.String(), "\n") != 1 {
		t.Errorf("a panic: %q, %q", answer, f.stderr.String())
	}
	f.setenv(EnvDisable, "1")
	if answer := f.filter(filterOptions(t, wulverOptions(path, nil), path)); answer != "ok\n" || f.stderr.String() != "" {
		t.Errorf("disabled: %q, %q", answer, f.stderr.String())
	}
}

// post_submit: the draft with the job's id goes to the spool; a job id or
// a draft that is not one is no record.
func TestFilterRecordJob(t *testing.T) {
	f := newFixture(t)
	path := f.script(t, "job.sh", fullA100)
	f.setenv("MIGADVISOR_DB", f.db)
	answer := f.filter(filterOptions(t, wulverOptions(path, map[string]string{"clusters": "migdev"}), path))
	sub := draft(t, answer)
	if sub == nil || sub.Cluster != "migdev" {
		t.Fatalf("answer %q", answer)
	}
	data, _ := json.Marshal(sub)
	opt := Options{Env: f.env, DefaultDB: "/nowhere/history.db"}
	for _, bad := range [][2]string{{"", string(data)}, {"12;rm", string(data)}, {"12", "{"}, {"12", "{}"}} {
		if err := FilterRecordJob(context.Background(), opt, bad[0], bad[1]); err == nil {
			t.Errorf("%q: no error", bad)
		}
	}
	if err := FilterRecordJob(context.Background(), opt, "4243", string(data)); err != nil {
		t.Fatal(err)
	}
	subs := f.spooled(t)
	want := *sub
	want.JobID = "4243"
	if len(subs) != 1 || !reflect.DeepEqual(subs[0], want) {
		t.Errorf("spooled %+v, want %+v", subs, want)
	}
}

// The fault matrix's cli_filter (docs/admin/scale.md, Faults): with the
// user's history on a full disk or a read-only one, a cache file cut
// short, or an index a newer migadvisor wrote, filter-advise still ends
// its answer ("ok", which is what cli_filter.lua waits for) and says at
// most one line of its own beside the advice it could give.
func TestFilterFailsOpenOnFaults(t *testing.T) {
	f := newFixture(t)
	fs := faultfs.Small(t, 16<<20)
	f.db = filepath.Join(fs, "history.db")
	f.setenv("PWD", f.dir)
	path := f.script(t, "job.sh", fullA100)
	f.withJob2(t, path)
	opts := filterOptions(t, wulverOptions(path, nil), path)
	key := cacheKey(t, path, "gpu", "1")
	cache := index.FilterCachePath(f.db)
	answered := func(fault string, advised bool) {
		t.Helper()
		answer := f.filterKeyed(opts, key)
		said := f.stderr.String()
		lines := strings.SplitAfter(said, "\n")
		if advised && filterAdviceLine.MatchString(lines[0]) {
			lines = lines[1:]
		} else if advised {
			t.Errorf("%s: no advice in %q", fault, said)
		}
		if own := strings.Join(lines, ""); !strings.HasSuffix(answer, "\n"+FilterOK+"\n") || draft(t, answer) == nil || strings.Count(own, "\n") > 1 {
			t.Errorf("%s: answer %q, stderr %q", fault, answer, said)
		}
	}
	free := faultfs.Fill(t, fs, 0)
	answered("the disk full", true)
	if _, err := os.Stat(cache); err == nil {
		t.Error("the disk full: a cache was written")
	}
	free()
	writable := faultfs.ReadOnly(t, fs)
	answered("the history's directory read-only", true)
	writable()

	answered("a first answer, cached", true)
	whole, err := os.ReadFile(cache)
	if err != nil {
		t.Fatal(err)
	}
	os.WriteFile(cache, whole[:len(whole)/2], 0o600) // a writer killed midway (it writes whole, then renames: a copy's)
	answered("a cache cut short", true)
	if again, _ := os.ReadFile(cache); !bytes.Equal(again, whole) {
		t.Errorf("the cache cut short was not written whole again:\n%q\n%q", again, whole)
	}

	idx, err := os.OpenFile(index.OwnPath(f.db), os.O_WRONLY, 0)
	if err != nil {
		t.Fatal(err)
	}
	idx.WriteAt([]byte{index.Version + 1}, 8) // the index's version
	idx.Close()
	os.Remove(cache)
	answered("an index of a newer migadvisor", false)
}
