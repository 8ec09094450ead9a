//go:build !noreport

// The commands' outputs kept as files: each case of TestGolden runs one
// command line (argv → options → output, as a user's shell would) or one
// command's run function on options (options → output), and compares what
// it printed with testdata/<command>/<case>/: stdout, stderr (kept where
// the command printed something there) and exit (kept where it is not 0).
// `go test ./cmd/migadvisor -run TestGolden -update` rewrites them; a
// change of output is then a diff of those files to review with the code.

package main

import (
	"bytes"
	"context"
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/urfave/cli/v2"

	"github.com/migadvisor/migadvisor/slurm/slurmtest"
)

// update rewrites what the package's tests compare with: the commands'
// outputs under testdata/<command>/<case> (TestGolden) and the command
// reference in docs/reference (TestCommandReference). Run with -run to
// rewrite one of them.
var update = flag.Bool("update", false, "rewrite the expected outputs: testdata/<command>/<case> (TestGolden) and docs/reference (TestCommandReference)")

// goldenRoot holds testdata/<command>/<case>; the other directories of
// testdata (fakesbatch, jobstats, …) are not named after a command. It is
// the package's, wherever a case has gone (t.Chdir).
var goldenRoot = filepath.Join(packageDir, "testdata")

// goldenResult is what a command gave: its output and exit status.
type goldenResult struct {
	stdout, stderr string
	code           int
}

// golden runs the cases of one command: its own scratch directory and
// what its outputs hold that differs from run to run.
type golden struct {
	t       *testing.T
	command string
	dir     string    // the command's scratch directory: $DIR in the files
	subst   []string  // old, new pairs, applied in order
	began   time.Time // when its cases began: a time since then is $NOW
}

// newGolden isolates a command's cases from the user's files and Slurm
// (isolate) and gives them a scratch directory.
func newGolden(t *testing.T) *golden {
	t.Helper()
	isolate(t)
	g := &golden{t: t, command: t.Name()[strings.LastIndex(t.Name(), "/")+1:], dir: t.TempDir(), began: time.Now()}
	// Paths under a test's temporary directories differ each run; the
	// XDG ones are isolate's (the default history, the user's site file).
	g.replace(g.dir, "$DIR")
	g.replace(os.Getenv("XDG_DATA_HOME"), "$XDG_DATA_HOME")
	g.replace(os.Getenv("XDG_CONFIG_HOME"), "$XDG_CONFIG_HOME")
	// The checkout's place differs between machines: a path made
	// absolute (filepath.Abs of a fixture) is written from its root.
	if root, err := filepath.Abs("../.."); err == nil {
		g.replace(root, "$REPO")
	}
	// The running binary, which doctor's fixes name, is the test's own.
	if self, err := os.Executable(); err == nil {
		g.replace(self, "$MIGADVISOR")
	}
	return g
}

// replace has old written as new in the expected files: a value that
// differs between runs or machines, never one the command decides.
func (g *golden) replace(old, new string) {
	if old != "" {
		g.subst = append(g.subst, old, new)
	}
}

// path is a file of the command's scratch directory.
func (g *golden) path(elem ...string) string {
	return filepath.Join(append([]string{g.dir}, elem...)...)
}

// run is a case: the command line args, in process, with fake as Slurm's
// commands (nil: none, as isolate leaves them, failing at once).
func (g *golden) run(name string, fake *slurmtest.Fake, args ...string) {
	g.t.Helper()
	g.t.Run(name, func(t *testing.T) {
		t.Helper()
		g.check(t, g.exec(t, fake, args...))
	})
}

// both is the case in text and, as name-json, with --json.
func (g *golden) both(name string, fake *slurmtest.Fake, args ...string) {
	g.t.Helper()
	g.run(name, fake, args...)
	g.run(name+"-json", fake, append(slices.Clone(args), "--json")...)
}

// exec runs args as run does, outside a case.
func (g *golden) exec(t *testing.T, fake *slurmtest.Fake, args ...string) goldenResult {
	t.Helper()
	var deps appDeps
	if fake != nil { // a nil *Fake is no nil Runner
		deps.Slurm = fake
	}
	var out, errOut bytes.Buffer
	code := runWith(deps, append([]string{"migadvisor"}, args...), &out, &errOut)
	return goldenResult{out.String(), errOut.String(), code}
}

// output is a case through a command's seam: its run function on options
// built by the test, its error reported as main reports it.
func (g *golden) output(name string, work func(t *testing.T, w outWriters) error) {
	g.t.Helper()
	g.t.Run(name, func(t *testing.T) {
		t.Helper()
		var out, errOut bytes.Buffer
		code := exitCode(work(t, outWriters{Out: &out, Err: &errOut}), &errOut, g.command)
		g.check(t, goldenResult{out.String(), errOut.String(), code})
	})
}

