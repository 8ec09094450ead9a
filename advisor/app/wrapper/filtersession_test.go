package wrapper

import (
	"context"
	"fmt"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/migadvisor/migadvisor/advisor/app/index"
	"github.com/migadvisor/migadvisor/advisor/base/history"
	"github.com/migadvisor/migadvisor/advisor/base/history/historytest"
	"github.com/migadvisor/migadvisor/catalog"
)

// filterSession is one pre_submit of salloc or srun (kind) with the
// options Slurm parsed; it returns the answer on stdout.
func (f *fixture) filterSession(kind, options, key string) string {
	f.stdout.Reset()
	f.stderr.Reset()
	FilterAdviseSession(context.Background(), Options{
		Env: f.env, Now: func() time.Time { return f.now }, WorkDir: f.dir, DefaultDB: f.db,
		Stdout: &f.stdout, Stderr: &f.stderr, AdviceDeadline: f.deadline,
		OpenIndex: f.openIndex, LoadSite: f.loadSite, User: f.user,
	}, kind, options, key)
	return f.stdout.String()
}

// withSessions fills the user's history with ab12's five ended sessions of
// each name on a whole A100, whose steps' gres/gpumem peaked at 2.9 GiB,
// and indexes it.
func (f *fixture) withSessions(t *testing.T, names ...string) {
	t.Helper()
	f.importSessions(t, names...)
	indexed(t, f.db)
	f.user = "ab12"
}

// importSessions fills the user's history as withSessions does, but
// leaves their index as it was.
func (f *fixture) importSessions(t *testing.T, names ...string) {
	t.Helper()
	dump := "JobIDRaw|JobID|Cluster|User|State|ExitCode|Submit|Start|End|NNodes|AllocCPUS|ReqMem|AllocTRES|TRESUsageInMax|JobName|Partition\n"
	id := 100
	for _, name := range names {
		for day := 10; day < 15; day++ {
			id++
			times := fmt.Sprintf("|2026-11-%dT09:00:00|2026-11-%dT09:01:00|2026-11-%dT11:01:00|1|2|8G|", day, day, day)
			dump += fmt.Sprintf("%d|%d|wulver|ab12|TIMEOUT|0:0%scpu=2,gres/gpu:a100=1,gres/gpu=1,mem=8G,node=1||%s|gpu\n", id, id, times, name)
			dump += fmt.Sprintf("%d.0|%d.0|wulver|ab12|CANCELLED|0:15%scpu=2,gres/gpu=1,mem=8G,node=1|gres/gpu=1,gres/gpumem=2970M|bash|gpu\n",
				id, id, times)
		}
	}
	st, err := history.Open(context.Background(), f.db)
	if err != nil {
		t.Fatal(err)
	}
	site, _ := catalog.Builtin("wulver")
	historytest.Import(t, st, site, strings.NewReader(dump), "")
	st.Close()
}

const jupyterAdvice = "migadvisor: your last 5 sessions named jupyter peaked at 2.9 GiB: 1g.10gb is enough, 3 SU/h instead of 17"

