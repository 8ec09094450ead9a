package main

import (
	"bytes"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/migadvisor/migadvisor/advisor/base/history"
	"github.com/migadvisor/migadvisor/slurm/sacctgen"
)

// TestLoginNodesUnderLoad: four login nodes (a home each), each firing 100
// wrapper submissions at once through the shim and a few recommend calls,
// while the collecting host imports accounting and publishes the site's
// snapshot and index in a loop. Every submission reaches sbatch with the
// user's exact arguments and gets the site's advice, or, on a machine
// this loaded, goes on without it past the advice deadline; none sees a
// missing or torn index. Every recommend reads the snapshot, and every
// submission reaches its user's history, waiting there for collect to link
// it to its job (the shim runs sbatch itself, the wrapper beside it).
func TestLoginNodesUnderLoad(t *testing.T) {
	if testing.Short() {
		t.Skip("400 wrapper processes and a publishing loop: not with -short")
	}
	isolate(t)
	bin, lean := migadvisorBinary(t), sbatchBinary(t)
	shim, _ := filepath.Abs("../../scripts/sbatch")
	dir := t.TempDir()
	live, shared := filepath.Join(dir, "live", "site.db"), filepath.Join(dir, "shared")
	os.MkdirAll(shared, 0o755)
	script := wrapperScript(t)
	historyWithJob2(t, live, script) // someone's run of the script, in the site's history
	if _, errOut, code := migadvisor(t, "--db", live, "publish", shared); code != 0 {
		t.Fatal(errOut)
	}
	wulver, _ := os.ReadFile("../../catalog/sites/wulver.toml")
	site := filepath.Join(dir, "site.toml")
	os.WriteFile(site, append(wulver, "\n[history]\nsite_db = \""+filepath.Join(shared, "history.db")+"\"\n"...), 0o644)
	sbatch := newFakeSbatch(t, "") // job ids: its process ids

	var stop atomic.Bool
	var publishes atomic.Int32
	collector := make(chan error, 1)
	go func() { // the collecting host: import a dump, publish, again
		dump := filepath.Join(dir, "dump.psv")
		for i := 0; !stop.Load(); i++ {
			writeDump(t, dump, sacctgen.FirstJobID+i*2000, 2000)
			cmd := exec.Command(bin, "--db", live, "collect", "--sacct-file", dump, "--cluster", "migdev", "--publish", shared)
			cmd.Env = append(os.Environ(), "MIGADVISOR_SITE="+site)
			if out, err := cmd.CombinedOutput(); err != nil {
				collector <- fmt.Errorf("collect and publish %d: %v\n%s", i, err, out)
				return
			}
			publishes.Add(1)
		}
		collector <- nil
	}()

	const nodes, submissions = 4, 100
	args := []string{"--export=ALL,X=1 2", "-J", "it's", script, "a b"}
	type result struct {
		node            int
		stdout, stderr  string
		err             error
		recommend, user bool
	}
	results := make(chan result, nodes*(submissions+5))
	var wg sync.WaitGroup
	homes := make([]string, nodes)
	for n := range nodes {
		homes[n] = filepath.Join(dir, fmt.Sprintf("home%d", n))
		os.MkdirAll(homes[n], 0o700)
		env := append(os.Environ(), "HOME="+homes[n], "XDG_DATA_HOME="+filepath.Join(homes[n], ".local/share"),
			"MIGADVISOR_DB=", "MIGADVISOR_SITE="+site, "MIGADVISOR_SBATCH="+sbatch.Path, "MIGADVISOR_BIN="+lean)
		run := func(recommend bool, name string, a ...string) {
			defer wg.Done()
			cmd := exec.Command(name, a...)
			cmd.Env = env
			var out, errOut bytes.Buffer
			cmd.Stdout, cmd.Stderr = &out, &errOut
			err := cmd.Run()
			results <- result{node: n, stdout: out.String(), stderr: errOut.String(), err: err, recommend: recommend}
		}
		for range submissions {
			wg.Add(1)
			go run(false, shim, args...)
		}
		for range 5 {
			wg.Add(1)
			go run(true, bin, "recommend", script, "--json")
		}
	}
	wg.Wait()
	stop.Store(true)
	if err := <-collector; err != nil {
		t.Fatal(err)
	}
	close(results)
	advised, late, recommended := 0, 0, 0
	for r := range results {
		switch {
		case r.err != nil:
			t.Errorf("node %d: %v\n%s%s", r.node, r.err, r.stdout, r.stderr)
		case r.recommend:
			if !strings.Contains(r.stdout, `"basis": "measured"`) {
				t.Errorf("node %d: recommend: %s%s", r.node, r.stdout, r.stderr)
			} else {
				recommended++
			}
		case !strings.HasPrefix(r.stdout, "Submitted batch job ") || strings.Count(r.stderr, "\n") != 1:
			t.Errorf("node %d: a submission: %q %q", r.node, r.stdout, r.stderr)
		case strings.Contains(r.stderr, "completed on 1g.10gb in 1 run"):
			advised++
		case strings.HasPrefix(r.stderr, "migadvisor: no advice this time: gave up after"):
			late++ // 400 processes on 2 cores: past the deadline, the submission goes on without advice
		default:
			t.Errorf("node %d: a submission: %q %q", r.node, r.stdout, r.stderr) // a missing or torn index would say so
		}
	}
	logged := sbatch.take(t)
	for _, c := range logged {
		if !slices.Equal(c.Args, args) {
			t.Errorf("sbatch got %q", c.Args)
		}
	}
	if len(logged) != nodes*submissions || advised+late != nodes*submissions || advised < nodes*submissions/2 ||
		recommended != nodes*5 || publishes.Load() == 0 {
		t.Errorf("%d sbatch calls, %d advised, %d past the deadline, %d recommended, %d publishes", len(logged), advised, late,
			recommended, publishes.Load())
	}
	for n, home := range homes { // every record reaches its user's history
		db := filepath.Join(home, ".local/share/migadvisor/history.db")
		st, err := history.Open(t.Context(), db)
		if err != nil {
			t.Fatal(err)
		}
		pending, err := st.PendingCount(t.Context(), time.Time{}) // recorded beside sbatch: collect links them to their jobs
		st.Close()
		if err != nil || pending != submissions {
			t.Errorf("node %d: %d submissions in the history, %v", n, pending, err)
		}
	}
	t.Logf("%d submissions advised, %d past the advice deadline, %d recommend calls, during %d publishes", advised, late,
		recommended, publishes.Load())
}
