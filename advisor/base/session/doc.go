// Package session advises interactive sessions: salloc, srun --pty and Open
// OnDemand's batch-connect apps, which have no script to fingerprint. Their
// evidence is keyed by user and job name: the jobs of that name in the
// histories that no script the user submitted is linked to. Each session's
// GPU memory figures (the monitor's, jobstats' peak, Slurm's gres/gpumem)
// and out-of-memory errors are judged with advisor/base/memory's rules, as a
// script's runs are; a session is priced per hour held, since it is idle
// much of the time it is charged for.
package session
