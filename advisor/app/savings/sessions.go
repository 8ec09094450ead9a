package savings

import (
	"context"
	"fmt"
	"math"

	"github.com/migadvisor/migadvisor/advisor"
	"github.com/migadvisor/migadvisor/advisor/base/history"
	"github.com/migadvisor/migadvisor/advisor/base/memory"
	"github.com/migadvisor/migadvisor/advisor/base/session"
	"github.com/migadvisor/migadvisor/catalog"
	"github.com/migadvisor/migadvisor/slurm"
)

// An interactive session (salloc, srun --pty, an Open OnDemand app) has no
// script: its jobs are judged as recommend --session judges them
// (advisor/base/session), so that the report and the user's own advice agree.
// By docs/user/sessions.md's rule a session's end proves nothing without a
// memory figure (it ends when its user closes it or its time is up, having
// run anything or nothing), so a session is never judged to fit a slice
// because one like it "completed" there; and it is priced per hour held,
// which a smaller slice does not lengthen.

// noSessionMemory is why sessions with no memory figure go unjudged.
const noSessionMemory = "sessions with no GPU memory figure: how a session ends proves nothing of what it used " +
	"(the monitor, run inside the session, measures it)"

// BasisHeld is a session's basis: priced for the hours it was held, on
// the recommended profile as on the one it ran on.
const BasisHeld = "held"

// judgeSessions judges a user's sessions of one name from the newest ones
// the history has (as recommend --session reads them), then sorts those of
// the period as judge sorts a script's jobs.
func (b *builder) judgeSessions(ctx context.Context, st *history.Store, g *group) error {
	adv, err := session.Advise(ctx, session.Request{Name: g.name, User: g.user, Site: b.site}, nil, st)
	if err != nil {
		return fmt.Errorf("judge %s's sessions named %s: %w", g.user, g.name, err)
	}
	sc := Script{User: g.user, Name: g.name, Session: true, Runs: adv.Sessions, group: g.key}
	var unmeasured []job
	for _, j := range g.jobs {
		listed := sc.Jobs
		open := b.placeSession(&sc, adv, j)
		b.tell(j, nil, &sc, listed)
		if open {
			unmeasured = append(unmeasured, j)
		}
	}
	b.sessionsToMeasure(g, unmeasured)
	return b.list(g.user, sc)
}

// sessionsToMeasure lists a user's sessions of one name that no memory
// figure judged, when the smallest slice, held as long, would have saved
// them at least min_su_saved: the monitor run inside the next one says
// whether it fits.
func (b *builder) sessionsToMeasure(g *group, open []job) {
	if len(open) == 0 || len(b.order) == 0 {
		return
	}
	smallest := b.order[0]
	m := Measure{User: g.user, Name: g.name, Profile: smallest, Jobs: len(open), Session: true, group: g.key,
		Why: "no GPU memory figure: how a session ends proves nothing of what it used",
		Command: "migadvisor monitor -- COMMAND, inside the session (jupyter lab, python …); then migadvisor recommend --session " +
			slurm.ShellWord(g.name)}
	if p, ok := b.site.ProfileNamed(smallest); ok {
		m.Request = p.Request
	}
	possible := 0.0
	for _, j := range open {
		m.add(j)
		there := &advisor.ProfileAdvice{Profile: smallest, Partition: sessionPartition(b.site, smallest, j.rec)}
		if alt, ok := chargeOn(b.site, j.rec, there, 1); ok && alt < j.su {
			possible += j.su - alt
		}
	}
	if possible < b.th.MinSUSaved || possible <= 0 {
		return
	}
	m.SUSpent, m.SUPossible = catalog.RoundSU(m.SUSpent), catalog.RoundSU(possible)
	b.rep.ToMeasure = append(b.rep.ToMeasure, m)
}

