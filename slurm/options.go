package slurm

import (
	"sort"
	"strings"
)

// argKind says whether an sbatch option takes a value, as getopt_long sees it.
type argKind uint8

const (
	argNone     argKind = iota // --hold
	argRequired                // --time=1:00 or --time 1:00
	argOptional                // --exclusive or --exclusive=user (never a separate word)
)

type optionSpec struct {
	long  string
	short byte
	arg   argKind
}

// sbatchOptions lists every option of sbatch 22.05 (sbatch(1)), so that a directive
// is tokenised exactly as sbatch does it: which words are values, which are flags.
var sbatchOptions = []optionSpec{
	{"account", 'A', argRequired}, {"acctg-freq", 0, argRequired}, {"array", 'a', argRequired},
	{"batch", 0, argRequired}, {"bb", 0, argRequired}, {"bbf", 0, argRequired},
	{"begin", 'b', argRequired}, {"chdir", 'D', argRequired}, {"cluster-constraint", 0, argRequired},
	{"clusters", 'M', argRequired}, {"comment", 0, argRequired}, {"constraint", 'C', argRequired},
	{"container", 0, argRequired}, {"contiguous", 0, argNone}, {"core-spec", 'S', argRequired},
	{"cores-per-socket", 0, argRequired}, {"cpu-freq", 0, argRequired}, {"cpus-per-gpu", 0, argRequired},
	{"cpus-per-task", 'c', argRequired}, {"deadline", 0, argRequired}, {"delay-boot", 0, argRequired},
	{"dependency", 'd', argRequired}, {"distribution", 'm', argRequired}, {"error", 'e', argRequired},
	{"exclude", 'x', argRequired}, {"exclusive", 0, argOptional}, {"export", 0, argRequired},
	{"export-file", 0, argRequired}, {"extra-node-info", 'B', argRequired}, {"get-user-env", 0, argOptional},
	{"gid", 0, argRequired}, {"gpu-bind", 0, argRequired}, {"gpu-freq", 0, argRequired},
	{"gpus", 'G', argRequired}, {"gpus-per-node", 0, argRequired}, {"gpus-per-socket", 0, argRequired},
	{"gpus-per-task", 0, argRequired}, {"gres", 0, argRequired}, {"gres-flags", 0, argRequired},
	{"help", 'h', argNone}, {"hint", 0, argRequired}, {"hold", 'H', argNone}, {"ignore-pbs", 0, argNone},
	{"input", 'i', argRequired}, {"job-name", 'J', argRequired}, {"kill-on-invalid-dep", 0, argRequired},
	{"licenses", 'L', argRequired}, {"mail-type", 0, argRequired}, {"mail-user", 0, argRequired},
	{"mcs-label", 0, argRequired}, {"mem", 0, argRequired}, {"mem-bind", 0, argRequired},
	{"mem-per-cpu", 0, argRequired}, {"mem-per-gpu", 0, argRequired}, {"mincpus", 0, argRequired},
	{"network", 0, argRequired}, {"nice", 0, argOptional}, {"no-kill", 'k', argOptional},
	{"no-requeue", 0, argNone}, {"nodefile", 'F', argRequired}, {"nodelist", 'w', argRequired},
	{"nodes", 'N', argRequired}, {"ntasks", 'n', argRequired}, {"ntasks-per-core", 0, argRequired},
	{"ntasks-per-gpu", 0, argRequired}, {"ntasks-per-node", 0, argRequired},
	{"ntasks-per-socket", 0, argRequired}, {"open-mode", 0, argRequired}, {"output", 'o', argRequired},
	{"overcommit", 'O', argNone}, {"oversubscribe", 's', argNone}, {"parsable", 0, argNone},
	{"partition", 'p', argRequired}, {"power", 0, argRequired}, {"prefer", 0, argRequired},
	{"priority", 0, argRequired}, {"profile", 0, argRequired}, {"propagate", 0, argOptional},
	{"qos", 'q', argRequired}, {"quiet", 'Q', argNone}, {"reboot", 0, argNone}, {"requeue", 0, argNone},
	{"reservation", 0, argRequired}, {"signal", 0, argRequired}, {"sockets-per-node", 0, argRequired},
	{"spread-job", 0, argNone}, {"switches", 0, argRequired}, {"test-only", 0, argNone},
	{"thread-spec", 0, argRequired}, {"threads-per-core", 0, argRequired}, {"time", 't', argRequired},
	{"time-min", 0, argRequired}, {"tmp", 0, argRequired}, {"tres-per-task", 0, argRequired},
	{"uid", 0, argRequired}, {"usage", 0, argNone}, {"use-min-nodes", 0, argNone},
	{"verbose", 'v', argNone}, {"version", 'V', argNone}, {"wait", 'W', argNone},
	{"wait-all-nodes", 0, argRequired}, {"wckey", 0, argRequired}, {"wrap", 0, argRequired},
}

var (
	optionByLong  = map[string]*optionSpec{}
	optionByShort = map[byte]*optionSpec{}
	longNames     []string // sorted, for unambiguous-prefix lookup
)

func init() {
	for i := range sbatchOptions {
		o := &sbatchOptions[i]
		optionByLong[o.long] = o
		longNames = append(longNames, o.long)
		if o.short != 0 {
			optionByShort[o.short] = o
		}
	}
	sort.Strings(longNames)
}

// lookupLong resolves a long option name the way getopt_long does: an exact
// name, or an unambiguous prefix of one (--part=gpu is --partition=gpu).
// ambiguous lists the candidates when the prefix matches several options.
func lookupLong(name string) (spec *optionSpec, ambiguous []string) {
	if o, ok := optionByLong[name]; ok {
		return o, nil
	}
	i := sort.SearchStrings(longNames, name)
	for ; i < len(longNames) && strings.HasPrefix(longNames[i], name); i++ {
		ambiguous = append(ambiguous, longNames[i])
	}
	if len(ambiguous) == 1 {
		return optionByLong[ambiguous[0]], nil
	}
	return nil, ambiguous
}
