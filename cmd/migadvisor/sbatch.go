package main

import (
	"context"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"time"

	"github.com/urfave/cli/v2"

	"github.com/migadvisor/migadvisor/advisor/store"
	"github.com/migadvisor/migadvisor/catalog"
	"github.com/migadvisor/migadvisor/slurm"
)

const sbatchHelp = `Runs Slurm's sbatch with exactly the arguments, standard input and output it
was given, and exits with sbatch's status. Installed as "sbatch" on login nodes
(a link or the scripts/ shim), "sbatch --help" is Slurm's own help.

After a submission it records the job in the history (job id, the script's
fingerprint, the profile asked for), so 'migadvisor collect' gathers its
evidence later. Nothing it does can stop or change the submission: the record
has a deadline and is skipped with one line on stderr when it cannot be made
(none with MIGADVISOR_QUIET=1). MIGADVISOR_DISABLE=1 makes it a pure, silent
pass-through.

The real sbatch is $MIGADVISOR_SBATCH, else the first sbatch on PATH that is
not migadvisor itself.

Examples:
   migadvisor sbatch job.sh
   migadvisor sbatch --parsable -p gpu --gres=gpu:a100_20g:1 job.sh --epochs 3
   ln -s "$(command -v migadvisor)" ~/bin/sbatch    # then plain sbatch goes through it

Exit status: sbatch's own; 127 when no sbatch can be found.`

func sbatchCommand() *cli.Command {
	return &cli.Command{
		Name:            "sbatch",
		Usage:           "submit through Slurm's sbatch, unchanged, and record the job in the history",
		ArgsUsage:       "[SBATCH OPTIONS...] [JOB.sh [ARGS...]]",
		Description:     sbatchHelp,
		SkipFlagParsing: true,
		Action: func(c *cli.Context) error {
			args := c.Args().Slice()
			if len(args) == 1 && (args[0] == "--help" || args[0] == "-h") {
				fmt.Fprintf(c.App.Writer, "migadvisor sbatch %s\n\n%s\n", c.Command.ArgsUsage, sbatchHelp)
				return nil
			}
			return silentExit(wrapSbatch(c.Context, args, os.Stdin, c.App.Writer, c.App.ErrWriter, os.Getenv))
		},
	}
}

// recordDeadline bounds what the wrapper adds after sbatch has answered.
const recordDeadline = 150 * time.Millisecond

// wrapSbatch is the wrapper: sbatch first and unchanged, then the record.
func wrapSbatch(ctx context.Context, args []string, stdin io.Reader, stdout, stderr io.Writer, getenv func(string) string) int {
	self, _ := os.Executable()
	real, err := slurm.FindRealSbatch(getenv, self)
	if err != nil {
		fmt.Fprintf(stderr, "migadvisor: %v\n", err)
		return 127
	}
	status, out, err := slurm.RunSbatch(real, args, stdin, stdout, stderr)
	if err != nil {
		fmt.Fprintf(stderr, "migadvisor: %v\n", err)
		return status
	}
	if status != 0 || getenv("MIGADVISOR_DISABLE") == "1" {
		return status
	}
	if err := recordWithin(ctx, recordDeadline, args, out, getenv); err != nil && getenv("MIGADVISOR_QUIET") != "1" {
		fmt.Fprintf(stderr, "migadvisor: the job is submitted but not in the history: %v\n", err)
	}
	return status
}

// recordWithin records the submission, giving up after d.
func recordWithin(ctx context.Context, d time.Duration, args []string, out []byte, getenv func(string) string) error {
	ctx, cancel := context.WithTimeout(ctx, d)
	defer cancel()
	done := make(chan error, 1)
	go func() { done <- recordSubmission(ctx, args, out, getenv) }()
	select {
	case err := <-done:
		return err
	case <-ctx.Done():
		return fmt.Errorf("gave up after %v", d)
	}
}

// recordSubmission links the job sbatch printed to the script's fingerprint.
func recordSubmission(ctx context.Context, args []string, out []byte, getenv func(string) string) error {
	id, cluster := slurm.SubmittedJobID(out)
	cl := slurm.ParseCommandLine(args)
	if id == "" || cl.Script() == "" || cl.Has("test-only") {
		return nil // nothing submitted (--test-only), or no file to fingerprint (--wrap, stdin)
	}
	source := absPath(cl.Script())
	script, err := slurm.ReadScript(cl.Script())
	if err != nil {
		return err
	}
	sub := store.Submission{Cluster: cluster, JobID: id, Fingerprint: script.Fingerprint(), Source: source,
		Script: source, WorkDir: workingDir(), Submitted: time.Now()}
	if site, err := catalog.Resolve(getenv("MIGADVISOR_SITE")); err == nil {
		if types := cl.Resources(script, os.Environ()).GPUTypes(); len(types) > 0 {
			if p, ok := site.ProfileForType(types[0]); ok {
				sub.Profile = p.Name
			}
		}
	}
	if sub.Cluster == "" {
		sub.Cluster = getenv("MIGADVISOR_CLUSTER")
	}
	db := getenv("MIGADVISOR_DB")
	if db == "" {
		db = defaultDBPath()
	}
	st, err := store.Open(ctx, db)
	if err != nil {
		return err
	}
	defer st.Close()
	return st.RecordSubmissions(ctx, []store.Submission{sub})
}

func absPath(p string) string {
	if a, err := filepath.Abs(p); err == nil {
		return a
	}
	return p
}

// isSbatchName reports whether the program was started as "sbatch" (a link
// or copy of migadvisor installed in its place).
func isSbatchName(argv0 string) bool {
	return filepath.Base(argv0) == "sbatch"
}
