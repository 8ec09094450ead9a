//go:build linux

package benchharness

import (
	"bufio"
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"slices"
	"sync"
)

// Config is one measurement: Submitters processes side by side, each
// running Rounds rounds of every command once (Warmup rounds first, not
// reported), the order of a round the last one's reversed (ABBA...). The
// first command is the baseline the others are paired against.
type Config struct {
	Submitters int       `json:"submitters"`
	Rounds     int       `json:"rounds"`
	Warmup     int       `json:"warmup"`
	Commands   []Command `json:"commands"`
	Marks      Marks     `json:"marks"`
}

// SubmitterEnv marks a process started by Run as one of its submitters:
// its program calls SubmitterMain when it finds it set.
const SubmitterEnv = "BENCHHARNESS_SUBMITTER"

// submitterJob is what Run tells a submitter process, on its standard input.
type submitterJob struct {
	Config
	ID int `json:"id"`
}

// Run measures cfg with submitter processes of program self (one that
// calls SubmitterMain when SubmitterEnv is set): they start together and
// each submits one command at a time. It returns every submission timed.
func Run(self string, cfg Config) ([]Submission, error) {
	if cfg.Submitters < 1 || cfg.Rounds < 1 || len(cfg.Commands) == 0 {
		return nil, errors.New("benchharness: a measurement needs submitters, rounds and commands")
	}
	var (
		mu    sync.Mutex
		subs  []Submission
		errs  []error
		group sync.WaitGroup
	)
	for id := range cfg.Submitters {
		group.Add(1)
		go func() {
			defer group.Done()
			got, err := runSubmitter(self, submitterJob{cfg, id})
			mu.Lock()
			defer mu.Unlock()
			subs = append(subs, got...)
			if err != nil {
				errs = append(errs, fmt.Errorf("submitter %d: %w", id, err))
			}
		}()
	}
	group.Wait()
	return subs, errors.Join(errs...)
}

// runSubmitter runs one submitter process and reads its submissions.
func runSubmitter(self string, job submitterJob) ([]Submission, error) {
	in, err := json.Marshal(job)
	if err != nil {
		return nil, err
	}
	cmd := exec.Command(self)
	cmd.Env = append(os.Environ(), SubmitterEnv+"=1")
	cmd.Stdin = bytes.NewReader(in)
	cmd.Stderr = os.Stderr
	out, err := cmd.StdoutPipe()
	if err != nil {
		return nil, err
	}
	if err := cmd.Start(); err != nil {
		return nil, err
	}
	var subs []Submission
	dec := json.NewDecoder(out)
	for {
		var s Submission
		if err := dec.Decode(&s); err == io.EOF {
			break
		} else if err != nil {
			cmd.Process.Kill()
			cmd.Wait()
			return subs, fmt.Errorf("read its submissions: %w", err)
		}
		subs = append(subs, s)
	}
	return subs, cmd.Wait()
}

// SubmitterMain is a submitter process's work: the job Run wrote on its
// standard input, each submission a JSON line on its standard output. It
// returns the exit status.
func SubmitterMain() int {
	var job submitterJob
	if err := json.NewDecoder(os.Stdin).Decode(&job); err != nil {
		fmt.Fprintln(os.Stderr, "benchharness submitter:", err)
		return 2
	}
	out := bufio.NewWriter(os.Stdout)
	defer out.Flush()
	if err := submitRounds(job, json.NewEncoder(out)); err != nil {
		fmt.Fprintf(os.Stderr, "benchharness submitter %d: %v\n", job.ID, err)
		return 1
	}
	return 0
}

// submitRounds runs a submitter's rounds, the commands' order reversed
// every other round and the first round's order the other way round for
// every other submitter, so that no command always goes first.
func submitRounds(job submitterJob, enc *json.Encoder) error {
	if err := BecomeSubreaper(); err != nil {
		return err
	}
	for round := -job.Warmup; round < job.Rounds; round++ {
		cmds := slices.Clone(job.Commands)
		if (round+job.ID)%2 != 0 {
			slices.Reverse(cmds)
		}
		for _, c := range cmds {
			sub, err := c.Submit(job.Marks)
			if err != nil {
				return err
			}
			if sub.Status != 0 {
				return fmt.Errorf("%s exited with status %d", c.Name, sub.Status)
			}
			if round < 0 {
				continue
			}
			sub.Submitter, sub.Round = job.ID, round
			if err := enc.Encode(sub); err != nil {
				return err
			}
		}
	}
	return nil
}
