package wrapper

import (
	"context"
	"slices"
	"strings"
	"time"

	"github.com/migadvisor/migadvisor/advisor/app/index"
	"github.com/migadvisor/migadvisor/advisor/base/history"
)

// The filter's cache made anew (Lmod's spider cache again): a collect
// rewrites the user's index, whose cache of answers goes with it
// (index.Refresh), so every script's next submission would start a
// process. RefreshIndex answers again, in the collect's process, what the
// cache answered, of the new index: the same code filter-advise runs, with
// the options each entry keeps and the environment its key holds, reading
// each script as it is now (one changed since has another key in the
// filter, and one gone is dropped).

// filterKeyEnv are the environment variables whose values
// cli_filter.lua's key holds after the options (filterFlags,
// filterResources): migadvisor.key_env, in its order.
var filterKeyEnv = []string{EnvApply, EnvSite, EnvCluster, "USER", "LOGNAME", "PWD",
	"SBATCH_PARTITION", "SBATCH_QOS", "SBATCH_ACCOUNT", "SBATCH_TIMELIMIT", "SBATCH_GRES", "SBATCH_GPUS",
	"SBATCH_GPUS_PER_NODE", "SBATCH_GPUS_PER_TASK", "SBATCH_CPUS_PER_GPU", "SBATCH_MEM_PER_CPU",
	"SBATCH_MEM_PER_GPU", "SBATCH_MEM_PER_NODE", "SBATCH_EXCLUSIVE", "SBATCH_JOB_NAME"}

// sessionKeyEnv is the variable a session's key holds after filterKeyEnv
// (migadvisor.session_key): srun's job name without -J.
const sessionKeyEnv = "SLURM_JOB_NAME"

// filterRemakeBudget bounds what a refresh spends on the cache: the
// answers not made by then are asked for once, at their next submission.
const filterRemakeBudget = time.Second

// RefreshIndex is index.Refresh of the user's index of the history at db,
// and, where it rewrote it, the filter's cache made anew of the new index:
// the answers the cache held, younger than filterCacheTTL, answered again.
// It reports whether it rewrote the index. The cache is a cache: where it
// cannot be made, the filter asks filter-advise, which writes it. The one
// function here that reads a history (index.Refresh): collect's, never a
// submission's.
func RefreshIndex(ctx context.Context, db string) (bool, error) {
	return refreshIndex(ctx, db, ProcessOptions(nil, nil, nil, nil, nil))
}

// refreshIndex is RefreshIndex, the advice's dependencies (the clock, the
// indexes, the site) in base.
func refreshIndex(ctx context.Context, db string, base Options) (bool, error) {
	answered := readFilterCache(index.FilterCachePath(db))
	wrote, err := index.Refresh(ctx, db)
	if wrote && err == nil && len(answered) > 0 {
		_ = remakeFilterCache(ctx, db, answered, base) // a cache not written is asked for again
	}
	return wrote, err
}

// remakeFilterCache answers again, of the user's index now in place, the
// requests the cache answered (answered, newest first) younger than
// filterCacheTTL, within filterRemakeBudget, and writes the answers that
// hold at once, with those the filter wrote meanwhile: none where the
// index changed again since (filterCacheWrite's check; that refresh makes
// its own).
func remakeFilterCache(ctx context.Context, db string, answered []filterCacheEntry, base Options) error {
	base = newWrapper(base).opt
	base.Args, base.Stdin, base.Stdout, base.Stderr, base.Env, base.DefaultDB = nil, nil, nil, nil, nil, db
	var made []filterCacheEntry
	cache := newFilterCacheWrite(db)
	now, deadline := base.Now().Unix(), time.Now().Add(filterRemakeBudget)
	for _, e := range answered {
		if ctx.Err() != nil || time.Now().After(deadline) {
			break
		}
		kind, env, ok := keyEnvironment(e.key)
		if !ok || e.options == "" || now-e.written >= int64(filterCacheTTL/time.Second) {
			continue
		}
		opt := base
		opt.Env, opt.WorkDir = env, envValue(env, "PWD")
		if kind == "" {
			filterAdvise(ctx, opt, e.options, e.key, &made)
		} else {
			filterAdviseSession(ctx, opt, kind, e.options, e.key, &made)
		}
	}
	if len(made) == 0 {
		return nil
	}
	return cache.put(history.SpoolFor(db).Dir, made...)
}

// keyEnvironment is what cli_filter.lua's key holds beyond the options:
// the command of a session's (salloc, srun; "" for sbatch's) and the
// environment the advice read, its variables set; false for a key of
// another layout (another version of the filter's).
func keyEnvironment(key string) (kind string, env []string, ok bool) {
	fields := strings.Split(key, "\t")
	names := filterKeyEnv
	if len(fields) > 2 && fields[2] == sessionKeyTag {
		kind, names = fields[0], append(slices.Clone(filterKeyEnv), sessionKeyEnv)
		if kind != FilterSalloc && kind != FilterSrun {
			return "", nil, false
		}
	}
	head := 3 + len(filterFlags) + len(filterResources)
	if len(fields) != head+len(names) {
		return "", nil, false
	}
	for i, name := range names {
		if v := fields[head+i]; v != "" {
			env = append(env, name+"="+v)
		}
	}
	return kind, env, true
}

// envValue is name's value in env ("NAME=value"), the last one's.
func envValue(env []string, name string) string {
	for i := len(env) - 1; i >= 0; i-- {
		if v, ok := strings.CutPrefix(env[i], name+"="); ok {
			return v
		}
	}
	return ""
}