// placeSession sorts one session of the group by the advice.
func (b *builder) placeSession(sc *Script, adv *session.Advice, j job) (unmeasured bool) {
	r := j.rec
	example := r.User + " " + r.Name
	switch {
	case r.OOM() == slurm.OOMGPU:
		b.sessionOutOfMemory(adv, j)
		return
	case r.GPUCount != 1:
		b.skip(notAdvisable, j, fmt.Sprintf("%s: a session of %d GPUs, which no MIG slice serves", example, r.GPUCount))
		return
	case adv.Sessions == 0:
		b.skip(notAdvisable, j, example+": "+adv.Why)
		return
	case adv.Sessions < b.th.MinRuns:
		b.skip(fmt.Sprintf("fewer than %d sessions of the name (min_runs)", b.th.MinRuns), j, "")
		return
	case adv.Recommended == "" && adv.WithMemory == 0:
		b.skip(noSessionMemory, j, example)
		return true
	case adv.Recommended == "":
		b.skip(noProfile, j, example+": "+adv.Why)
		return
	case b.rank(adv.Recommended) >= b.rank(r.Profile):
		// Right-sized, unless a smaller slice's risk is unknown: as for a
		// script, the memory evidence that lacks is the reason.
		for _, p := range adv.Profiles {
			if b.rank(p.Profile) >= 0 && b.rank(p.Profile) < b.rank(r.Profile) && p.OOMRisk == memory.RiskUnknown {
				reason := noMemory
				if fig, _ := adv.GPUMemFigure(); fig != nil && fig.Kind == memory.NeedCeiling {
					reason = onlyCeiling
				}
				b.skip(reason, j, example+": "+p.Profile+": "+p.Reason)
				return
			}
		}
		return
	}
	// Held as long on the smaller slice: a session waits on its user,
	// not on the GPU's speed.
	alt, ok := chargeOn(b.site, r, &advisor.ProfileAdvice{Profile: adv.Recommended, Partition: sessionPartition(b.site, adv.Recommended, r)}, 1)
	switch {
	case !ok:
		b.skip(notPriced, j, example+": "+adv.Recommended)
		return
	case alt >= j.su:
		return
	}
	b.count(r, func(t *Tally) {
		t.Smaller++
		t.SmallerSU += j.su
		t.SmallerSUThere += alt
		t.Saved += j.su - alt
	})
	b.addSession(sc, adv, j, alt)
	return false
}

// sessionPartition is where a session on profile would run: its own
// partition where the profile may run there, else the profile's first,
// as recommend --session prices it.
func sessionPartition(site *catalog.Site, profile string, r *history.JobRecord) string {
	p, ok := site.Profile(profile)
	if !ok || len(p.Partitions) == 0 {
		return r.Partition
	}
	for _, part := range p.Partitions {
		if part == r.Partition {
			return part
		}
	}
	return p.Partitions[0]
}

// addSession adds a smaller-slice session to its row.
func (b *builder) addSession(sc *Script, adv *session.Advice, j job, alt float64) {
	if sc.Jobs == 0 {
		sc.Recommended, sc.Basis, sc.RuntimeRatio, sc.Change = adv.Recommended, BasisHeld, 1, adv.Change
		sc.Direction = DirectionSmaller // a session is moved only to a smaller slice
		if p, ok := b.site.Profile(adv.Recommended); ok {
			sc.Request, sc.UsableMiB = p.Request, p.UsableMemory.MiB()
		}
		fig, holder := adv.GPUMemFigure()
		if fig != nil {
			sc.SeenMiB, sc.NeedMiB, sc.MeasuredBy, sc.MemoryKind = fig.SeenMiB, fig.MiB, fig.By, fig.Kind
			if fig.Kind == memory.NeedCeiling {
				sc.HeldBy = heldBy(&holder)
			}
		} else {
			sc.Fits = adv.Reason
		}
		sc.askedFor(j.rec)
		sc.Why = sc.why()
	}
	b.listJob(sc, j, alt)
}

// sessionOutOfMemory lists a session that ran out of GPU memory, with what
// the sessions need and the smallest bigger profile the advice judges a
// low risk.
func (b *builder) sessionOutOfMemory(adv *session.Advice, j job) {
	r := j.rec
	b.count(r, func(t *Tally) { t.OOM++; t.OOMSU += j.su })
	o := OOMJob{User: r.User, JobID: r.JobID, Name: r.Name, Profile: r.Profile, SU: catalog.RoundSU(j.su)}
	if r.GPUNeedMiB != nil {
		o.NeedMiB, o.NeedKind = math.Round(*r.GPUNeedMiB), memory.NeedOOM
	}
	if fig, _ := adv.GPUMemFigure(); fig != nil {
		o.NeedMiB, o.NeedKind = fig.MiB, fig.Kind
	}
	for _, p := range adv.Profiles {
		if b.rank(p.Profile) > b.rank(r.Profile) && p.OOMRisk == memory.RiskLow {
			o.Fits = p.Profile
			break
		}
	}
	b.rep.OOMs = append(b.rep.OOMs, o)
}
