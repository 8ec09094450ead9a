// Command migadvisor-monitor is 'migadvisor monitor' alone: the same code in
// a binary a third the size, because it runs inside every probe job and its
// memory counts (the NVIDIA driver library it loads is most of it).
//
//	migadvisor-monitor [monitor] [--interval 500ms] [--out FILE] -- CMD [ARGS...]
//
// The optional word "monitor" lets a script call either binary the same way.
package main

import (
	"os"

	"github.com/NVIDIA/go-nvml/pkg/nvml"

	"github.com/migadvisor/migadvisor/bench/monitor"
)

func main() {
	args := os.Args[1:]
	if len(args) > 0 && args[0] == "monitor" {
		args = args[1:]
	}
	os.Exit(monitor.Main(args, os.Stdin, os.Stdout, os.Stderr, os.LookupEnv, func() nvml.Interface { return nvml.New() }))
}
