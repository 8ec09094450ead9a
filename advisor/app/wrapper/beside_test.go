// The wrapper beside Slurm's sbatch (the shim's way): what it records.

package wrapper

import (
	"os"
	"path/filepath"
	"syscall"
	"testing"
	"time"

	"github.com/migadvisor/migadvisor/advisor/base/history"
)

// Beside Slurm's sbatch (the shim runs it, and this in the background):
// the advice as always, no sbatch, and a record without the job id that
// collect links by the job's name, directory, user and submit time.
func TestRunBeside(t *testing.T) {
	f := newFixture(t)
	f.withJob2(t, f.script(t, "job.sh", fullA100))
	f.beside = true
	f.setenv("USER", "ab12")
	if code := f.run("-J", "x", "job.sh"); code != 0 || !adviceLine.MatchString(f.stderr.String()) || f.stdout.Len() != 0 {
		t.Fatalf("exit %d, stdout %q, stderr %q", code, f.stdout.String(), f.stderr.String())
	}
	if len(f.sbatch.calls) != 0 {
		t.Errorf("sbatch ran beside itself: %+v", f.sbatch.calls)
	}
	subs := f.spooled(t)
	if len(subs) != 1 || subs[0].JobID != "" || subs[0].JobName != "x" || subs[0].WorkDir != f.dir || subs[0].User != "ab12" ||
		subs[0].Profile != "full" || !subs[0].Submitted.Equal(f.now) {
		t.Fatalf("recorded %+v", subs)
	}
	// No -J: the script's name; --chdir: that directory, from where sbatch runs.
	f.script(t, "named.sh", "#!/bin/bash\n#SBATCH --gres=gpu:a100:1\n#SBATCH -D out\npython train.py\n")
	f.run("named.sh")
	subs = f.spooled(t)
	if last := subs[len(subs)-1]; last.JobName != "named.sh" || last.WorkDir != filepath.Join(f.dir, "out") {
		t.Errorf("recorded %+v", last)
	}
	// Nothing to record: --test-only and --wrap submit no script's job; a
	// script gone, or rewritten, after sbatch read it is another's now.
	before := len(subs)
	f.run("--test-only", "job.sh")
	f.run("--wrap", "hostname")
	f.run("gone.sh")
	later := f.script(t, "later.sh", fullA100)
	os.Chtimes(later, time.Now().Add(time.Minute), time.Now().Add(time.Minute))
	f.run("later.sh")
	if n := len(f.spooled(t)); n != before {
		t.Errorf("%d records after --test-only, --wrap, a script gone and one rewritten, want %d", n, before)
	}
	// Run from a directory reached through a link, the job's directory is
	// the one sbatch's getcwd gives: the link resolved.
	link := filepath.Join(t.TempDir(), "link")
	os.Symlink(f.dir, link)
	physical, _ := filepath.EvalSymlinks(f.dir)
	f.dir = link
	f.run("job.sh")
	if subs = f.spooled(t); subs[len(subs)-1].WorkDir != physical {
		t.Errorf("from %s: recorded the directory %q, want %q", link, subs[len(subs)-1].WorkDir, physical)
	}
	// A relative --chdir from there is after the directory as $PWD names
	// it: Slurm's make_full_path asks get_current_dir_name, which honours
	// $PWD. Seen in review: the record's link resolved, accounting's kept,
	// the two never paired.
	f.run("-D", "sub", "job.sh")
	if subs = f.spooled(t); subs[len(subs)-1].WorkDir != link+"/sub" {
		t.Errorf("-D sub from %s: recorded the directory %q, want %q", link, subs[len(subs)-1].WorkDir, link+"/sub")
	}
}

// Beside Slurm's sbatch, a submission that cannot make a job leaves no
// record (it would wait for a job, and could take another submission's):
// an option sbatch does not know, on the command line or in the script,
// --help, --usage, --version, --test-only (as getopt reads it, abbreviated
// too), a script sbatch refuses or one that is not there. A submission
// that can is recorded with the hash of the script's bytes, which collect
// checks against the script slurmdbd stored for the job.
func TestRunBesideRecordsOnlySubmissionsThatMakeAJob(t *testing.T) {
	f := newFixture(t)
	f.beside = true
	f.setenv("USER", "ab12")
	f.script(t, "job.sh", fullA100)
	f.script(t, "directive.sh", "#!/bin/bash\n#SBATCH --bogus\npython train.py\n")
	f.script(t, "noshebang.sh", "python train.py\n")
	for _, args := range [][]string{
		{"--bogus", "job.sh"}, {"-y", "job.sh"}, {"--help", "job.sh"}, {"-h", "job.sh"}, {"--usage", "job.sh"},
		{"--version", "job.sh"}, {"-V", "job.sh"}, {"--test-only", "job.sh"}, {"--test", "job.sh"},
		{"--time=5", "--partition"}, {"directive.sh"}, {"noshebang.sh"}, {"missing.sh"},
	} {
		f.run(args...)
		if subs := f.spooled(t); len(subs) != 0 {
			t.Fatalf("sbatch %v makes no job, but the wrapper recorded %+v", args, subs)
		}
	}
	f.run("-J", "x", "job.sh")
	subs := f.spooled(t)
	if len(subs) != 1 || subs[0].ScriptHash != history.ScriptHash([]byte(fullA100)) || subs[0].ScriptHash == "" {
		t.Fatalf("recorded %+v, want one record with the script's hash", subs)
	}
}

// A script that is not a regular file (sbatch <(generate): a pipe whose
// bytes are read once) is sbatch's alone to read: beside it the wrapper
// would take part of the script from the job, or wait for ever for a
// writer; in its place, leave sbatch nothing. So it is never opened: no
// advice, no record, at once; sbatch still runs in its place.
func TestTheWrapperNeverReadsAScriptThatIsNotARegularFile(t *testing.T) {
	for _, beside := range []bool{true, false} {
		f := newFixture(t)
		f.beside = beside
		f.setenv("USER", "ab12")
		fifo := filepath.Join(f.dir, "piped.sh")
		if err := syscall.Mkfifo(fifo, 0o600); err != nil {
			t.Fatal(err)
		}
		done := make(chan int, 1)
		go func() { done <- f.run("piped.sh") }()
		select {
		case code := <-done:
			if code != 0 || len(f.spooled(t)) != 0 {
				t.Errorf("beside %v: exit %d, %d records, stderr %q", beside, code, len(f.spooled(t)), f.stderr.String())
			}
			if !beside && len(f.sbatch.calls) != 1 {
				t.Errorf("in sbatch's place: sbatch ran %d times", len(f.sbatch.calls))
			}
		case <-time.After(5 * time.Second):
			t.Fatalf("beside %v: the wrapper waited on the pipe sbatch reads", beside)
		}
	}
}