// goldenVia is a case through a command's two seams: args bound to its
// options by its own flags (argv → options), pin setting what a run of
// the command cannot (the clock, the user who asks), then its run function
// on them (options → output).
func goldenVia[O any](g *golden, name string, cmd *cli.Command, from func(*cli.Context) (O, error),
	work func(context.Context, O, outWriters) error, pin func(*O), args ...string) {
	g.t.Helper()
	g.output(name, func(t *testing.T, w outWriters) error {
		o, err := optionsOf(t, cmd, from, args...)
		if err != nil {
			return err
		}
		if pin != nil {
			pin(&o)
		}
		return work(context.Background(), o, w)
	})
}

// mustRun is a step of a case's setup: args must succeed.
func (g *golden) mustRun(fake *slurmtest.Fake, args ...string) string {
	g.t.Helper()
	r := g.exec(g.t, fake, args...)
	if r.code != 0 {
		g.t.Fatalf("migadvisor %s: exit %d\n%s%s", strings.Join(args, " "), r.code, r.stdout, r.stderr)
	}
	return r.stdout
}

// goldenTemp is a test's temporary directory the case did not name
// (t.TempDir of a helper): $TMP.
var goldenTemp = regexp.MustCompile(regexp.QuoteMeta(filepath.Clean(os.TempDir())) + `/Test[^/\s"']*/[0-9]+`)

// goldenTime is a time as the commands print one: RFC 3339 in JSON, to
// the minute or the second in text.
var goldenTime = regexp.MustCompile(`\b\d{4}-\d{2}-\d{2}[T ]\d{2}:\d{2}(:\d{2}(\.\d+)?)?(Z|[+-]\d{2}:\d{2})?\b`)

// normalise writes what differs between runs as its placeholder.
func (g *golden) normalise(s string) string {
	for i := 0; i < len(g.subst); i += 2 {
		s = strings.ReplaceAll(s, g.subst[i], g.subst[i+1])
	}
	s = goldenTemp.ReplaceAllString(s, "$$TMP")
	// A time the command took from the clock (a sweep's "created") is
	// the time of the run, within the case's minutes; the fixtures' times
	// are days and more before it. Where a command has its clock in its
	// options, a case gives it one instead (goldenVia).
	from, until := g.began.Add(-time.Minute), time.Now().Add(time.Minute)
	return goldenTime.ReplaceAllStringFunc(s, func(text string) string {
		for _, layout := range []string{time.RFC3339Nano, "2006-01-02 15:04:05", "2006-01-02 15:04"} {
			if at, err := time.ParseInLocation(layout, text, time.Local); err == nil {
				if at.After(from) && at.Before(until) {
					return "$NOW"
				}
				break
			}
		}
		return text
	})
}

// check compares the case's result with its files, or writes them.
func (g *golden) check(t *testing.T, r goldenResult) {
	t.Helper()
	name := strings.TrimPrefix(t.Name(), "TestGolden/")
	goldenRan[name] = true
	dir := filepath.Join(goldenRoot, filepath.FromSlash(name))
	exit := ""
	if r.code != 0 {
		exit = strconv.Itoa(r.code) + "\n"
	}
	files := []struct{ name, got string }{
		{"stdout", g.normalise(r.stdout)}, {"stderr", g.normalise(r.stderr)}, {"exit", exit},
	}
	if *update {
		if err := os.MkdirAll(dir, 0o755); err != nil {
			t.Fatal(err)
		}
		for _, f := range files {
			path := filepath.Join(dir, f.name)
			// stdout is kept even empty: the case's directory says the
			// command printed nothing.
			if f.got == "" && f.name != "stdout" {
				if err := os.Remove(path); err != nil && !os.IsNotExist(err) {
					t.Fatal(err)
				}
				continue
			}
			if err := os.WriteFile(path, []byte(f.got), 0o644); err != nil {
				t.Fatal(err)
			}
		}
		return
	}
	if _, err := os.Stat(dir); err != nil {
		t.Fatalf("no testdata/%s: go test ./cmd/migadvisor -run '%s' -update writes it", name, t.Name())
	}
	for _, f := range files {
		want, err := os.ReadFile(filepath.Join(dir, f.name))
		if err != nil && !os.IsNotExist(err) {
			t.Fatal(err)
		}
		if f.got != string(want) {
			t.Errorf("testdata/%s/%s differs (-want +got; -update rewrites it):\n%s", name, f.name, unifiedDiff(string(want), f.got))
		}
	}
}

