package main

import (
	"os"
	"path/filepath"
	"testing"
)

// asAdder is a command's options as a runAdder.
func asAdder[O runAdder](o O, err error) (runAdder, error) { return o, err }

// Whether a command may have added runs to the user's history, so that
// their advice index is rewritten after it, is its options' to say (argv →
// options → addsRuns): a collect of the user's own jobs, a probe, a sweep
// that submits, a wait that collects, track and benchmark run do; a plain
// recommend (fast, read-only), a site-wide or published collect, a sweep
// that only writes and a wait told not to collect do not.
func TestAddsRunsFollowsTheOptions(t *testing.T) {
	isolate(t)
	script := filepath.Join(t.TempDir(), "job.sh")
	if err := os.WriteFile(script, []byte("#!/bin/bash\n#SBATCH --gres=gpu:a100:1\npython train.py\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	cases := []struct {
		name string
		adds func() (runAdder, error)
		want bool
	}{
		{"collect", func() (runAdder, error) { return asAdder(optionsOf(t, collectCommand(), collectOptionsFrom)) }, true},
		{"collect --all-users", func() (runAdder, error) {
			return asAdder(optionsOf(t, collectCommand(), collectOptionsFrom, "--all-users"))
		}, false},
		{"collect --publish DIR", func() (runAdder, error) {
			return asAdder(optionsOf(t, collectCommand(), collectOptionsFrom, "--publish", t.TempDir()))
		}, false},
		{"recommend", func() (runAdder, error) {
			return asAdder(optionsOf(t, recommendCommand(), recommendOptionsFrom, script))
		}, false},
		{"recommend --probe", func() (runAdder, error) {
			return asAdder(optionsOf(t, recommendCommand(), recommendOptionsFrom, "--probe", script))
		}, true},
		{"sweep --out DIR", func() (runAdder, error) {
			return asAdder(optionsOf(t, sweepCommand(), sweepOptionsFrom, "--out", t.TempDir(), script))
		}, false},
		{"sweep --out DIR --submit", func() (runAdder, error) {
			return asAdder(optionsOf(t, sweepCommand(), sweepOptionsFrom, "--out", t.TempDir(), "--submit", script))
		}, true},
		{"wait", func() (runAdder, error) { return asAdder(optionsOf(t, waitCommand(), waitOptionsFrom)) }, true},
		{"wait --no-collect", func() (runAdder, error) { return asAdder(optionsOf(t, waitCommand(), waitOptionsFrom, "--no-collect")) }, false},
		{"track", func() (runAdder, error) { return asAdder(optionsOf(t, trackCommand(), trackOptionsFrom, script, "42")) }, true},
	}
	for _, c := range cases {
		o, err := c.adds()
		if err != nil {
			t.Errorf("%s: %v", c.name, err)
			continue
		}
		if got := o.addsRuns(); got != c.want {
			t.Errorf("%s: addsRuns %v, want %v", c.name, got, c.want)
		}
	}
}
