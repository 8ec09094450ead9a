package slurm

import (
	"bufio"
	"fmt"
	"os"
	"strings"
)

// DefaultConf is where Slurm's commands read slurm.conf when SLURM_CONF
// does not say (the sysconfdir of Debian's and most sites' packages).
const DefaultConf = "/etc/slurm/slurm.conf"

// ConfiglessConf is where slurmd keeps the slurm.conf it fetched from
// slurmctld on a configless node.
const ConfiglessConf = "/run/slurm/conf/slurm.conf"

// ReadConf reads the parameters of a slurm.conf: each Key=Value of its
// lines (keys lowercased, the last one written winning), comments left
// out. Include directives are not followed.
func ReadConf(path string) (map[string]string, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	params := map[string]string{}
	sc := bufio.NewScanner(f)
	sc.Buffer(make([]byte, 64<<10), 1<<20)
	for sc.Scan() {
		line, _, _ := strings.Cut(sc.Text(), "#")
		for _, word := range strings.Fields(line) {
			if key, value, ok := strings.Cut(word, "="); ok {
				params[strings.ToLower(key)] = value
			}
		}
	}
	if err := sc.Err(); err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	return params, nil
}

// ConfPath is the slurm.conf Slurm's commands read here: $SLURM_CONF (as
// getenv gives it), else the default, else a configless node's copy.
func ConfPath(getenv func(string) string) string {
	if p := getenv("SLURM_CONF"); p != "" {
		return p
	}
	if _, err := os.Stat(DefaultConf); err != nil {
		if _, err := os.Stat(ConfiglessConf); err == nil {
			return ConfiglessConf
		}
	}
	return DefaultConf
}
