#%Module1.0
## Environment Modules modulefile for migadvisor: advice on MIG profiles at
## every sbatch. `make install` writes it to PREFIX/share/migadvisor/modulefiles/
## with the prefix below filled in; copy it to <modulepath>/migadvisor/<version>.
set prefix @PREFIX@

module-whatis "advises Slurm users which GPU profile (MIG slice or whole GPU) their job needs, at submission"

proc ModulesHelp { } {
    puts stderr "migadvisor wraps sbatch: it prints advice when your own (or the site's) job"
    puts stderr "history shows a cheaper profile that is safe for the script, and records each"
    puts stderr "submission. It never blocks a submission, and leaves it as you wrote it unless"
    puts stderr "you ask: with MIGADVISOR_APPLY=1 (or sbatch --mig-apply) it changes the"
    puts stderr "submission to the advised profile (and the --partition, --time or --mem that"
    puts stderr "profile needs), saying so on stderr. MIGADVISOR_DISABLE=1 turns it off;"
    puts stderr "MIGADVISOR_QUIET=1 silences its lines about its own problems (not the advice)."
}

prepend-path PATH $prefix/bin
# The shim directory comes first, so that `sbatch` is the wrapper.
prepend-path PATH $prefix/libexec/migadvisor
# setenv MIGADVISOR_SITE /shared/migadvisor/site.toml
