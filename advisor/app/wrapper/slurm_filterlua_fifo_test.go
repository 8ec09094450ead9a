//go:build slurm

package wrapper

import (
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"
)

// No path cli_filter.lua adds may hold sbatch longer than sbatch's own
// read of the script: sbatch has read the script before the filter runs,
// so a script that is a FIFO (sbatch <(...)) has no writer left, and a
// filter that opened it to read would wait for ever; so would one whose
// cache (or whatever MIGADVISOR_DB points it at) is a FIFO. The key and the
// cache's lookup skip what they cannot seek, and a whole pre_submit over
// FIFOs returns at once: no cached answer, the submission goes on.
func TestSlurmFilterLuaNeverWaitsOnAFileWhoseReadBlocks(t *testing.T) {
	lua := luaInterpreter(t)
	dir := t.TempDir()
	fifo := func(name string) string {
		t.Helper()
		path := filepath.Join(dir, name)
		if err := syscall.Mkfifo(path, 0o600); err != nil {
			t.Fatal(err)
		}
		return path
	}
	script, db := fifo("job.sh"), filepath.Join(dir, "history.db")
	fifo("history.db.clifilter")
	regular := filepath.Join(dir, "train.sh")
	os.WriteFile(regular, []byte("#!/bin/bash\n#SBATCH --gres=gpu:a100:1\nsrun ./train\n"), 0o644)

	// held is how long sbatch would wait: the filter's Lua under a bound it
	// never nears, killed past it (a FIFO with no writer waits for ever).
	const bound = 5 * time.Second
	run := func(program string) (string, time.Duration) {
		t.Helper()
		ctx, cancel := context.WithTimeout(context.Background(), bound)
		defer cancel()
		cmd := exec.CommandContext(ctx, lua, "-e", "slurm = { SUCCESS = 0, json_cli_options = function() return '{}' end }; "+
			"dofile('../../../scripts/cli_filter.lua')\n"+program)
		cmd.Env = []string{"PATH=/usr/bin:/bin", "MIGADVISOR_DB=" + db, "HOME=" + dir}
		start := time.Now()
		out, err := cmd.CombinedOutput()
		held := time.Since(start)
		if errors.Is(ctx.Err(), context.DeadlineExceeded) {
			t.Errorf("%s: held sbatch past %s, waiting on a FIFO", program, bound)
		} else if err != nil {
			t.Fatalf("lua: %v\n%s", err, out)
		}
		return string(out), held
	}
	for _, c := range []struct{ program, want string }{
		{fmt.Sprintf("print(migadvisor.key({ argv = { %q } }))", script), "nil\n"},
		{fmt.Sprintf("print(migadvisor.lookup(%q, 'k', os.time()))", db+".clifilter"), "nil\n"},
		{"print(migadvisor.read_regular('/dev/zero', 100))", "nil\n"},
		{fmt.Sprintf("print(migadvisor.read_regular(%q, 100))", dir), "nil\n"},
		// The whole hook: a FIFO script (no key, so no cache), then a
		// regular script over a FIFO cache; each asks the process, which
		// is not installed here: one line, and SUCCESS.
		{fmt.Sprintf("print(migadvisor.pre_submit({ type = 'sbatch', argv = { %q } }, 0))", script), "is not installed\n0\n"},
		{fmt.Sprintf("print(migadvisor.pre_submit({ type = 'sbatch', argv = { %q } }, 0))", regular), "is not installed\n0\n"},
	} {
		out, held := run(c.program)
		if !strings.HasSuffix(out, c.want) || held > bound/2 {
			t.Errorf("%s: %q after %s, want %q at once", c.program, out, held.Round(time.Millisecond), c.want)
		}
	}
	// A regular script is still read whole, and keyed as Go checks it.
	data, _ := os.ReadFile(regular)
	out, _ := run(fmt.Sprintf("print(migadvisor.key({ argv = { %q } }))", regular))
	if !strings.HasPrefix(out, fmt.Sprintf("%s\t%d\t%d\t", regular, len(data), filterChecksum(data))) {
		t.Errorf("the key of a regular script: %q", out)
	}
	// The cache the filter reads whole is never larger than what it reads.
	out, _ = run("print(migadvisor.max_cache)")
	most := len(filterCacheMagic) + len(filterCacheEnd) + filterCacheEntries*(filterCacheMaxEntry+len("entry  \n")+7*20)
	if got := strings.TrimSpace(out); got != fmt.Sprint(1024*1024) || most > 1024*1024 {
		t.Errorf("max_cache %s, the largest cache migadvisor-sbatch writes %d bytes", got, most)
	}
}
