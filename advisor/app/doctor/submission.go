package doctor

import (
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"

	"github.com/migadvisor/migadvisor/slurm"
)

// checkSubmission says what an sbatch typed in this shell goes through:
// Slurm's cli_filter/lua with migadvisor's cli_filter.lua (slurm.conf's
// CliFilterPlugins, the file beside it and the binary it runs), the sbatch
// shim first on PATH (and the binary it runs), both, or neither. Neither is
// a warning: this may be no login node (the collecting host).
func checkSubmission(getenv func(string) string) Check {
	c := Check{Name: "submission"}
	if getenv("MIGADVISOR_DISABLE") == "1" {
		c.Status, c.Found = Warning, "MIGADVISOR_DISABLE=1 in this environment: neither the cli_filter nor the shim says anything"
		c.Fix = "unset MIGADVISOR_DISABLE, then run doctor again"
		return c
	}
	filter, filterErr := cliFilter(getenv)
	shim, shimErr := sbatchShim(getenv)
	switch {
	case filterErr != "":
		c.Status, c.Found, c.Fix = Problem, filterErr, "install it as docs/admin/wrapper.md says, or take cli_filter/lua out of CliFilterPlugins"
	case shimErr != "":
		c.Status, c.Found, c.Fix = Problem, shimErr, "reinstall (make install), or set MIGADVISOR_BIN or MIGADVISOR_SBATCH (docs/admin/wrapper.md)"
	case filter != "" && shim != "":
		c.Status, c.Found = Warning, filter+"; and "+shim+": the advice is printed once, but the shim's records are matched to jobs by name and time"
		c.Fix = "where the filter is on, leave the shim off PATH (do not load the migadvisor module on this node)"
	case filter != "":
		c.Status, c.Found = OK, filter
	case shim != "":
		c.Status, c.Found = OK, shim
	default:
		c.Status = Warning
		c.Found = "an sbatch from this shell gets no advice: " + noFilter(getenv) + ", and " + notShim(getenv)
		c.Fix = "on a login node, put the cli_filter in slurm.conf or the shim first on PATH (docs/admin/wrapper.md); " +
			"on another host nothing is needed"
	}
	return c
}

// slurmConf is the slurm.conf Slurm's commands read here.
func slurmConf(getenv func(string) string) string { return slurm.ConfPath(getenv) }

var (
	luaPrefix = regexp.MustCompile(`local PREFIX = \[==\[(.*?)\]==\]`)
	luaDofile = regexp.MustCompile(`dofile\(\s*["']([^"']+)["']\s*\)`)
)

// cliFilter says how slurm.conf's cli_filter/lua reaches migadvisor, ""
// when slurm.conf names no cli_filter/lua or the cli_filter.lua is not
// migadvisor's; or, where it is set up and cannot run, what is wrong.
func cliFilter(getenv func(string) string) (on, wrong string) {
	conf := slurmConf(getenv)
	params, err := slurm.ReadConf(conf)
	if err != nil || !slices.ContainsFunc(strings.Split(params["clifilterplugins"], ","), func(p string) bool {
		return strings.TrimSpace(p) == "cli_filter/lua" || strings.TrimSpace(p) == "lua"
	}) {
		return "", ""
	}
	lua := filepath.Join(filepath.Dir(conf), "cli_filter.lua")
	text, err := os.ReadFile(lua)
	if err != nil {
		return "", fmt.Sprintf("%s names cli_filter/lua in CliFilterPlugins, but %s: %v", conf, lua, plainErr(err))
	}
	mine := lua
	if m := luaDofile.FindSubmatch(text); m != nil && luaPrefix.Find(text) == nil {
		mine = string(m[1])
		if text, err = os.ReadFile(mine); err != nil {
			return "", fmt.Sprintf("%s loads %s: %v", lua, mine, plainErr(err))
		}
	}
	m := luaPrefix.FindSubmatch(text)
	switch {
	case m == nil:
		return "", "" // a site's own filter, migadvisor's not in it
	case string(m[1]) == "@PREFIX@":
		return "", fmt.Sprintf("%s is the repository's scripts/cli_filter.lua, whose prefix make install never filled in", mine)
	}
	bin := filepath.Join(string(m[1]), "libexec", "migadvisor", "migadvisor-sbatch")
	if !executable(bin) {
		return "", fmt.Sprintf("%s (CliFilterPlugins=%s in %s) runs %s, which is not there or not executable: sbatch gets no advice",
			lua, params["clifilterplugins"], conf, bin)
	}
	return fmt.Sprintf("sbatch runs migadvisor's cli_filter: CliFilterPlugins=%s in %s, %s beside it, running %s",
		params["clifilterplugins"], conf, lua, bin), ""
}

// noFilter says why the cli_filter is off, for a sentence.
func noFilter(getenv func(string) string) string {
	conf := slurmConf(getenv)
	params, err := slurm.ReadConf(conf)
	if err != nil {
		return fmt.Sprintf("there is no slurm.conf to read at %s (%v; set SLURM_CONF to check another)", conf, plainErr(err))
	}
	if params["clifilterplugins"] == "" {
		return conf + " names no CliFilterPlugins"
	}
	return fmt.Sprintf("%s's CliFilterPlugins=%s runs no cli_filter.lua of migadvisor's", conf, params["clifilterplugins"])
}

// sbatchShim says what the first sbatch on PATH runs where it is
// migadvisor's shim ("" where it is not); or, where the shim cannot give
// advice, why.
func sbatchShim(getenv func(string) string) (on, wrong string) {
	first := lookPath("sbatch", getenv("PATH"))
	if first == "" || !slurm.IsShim(first) {
		return "", ""
	}
	bin := getenv("MIGADVISOR_BIN")
	if bin == "" {
		// As the shim looks: beside it, then PREFIX/bin, then on PATH.
		here := filepath.Dir(first)
		for _, p := range []string{filepath.Join(here, "migadvisor-sbatch"), filepath.Join(here, "..", "..", "bin", "migadvisor"),
			lookPath("migadvisor", getenv("PATH"))} {
			if p != "" && executable(p) {
				bin = filepath.Clean(p)
				break
			}
		}
	}
	if bin == "" || !executable(bin) {
		return "", fmt.Sprintf("sbatch on PATH is migadvisor's shim (%s), but it finds no migadvisor to run (MIGADVISOR_BIN, "+
			"migadvisor-sbatch beside it, PREFIX/bin/migadvisor): it runs Slurm's sbatch alone", first)
	}
	real, err := slurm.FindRealSbatch(getenv, bin)
	if err != nil {
		return "", fmt.Sprintf("sbatch on PATH is migadvisor's shim (%s), but %v", first, err)
	}
	return fmt.Sprintf("sbatch on PATH is migadvisor's shim (%s), running %s beside Slurm's sbatch (%s)", first, bin, real), ""
}

// notShim says what the sbatch on PATH is, for a sentence.
func notShim(getenv func(string) string) string {
	if first := lookPath("sbatch", getenv("PATH")); first != "" {
		return "sbatch on PATH (" + first + ") is Slurm's, not the shim"
	}
	return "no sbatch is on PATH"
}

// lookPath is the first executable file named name in the directories of
// path, "" for none: exec.LookPath for another PATH than this process's.
func lookPath(name, path string) string {
	for _, dir := range filepath.SplitList(path) {
		if dir == "" {
			dir = "."
		}
		if p := filepath.Join(dir, name); executable(p) {
			return p
		}
	}
	return ""
}

func executable(p string) bool {
	info, err := os.Stat(p)
	return err == nil && !info.IsDir() && info.Mode()&0o111 != 0
}
