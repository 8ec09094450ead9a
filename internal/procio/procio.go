// Package procio reads this process's I/O counters from /proc/self/io,
// for the tests that check what a process read: rchar (bytes read from
// files), syscr (read system calls), and the others the kernel keeps.
package procio

import (
	"os"
	"strconv"
	"strings"
)

// Count is the counter named field ("rchar", "syscr", ...) of this
// process so far, or -1 where the kernel does not keep it. An exec keeps
// the counters: a program run in a shell's place counts the shell's too.
func Count(field string) int64 {
	data, err := os.ReadFile("/proc/self/io")
	if err != nil {
		return -1
	}
	for _, line := range strings.Split(string(data), "\n") {
		if rest, ok := strings.CutPrefix(line, field+":"); ok {
			if n, err := strconv.ParseInt(strings.TrimSpace(rest), 10, 64); err == nil {
				return n
			}
		}
	}
	return -1
}