// salloc -J jupyter on a whole A100, where the user's past sessions named
// jupyter peaked at 2.9 GiB: the help line and the change to ask with,
// priced as this request asks; with consent, the change made and said.
func TestFilterAdvisesASession(t *testing.T) {
	f := newFixture(t)
	f.withSessions(t, "jupyter")
	salloc := map[string]string{"job-name": "jupyter", "gres": "gres:gpu:a100:1", "mem": "64", "time": "01:00:00"}
	if answer := f.filterSession(FilterSalloc, filterOptions(t, salloc), ""); answer != "ok\n" ||
		f.stderr.String() != jupyterAdvice+"; next time ask with --gres=gpu:a100_10g:1, or set MIGADVISOR_APPLY=1 to have it changed for you\n" {
		t.Errorf("answer %q, stderr %q", answer, f.stderr.String())
	}
	f.setenv(EnvApply, "1")
	if answer := f.filterSession(FilterSalloc, filterOptions(t, salloc), ""); answer != "set\tgres\tgpu:a100_10g:1\nok\n" ||
		f.stderr.String() != jupyterAdvice+".\nmigadvisor: submitting on 1g.10gb: --gres=gpu:a100:1 -> --gres=gpu:a100_10g:1\n" {
		t.Errorf("with consent: answer %q, stderr %q", answer, f.stderr.String())
	}
	// --gpus is changed as --gpus; a partition the slice is not offered in
	// is changed too; 4 CPUs price both.
	gpus := map[string]string{"job-name": "jupyter", "gpus": "a100:1", "partition": "general", "cpus-per-task": "4", "mem": "64"}
	if answer := f.filterSession(FilterSalloc, filterOptions(t, gpus), ""); answer != "set\tgpus\ta100_10g:1\nset\tpartition\tgpu\nok\n" ||
		!strings.Contains(f.stderr.String(), "1g.10gb is enough, 6 SU/h instead of 20.\n") ||
		!strings.HasSuffix(f.stderr.String(), "submitting on 1g.10gb: --gpus=a100:1 -> --gpus=a100_10g:1, --partition=general -> --partition=gpu\n") {
		t.Errorf("--gpus: answer %q, stderr %q", answer, f.stderr.String())
	}
}

// The session's name is its -J, else srun's SLURM_JOB_NAME or program,
// else salloc's default, as sacct records them.
func TestFilterSessionNames(t *testing.T) {
	f := newFixture(t)
	f.withSessions(t, "jupyter", "interactive")
	gpu := map[string]string{"gres": "gres:gpu:a100:1"}
	for _, c := range []struct {
		kind  string
		env   []string
		argv  []string
		named string
	}{
		{FilterSalloc, nil, []string{"jupyter"}, "interactive"},
		{FilterSalloc, nil, nil, "interactive"},
		{FilterSrun, nil, []string{"/opt/conda/bin/jupyter", "lab"}, "jupyter"},
		{FilterSrun, []string{"SLURM_JOB_NAME=interactive"}, []string{"jupyter"}, "interactive"},
		{FilterSrun, nil, []string{"bash"}, ""},
	} {
		f.env = append([]string{"PATH=/usr/bin"}, c.env...)
		f.filterSession(c.kind, filterOptions(t, gpu, c.argv...), "")
		if got := f.stderr.String(); c.named == "" && got != "" || c.named != "" && !strings.Contains(got, " sessions named "+c.named+" peaked") {
			t.Errorf("%s %v %v: %q, want sessions named %q", c.kind, c.env, c.argv, got, c.named)
		}
	}
}

// Nothing to say: a name without sessions, another user's, a request no
// bigger than the advice (or of no GPU, or one the site does not know),
// no index yet.
func TestFilterSessionSilence(t *testing.T) {
	f := newFixture(t)
	f.setenv(EnvApply, "1")
	if answer := f.filterSession(FilterSalloc, filterOptions(t, map[string]string{"job-name": "jupyter", "gres": "gres:gpu:a100:1"}), ""); answer != "ok\n" ||
		f.stderr.String() != "" {
		t.Errorf("no index: %q %q", answer, f.stderr.String())
	}
	f.withSessions(t, "jupyter")
	for name, opts := range map[string]map[string]string{
		"no sessions":      {"job-name": "notebook", "gres": "gres:gpu:a100:1"},
		"the advice":       {"job-name": "jupyter", "gres": "gres:gpu:a100_10g:1"},
		"no GPU":           {"job-name": "jupyter", "mem": "64"},
		"two GPUs":         {"job-name": "jupyter", "gres": "gres:gpu:a100:2"},
		"an unknown type":  {"job-name": "jupyter", "gres": "gres:gpu:h100:1"},
		"two kinds of GPU": {"job-name": "jupyter", "gres": "gres:gpu:a100:1,gres:gpu:a100_10g:1"},
	} {
		if answer := f.filterSession(FilterSalloc, filterOptions(t, opts), ""); answer != "ok\n" || f.stderr.String() != "" {
			t.Errorf("%s: %q %q", name, answer, f.stderr.String())
		}
	}
	f.user = "cd34"
	if answer := f.filterSession(FilterSalloc, filterOptions(t, map[string]string{"job-name": "jupyter", "gres": "gres:gpu:a100:1"}), ""); answer != "ok\n" ||
		f.stderr.String() != "" {
		t.Errorf("another user: %q %q", answer, f.stderr.String())
	}
}

