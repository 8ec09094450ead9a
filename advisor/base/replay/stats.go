package replay

import (
	"cmp"
	"fmt"
	"math"
	"slices"
)

// result gathers the placements into each profile's figures and lists the
// jobs no slot could hold.
func (s *sched) result() Result {
	r := Result{Jobs: s.out}
	r.FromS, r.ToS = s.span()
	stats := map[string]*ProfileStats{}
	of := func(name string) *ProfileStats {
		if stats[name] == nil {
			stats[name] = &ProfileStats{Profile: name}
		}
		return stats[name]
	}
	for _, p := range s.pools {
		of(p.name).Slots = p.slots
	}
	// Each pool's waits cut from one buffer.
	sizes := make([]int, len(s.pools))
	for _, j := range s.submits {
		sizes[s.pool[j]]++
	}
	buf := reuse(&s.mem.waits, len(s.submits))
	waits := make([][]int64, len(s.pools))
	for i, n := range sizes {
		waits[i], buf = buf[:0:n], buf[n:]
	}
	for i := range s.jobs {
		job := &s.jobs[i]
		st := of(job.Profile)
		if s.pool[i] < 0 {
			st.Unplaced++
			r.Unplaced = append(r.Unplaced, Unplaced{Job: i, ID: job.ID, Why: whyUnplaced(job, st.Slots)})
			continue
		}
		st.Jobs++
		st.BusySlotS += int64(job.Count) * (s.out[i].End - s.out[i].Start)
		waits[s.pool[i]] = append(waits[s.pool[i]], s.out[i].WaitS)
	}
	for i, p := range s.pools {
		st := stats[p.name]
		slices.Sort(waits[i])
		st.P50WaitS, st.P95WaitS = percentile(waits[i], 0.50), percentile(waits[i], 0.95)
		if span := r.ToS - r.FromS; span > 0 {
			st.Busy = float64(st.BusySlotS) / (float64(st.Slots) * float64(span))
		}
	}
	for _, st := range stats {
		r.Profiles = append(r.Profiles, *st)
	}
	slices.SortFunc(r.Profiles, func(a, b ProfileStats) int { return cmp.Compare(a.Profile, b.Profile) })
	return r
}

// span is the first submission of a placed job and the last end; zeros
// when no job was placed.
func (s *sched) span() (from, to int64) {
	if len(s.submits) == 0 {
		return 0, 0
	}
	from, to = s.jobs[s.submits[0]].Submit, math.MinInt64
	for _, j := range s.submits {
		to = max(to, s.out[j].End)
	}
	return from, to
}

func whyUnplaced(job *Job, slots int) string {
	if slots == 0 {
		return fmt.Sprintf("the layout has no %s slot", job.Profile)
	}
	return fmt.Sprintf("it asks %d × %s and the layout has %d", job.Count, job.Profile, slots)
}

// percentile is the nearest-rank q-quantile of sorted waits: the least of
// them that at least a share q of them do not exceed; 0 for none.
func percentile(waits []int64, q float64) int64 {
	if len(waits) == 0 {
		return 0
	}
	k := int(math.Ceil(q*float64(len(waits)))) - 1
	return waits[max(k, 0)]
}