// checkGoldenCases fails on a case's directory no case writes any more
// (with -update: removes it), under the directories of the commands that
// ran: a case renamed or dropped leaves no file behind to mislead.
func checkGoldenCases(t *testing.T, commands []string) {
	t.Helper()
	// Only a run of every case knows which are gone: -run or -skip
	// naming cases (TestGolden/su) ran some.
	for _, name := range []string{"test.run", "test.skip"} {
		if f := flag.Lookup(name); f != nil && strings.Contains(f.Value.String(), "/") {
			return
		}
	}
	for _, command := range commands {
		var cases []string
		filepath.WalkDir(filepath.Join(goldenRoot, command), func(path string, d os.DirEntry, err error) error {
			if err == nil && !d.IsDir() && d.Name() == "stdout" {
				cases = append(cases, filepath.Dir(path))
			}
			return nil
		})
		for _, dir := range cases {
			rel, _ := filepath.Rel(goldenRoot, dir)
			if goldenRan[filepath.ToSlash(rel)] {
				continue
			}
			if *update {
				os.RemoveAll(dir)
				continue
			}
			t.Errorf("testdata/%s has no case (-update removes it)", filepath.ToSlash(rel))
		}
	}
}

// goldenRan are the cases that ran, by command/case.
var goldenRan = map[string]bool{}

// unifiedDiff is want against got, line by line, as diff -u prints it:
// hunks of the lines that differ with three lines of context.
func unifiedDiff(want, got string) string {
	a, b := splitLines(want), splitLines(got)
	// lcs[i][j]: the longest common subsequence of a[i:] and b[j:].
	lcs := make([][]int, len(a)+1)
	for i := range lcs {
		lcs[i] = make([]int, len(b)+1)
	}
	for i := len(a) - 1; i >= 0; i-- {
		for j := len(b) - 1; j >= 0; j-- {
			if a[i] == b[j] {
				lcs[i][j] = lcs[i+1][j+1] + 1
			} else {
				lcs[i][j] = max(lcs[i+1][j], lcs[i][j+1])
			}
		}
	}
	type line struct {
		op   byte // ' ', '-', '+'
		text string
		i, j int // the line's number in want and in got, from 0
	}
	var lines []line
	i, j := 0, 0
	for i < len(a) || j < len(b) {
		switch {
		case i < len(a) && j < len(b) && a[i] == b[j]:
			lines = append(lines, line{' ', a[i], i, j})
			i, j = i+1, j+1
		case i < len(a) && (j == len(b) || lcs[i+1][j] >= lcs[i][j+1]):
			lines = append(lines, line{'-', a[i], i, j})
			i++
		default:
			lines = append(lines, line{'+', b[j], i, j})
			j++
		}
	}
	const context = 3
	var out strings.Builder
	for k := 0; k < len(lines); {
		if lines[k].op == ' ' {
			k++
			continue
		}
		start, end := max(k-context, 0), k
		// The hunk runs on while the next change is within two contexts.
		for end < len(lines) {
			next := end
			for next < len(lines) && lines[next].op == ' ' {
				next++
			}
			if next == len(lines) || next-end > 2*context {
				break
			}
			for next < len(lines) && lines[next].op != ' ' {
				next++
			}
			end = next
		}
		end = min(end+context, len(lines))
		var nA, nB int
		for _, l := range lines[start:end] {
			if l.op != '+' {
				nA++
			}
			if l.op != '-' {
				nB++
			}
		}
		fmt.Fprintf(&out, "@@ -%d,%d +%d,%d @@\n", lines[start].i+1, nA, lines[start].j+1, nB)
		for _, l := range lines[start:end] {
			out.WriteByte(l.op)
			out.WriteString(l.text)
			out.WriteByte('\n')
		}
		k = end
	}
	return out.String()
}

// splitLines splits s after each newline; a last line without one says so.
func splitLines(s string) []string {
	if s == "" {
		return nil
	}
	lines := strings.SplitAfter(s, "\n")
	if last := lines[len(lines)-1]; last == "" {
		lines = lines[:len(lines)-1]
	} else {
		lines[len(lines)-1] = last + "\n\\ No newline at end of file"
	}
	for i := range lines {
		lines[i] = strings.TrimSuffix(lines[i], "\n")
	}
	return lines
}

// The diff a failing case prints: hunks with their context, apart where
// the changes are far apart, and a last line without its newline.
func TestUnifiedDiff(t *testing.T) {
	want := "1\n2\n3\n4\n5\n6\n7\n8\n9\n10\n11\n12\n"
	got := "1\n2\nthree\n4\n5\n6\n7\n8\n9\n10\n11\n12\n13"
	if d := unifiedDiff(want, want); d != "" {
		t.Errorf("the same text differs:\n%s", d)
	}
	wantDiff := "@@ -1,6 +1,6 @@\n 1\n 2\n-3\n+three\n 4\n 5\n 6\n" +
		"@@ -10,3 +10,4 @@\n 10\n 11\n 12\n+13\n\\ No newline at end of file\n"
	if d := unifiedDiff(want, got); d != wantDiff {
		t.Errorf("diff:\n%s\nwant:\n%s", d, wantDiff)
	}
}