// Nothing in the way of a session: an unreadable index or options, a
// panic, cost one line and end the answer; MIGADVISOR_DISABLE=1 is silent.
func TestFilterSessionFailsOpen(t *testing.T) {
	f := newFixture(t)
	f.withSessions(t, "jupyter")
	opts := filterOptions(t, map[string]string{"job-name": "jupyter", "gres": "gres:gpu:a100:1"})
	for _, bad := range []string{"", "{", `{"argv": 3}`} {
		if answer := f.filterSession(FilterSalloc, bad, ""); answer != "ok\n" || strings.Count(f.stderr.String(), "\n") != 1 {
			t.Errorf("%q: %q, %q", bad, answer, f.stderr.String())
		}
	}
	if err := os.WriteFile(index.OwnPath(f.db), []byte("not an index"), 0o600); err != nil {
		t.Fatal(err)
	}
	if answer := f.filterSession(FilterSalloc, opts, ""); answer != "ok\n" ||
		!strings.HasPrefix(f.stderr.String(), "migadvisor: no advice this time: your advice index is not readable") || strings.Count(f.stderr.String(), "\n") != 1 {
		t.Errorf("unreadable index: %q, %q", answer, f.stderr.String())
	}
	f.openIndex = func(string) (*index.Reader, error) { panic("a damaged index") }
	if answer := f.filterSession(FilterSalloc, opts, ""); answer != "ok\n" ||
		f.stderr.String() != "migadvisor: no advice this time: internal error: a damaged index\n" {
		t.Errorf("a panic: %q, %q", answer, f.stderr.String())
	}
	f.setenv(EnvDisable, "1")
	if answer := f.filterSession(FilterSalloc, opts, ""); answer != "ok\n" || f.stderr.String() != "" {
		t.Errorf("disabled: %q, %q", answer, f.stderr.String())
	}
}

// A session's answer goes to the filter's cache under cli_filter.lua's
// key, its advice and settings whole, and one of a script's key or of
// another command does not.
func TestFilterSessionIsCached(t *testing.T) {
	f := newFixture(t)
	f.withSessions(t, "jupyter")
	f.setenv(EnvApply, "1")
	opts := filterOptions(t, map[string]string{"job-name": "jupyter", "gres": "gres:gpu:a100:1"})
	key := "salloc\t\tsession\tgres:gpu:a100:1\tjupyter"
	answer := f.filterSession(FilterSalloc, opts, key)
	entries := readFilterCache(index.FilterCachePath(f.db))
	if len(entries) != 1 || entries[0].key != key || entries[0].advice != f.stderr.String() || entries[0].sets+"ok\n" != answer ||
		entries[0].draft != "" || entries[0].written != f.now.Unix() {
		t.Fatalf("cached %+v, answer %q, stderr %q", entries, answer, f.stderr.String())
	}
	for _, other := range []string{"srun\t\tsession\tx", "salloc\t0\t0\tx", "/job.sh\t10\t123\tx"} {
		f.filterSession(FilterSalloc, opts, other)
	}
	if entries := readFilterCache(index.FilterCachePath(f.db)); len(entries) != 1 {
		t.Errorf("cached under other keys: %+v", entries)
	}
	if _, err := os.Stat(history.SpoolFor(f.db).Dir); err == nil {
		t.Error("a session's answer made the spool")
	}
}
