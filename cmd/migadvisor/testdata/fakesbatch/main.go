// Command fakesbatch is Slurm's sbatch for the tests that run the sbatch
// wrapper, or the shim in front of it, as processes: the wrapper execs
// Slurm's sbatch itself, so no in-process fake (slurm/slurmtest) can stand
// in for it there. It answers as sbatch does and records each call, as its
// environment says:
//
//	FAKESBATCH_CALLS   a directory: each call writes PID.json there, its
//	                   arguments, environment, what its descriptors 3 to 9
//	                   hold, how many read(2) calls its process had made
//	                   when it started (/proc/self/io's syscr, which an
//	                   exec keeps: the shim's, when the shim ran it) and
//	                   (FAKESBATCH_STDIN=1) its input
//	FAKESBATCH_ID      the job id it gives (default: its process id)
//	FAKESBATCH_REFUSE  refuse the job: this line on stderr, nothing on
//	                   stdout, exit status 1
//	FAKESBATCH_EXIT    the exit status after it answered (default 0)
//
// It prints "Submitted batch job ID", or "ID;migdev" with --parsable;
// asked for its help alone, "Slurm's sbatch --help".
package main

import (
	"encoding/json"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"slices"
	"strconv"

	"github.com/migadvisor/migadvisor/internal/procio"
)

// call is what the tests read back of one run.
type call struct {
	Args  []string       `json:"args"`
	Env   []string       `json:"env"`
	Stdin string         `json:"stdin"`
	Fds   map[int]string `json:"fds"`   // descriptor 3 to 9: the file it is open on
	Reads int            `json:"reads"` // read(2) calls before it started; -1: unknown
}

func main() {
	args := os.Args[1:]
	if err := record(args); err != nil {
		fmt.Fprintln(os.Stderr, "fakesbatch:", err)
		os.Exit(127)
	}
	switch {
	case len(args) == 1 && (args[0] == "--help" || args[0] == "-h"):
		fmt.Println("Slurm's sbatch " + args[0])
	case os.Getenv("FAKESBATCH_REFUSE") != "":
		fmt.Fprintln(os.Stderr, os.Getenv("FAKESBATCH_REFUSE"))
		os.Exit(1)
	case slices.Contains(args, "--parsable"):
		fmt.Println(jobID() + ";migdev")
	default:
		fmt.Println("Submitted batch job " + jobID())
	}
	status, _ := strconv.Atoi(os.Getenv("FAKESBATCH_EXIT"))
	os.Exit(status)
}

func jobID() string {
	if id := os.Getenv("FAKESBATCH_ID"); id != "" {
		return id
	}
	return strconv.Itoa(os.Getpid())
}

// record writes the call into $FAKESBATCH_CALLS, whole or not at all (a
// temporary name, then renamed), for tests that read while others run.
func record(args []string) error {
	dir := os.Getenv("FAKESBATCH_CALLS")
	if dir == "" {
		return nil
	}
	// Descriptors first, before a file this process opens takes one.
	c := call{Args: args, Env: os.Environ(), Fds: map[int]string{}}
	for fd := 3; fd <= 9; fd++ {
		if target, err := os.Readlink(fmt.Sprintf("/proc/self/fd/%d", fd)); err == nil {
			c.Fds[fd] = target
		}
	}
	c.Reads = int(procio.Count("syscr")) // -1: the kernel does not count them
	if os.Getenv("FAKESBATCH_STDIN") == "1" {
		in, err := io.ReadAll(os.Stdin)
		if err != nil {
			return err
		}
		c.Stdin = string(in)
	}
	data, err := json.Marshal(c)
	if err != nil {
		return err
	}
	name := filepath.Join(dir, strconv.Itoa(os.Getpid()))
	if err := os.WriteFile(name+".tmp", data, 0o644); err != nil {
		return err
	}
	return os.Rename(name+".tmp", name+".json")
}
