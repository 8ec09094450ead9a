#%Module1.0
## Environment Modules modulefile for migadvisor: advice on MIG profiles at
## every sbatch. Install as <modulepath>/migadvisor/<version> and set prefix
## below to where `make install PREFIX=...` put it.
set prefix /opt/migadvisor

module-whatis "advises Slurm users which A100 MIG profile their job needs, at submission"

proc ModulesHelp { } {
    puts stderr "migadvisor wraps sbatch: it prints advice when your own (or the site's) job"
    puts stderr "history shows a cheaper profile that is safe for the script, records each"
    puts stderr "submission, and never blocks or changes one. MIGADVISOR_DISABLE=1 turns it"
    puts stderr "off; MIGADVISOR_APPLY=1 applies its advice."
}

prepend-path PATH $prefix/bin
# The shim directory comes first, so that `sbatch` is the wrapper.
prepend-path PATH $prefix/libexec/migadvisor
# setenv MIGADVISOR_SITE /shared/migadvisor/site.toml
