-- Lmod modulefile for migadvisor: advice on MIG profiles at every sbatch.
-- Install as <modulepath>/migadvisor/<version>.lua and set prefix below to
-- where `make install PREFIX=...` put it.
local prefix = "/opt/migadvisor"

whatis("Name: migadvisor")
whatis("Description: advises Slurm users which A100 MIG profile their job needs, at submission")
help([[
migadvisor wraps sbatch: it prints advice when your own (or the site's) job
history shows a cheaper profile that is safe for the script, records each
submission, and never blocks or changes one. Turn it off for a shell with
MIGADVISOR_DISABLE=1, or apply its advice with MIGADVISOR_APPLY=1.
  migadvisor recommend job.sh     the full advice for a script
  migadvisor sbatch --help        what the wrapper does
]])

prepend_path("PATH", pathJoin(prefix, "bin"))
-- The shim directory comes first, so that `sbatch` is the wrapper.
prepend_path("PATH", pathJoin(prefix, "libexec", "migadvisor"))
prepend_path("MANPATH", pathJoin(prefix, "share", "man"))
-- The site file, if the admins keep it elsewhere than /etc/migadvisor/site.toml:
-- setenv("MIGADVISOR_SITE", "/shared/migadvisor/site.toml")
