-- Lmod modulefile for migadvisor: advice on MIG profiles at every sbatch.
-- `make install` writes it to PREFIX/share/migadvisor/modulefiles/ with
-- the prefix below filled in; copy it to <modulepath>/migadvisor/<version>.lua.
local prefix = "@PREFIX@"

whatis("Name: migadvisor")
whatis("Description: advises Slurm users which GPU profile (MIG slice or whole GPU) their job needs, at submission")
help([[
migadvisor wraps sbatch: it prints advice when your own (or the site's) job
history shows a cheaper profile that is safe for the script, and records each
submission. It never blocks a submission, and leaves it as you wrote it
unless you ask: with MIGADVISOR_APPLY=1 (or sbatch --mig-apply) it changes
the submission to the advised profile (and the --partition, --time or --mem
that profile needs), saying so on stderr. MIGADVISOR_DISABLE=1 turns it off
for a shell; MIGADVISOR_QUIET=1 silences its lines about its own problems
(not the advice).
  migadvisor recommend job.sh     the full advice for a script
  migadvisor sbatch --help        what the wrapper does
]])

prepend_path("PATH", pathJoin(prefix, "bin"))
-- The shim directory comes first, so that `sbatch` is the wrapper.
prepend_path("PATH", pathJoin(prefix, "libexec", "migadvisor"))
-- The site file, if the admins keep it elsewhere than /etc/migadvisor/site.toml:
-- setenv("MIGADVISOR_SITE", "/shared/migadvisor/site.toml")
