package savings

import (
	"cmp"
	"slices"
	"strconv"

	"github.com/migadvisor/migadvisor/advisor/base/history"
	"github.com/migadvisor/migadvisor/catalog"
	"github.com/migadvisor/migadvisor/internal/jsonlist"
)

// count adds to the tallies of the job's profile, its user and the total.
func (b *builder) count(r *history.JobRecord, add func(*Tally)) {
	p := b.profiles[r.Profile]
	if p == nil {
		p = &Tally{}
		b.profiles[r.Profile] = p
	}
	u := b.users[r.User]
	if u == nil {
		u = &UserTally{User: r.User}
		b.users[r.User] = u
	}
	add(p)
	add(&u.Tally)
	add(&b.rep.Total)
}

// skip counts a job that could not be judged, and names its script, up
// to MaxExamples of them, where an example says more than the reason;
// the scripts past those are counted, so that the report says so.
func (b *builder) skip(reason string, j job, example string) {
	u := b.unjudged[reason]
	if u == nil {
		u = &Unjudged{Reason: reason}
		b.unjudged[reason] = u
	}
	u.Jobs++
	u.SU += j.su
	b.skipped = reason
	if example == "" || b.examples[reason][example] {
		return // a script's jobs give its example each
	}
	if b.examples[reason] == nil {
		b.examples[reason] = map[string]bool{}
	}
	b.examples[reason][example] = true
	if len(u.Examples) < MaxExamples {
		u.Examples = append(u.Examples, example)
	} else {
		u.ExamplesLeftOut++
	}
}

// finish orders and rounds what the report lists.
func (b *builder) finish() {
	rep := b.rep
	for _, p := range b.order {
		if t, ok := b.profiles[p]; ok {
			rep.Profiles = append(rep.Profiles, ProfileTally{Profile: p, Tally: t.rounded()})
		}
	}
	if t, ok := b.profiles[""]; ok { // so that the rows add up to the total
		rep.Profiles = append(rep.Profiles, ProfileTally{Profile: UnknownProfile, Tally: t.rounded()})
	}
	for _, u := range b.users {
		u.Tally = u.Tally.rounded()
		rep.Users = append(rep.Users, *u)
	}
	slices.SortFunc(rep.Users, func(x, y UserTally) int {
		return cmp.Or(cmp.Compare(y.Saved, x.Saved), cmp.Compare(y.SU, x.SU), cmp.Compare(x.User, y.User))
	})
	slices.SortStableFunc(rep.Scripts, func(x, y Script) int { return cmp.Compare(y.SUSaved, x.SUSaved) })
	slices.SortStableFunc(rep.ToMeasure, func(x, y Measure) int { return cmp.Compare(y.SUPossible, x.SUPossible) })
	slices.SortStableFunc(rep.OOMs, func(x, y OOMJob) int { return cmp.Or(cmp.Compare(y.SU, x.SU), compareIDs(x.JobID, y.JobID)) })
	for _, u := range b.unjudged {
		u.SU = catalog.RoundSU(u.SU)
		rep.Unjudged = append(rep.Unjudged, *u)
	}
	slices.SortFunc(rep.Unjudged, func(x, y Unjudged) int { return cmp.Or(cmp.Compare(y.SU, x.SU), cmp.Compare(x.Reason, y.Reason)) })
	rep.Total = rep.Total.rounded()
	rep.Measurements.SU = catalog.RoundSU(rep.Measurements.SU)
	rep.Below.SU, rep.Below.SUThere, rep.Below.Saved = catalog.RoundSU(rep.Below.SU), catalog.RoundSU(rep.Below.SUThere), catalog.RoundSU(rep.Below.Saved)
	// A list with nothing in it is [] in the JSON, never null: a reader
	// iterates it without a check.
	rep.Profiles, rep.Users, rep.Scripts = jsonlist.NonNil(rep.Profiles), jsonlist.NonNil(rep.Users), jsonlist.NonNil(rep.Scripts)
	rep.OOMs, rep.ToMeasure, rep.Unjudged = jsonlist.NonNil(rep.OOMs), jsonlist.NonNil(rep.ToMeasure), jsonlist.NonNil(rep.Unjudged)
}

func (t Tally) rounded() Tally {
	t.SU, t.SmallerSU, t.SmallerSUThere, t.OOMSU = catalog.RoundSU(t.SU), catalog.RoundSU(t.SmallerSU), catalog.RoundSU(t.SmallerSUThere), catalog.RoundSU(t.OOMSU)
	t.LargerSU, t.LargerSUThere = catalog.RoundSU(t.LargerSU), catalog.RoundSU(t.LargerSUThere)
	t.Saved = catalog.RoundSU(t.Saved)
	return t
}

// compareIDs orders job ids numerically where they are numbers.
func compareIDs(x, y string) int {
	a, errA := strconv.ParseInt(x, 10, 64)
	c, errC := strconv.ParseInt(y, 10, 64)
	if errA == nil && errC == nil {
		return cmp.Compare(a, c)
	}
	return cmp.Compare(x, y)
}
