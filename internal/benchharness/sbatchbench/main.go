//go:build linux

// Command sbatchbench times sbatch as users meet it: commands that submit
// (Slurm's sbatch or a stand-in, and the migadvisor shim installed in front
// of it), each run by one or more submitters side by side, paired and
// interleaved round by round, each submission timed until its process exits
// (the prompt) and until the last process it started has exited (the
// wrapper the shim leaves beside sbatch), with the CPU time of all of them
// and whether the advice reached the terminal after sbatch's line.
//
//	sbatchbench [-submitters N] [-rounds N] [-warmup N] [-json] NAME=PATH... -- SBATCH ARGS...
//
// The first NAME=PATH is the baseline the others are paired against, e.g.
//
//	sbatchbench -submitters 8 sbatch=/usr/bin/sbatch shim=/usr/local/libexec/migadvisor/sbatch -- --hold job.sh
//
// make bench-wrapper runs it (BenchmarkSbatchWrapper, cmd/migadvisor) on a
// stub sbatch and on the dev cluster's; docs/performance.md has its figures.
package main

import (
	"encoding/json"
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"strings"

	"github.com/migadvisor/migadvisor/internal/benchharness"
)

func main() {
	if os.Getenv(benchharness.SubmitterEnv) != "" {
		os.Exit(benchharness.SubmitterMain())
	}
	cfg := benchharness.Config{Marks: benchharness.Marks{}}
	flag.IntVar(&cfg.Submitters, "submitters", 1, "submitters side by side")
	flag.IntVar(&cfg.Rounds, "rounds", 200, "rounds each submitter runs, every command once a round")
	flag.IntVar(&cfg.Warmup, "warmup", 3, "rounds first, not reported")
	flag.StringVar(&cfg.Marks.Advice, "advice", "migadvisor:", "how the advice's lines start")
	flag.StringVar(&cfg.Marks.Answer, "answer", "Submitted batch job", "how sbatch's line starts")
	asJSON := flag.Bool("json", false, "the report as JSON")
	flag.Parse()
	cmds, args, err := commands(flag.Args())
	if err != nil {
		fmt.Fprintln(os.Stderr, "sbatchbench:", err)
		os.Exit(2)
	}
	for _, c := range cmds {
		c.Args = args
		cfg.Commands = append(cfg.Commands, c)
	}
	self, err := os.Executable()
	if err != nil {
		fmt.Fprintln(os.Stderr, "sbatchbench:", err)
		os.Exit(1)
	}
	subs, err := benchharness.Run(self, cfg)
	if err != nil {
		fmt.Fprintln(os.Stderr, "sbatchbench:", err)
		os.Exit(1)
	}
	rep := benchharness.Summarize(cfg, subs)
	if *asJSON {
		json.NewEncoder(os.Stdout).Encode(rep)
		return
	}
	rep.WriteText(os.Stdout)
}

// commands are the NAME=PATH words before "--", and the arguments after it.
func commands(words []string) ([]benchharness.Command, []string, error) {
	var cmds []benchharness.Command
	for i, w := range words {
		if w == "--" {
			if len(cmds) == 0 {
				break
			}
			return cmds, words[i+1:], nil
		}
		name, path, ok := strings.Cut(w, "=")
		if !ok || name == "" || path == "" {
			return nil, nil, fmt.Errorf("%q: commands are NAME=PATH", w)
		}
		abs, err := filepath.Abs(path)
		if err != nil {
			return nil, nil, err
		}
		cmds = append(cmds, benchharness.Command{Name: name, Path: abs})
	}
	return nil, nil, fmt.Errorf("usage: sbatchbench [flags] NAME=PATH... -- SBATCH ARGS...")
}
