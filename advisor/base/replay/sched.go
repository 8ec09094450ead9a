package replay

import (
	"cmp"
	"maps"
	"math"
	"slices"
)

// sched is one replay: the jobs, their pools, the pending queue and the
// running jobs' ends.
type sched struct {
	jobs  []Job
	lim   limits
	pools []*pool
	out   []Placement

	pool    []int32 // each job's pool; -1 where none can hold it
	rank    []int32 // each job's place in priority order
	byRank  []int32 // the jobs in priority order
	local   []int32 // each job's place in its pool's queue
	inClass []int32 // each job's place in its size class, where its pool has them

	submits []int32 // the jobs placed, by submission
	next    int     // the first of submits not yet submitted
	pending fenwick // over rank: the jobs submitted and not started
	ends    endHeap // the running jobs, by their true end

	// Backfill's cycles, where it has an interval: whether one ran and
	// when the last did, and when the next is due (math.MaxInt64 until a
	// submission or end follows the last).
	cycled               bool
	lastCycle, nextCycle int64

	mem mem // what the slices above are cut from
}

// mem is the memory of a sched that grows with its jobs, which a Replayer
// hands on from one replay to the next: a search replaying a million jobs
// twenty times allocates it once.
type mem struct {
	out                                         []Placement
	pool, rank, local, inClass, byRank, submits []int32
	// The pools' queues, pending sets and size classes, end to end.
	queues, trees, members []int32
	classTrees             []int64
	pending                []int32
	waits                  []int64
	ends                   []event
}

// reuse is n zeros in buf's memory, grown where it has too little (never
// nil, as make's).
func reuse[T any](buf *[]T, n int) []T {
	if cap(*buf) < n || *buf == nil {
		*buf = make([]T, n)
	}
	b := (*buf)[:n]
	clear(b)
	return b
}

// pool is the slots of one profile and its jobs.
type pool struct {
	name    string
	slots   int
	free    int     // slots not running a job now
	queue   []int32 // its jobs in priority order
	pending fenwick // over queue
	// classes are its jobs by how many slots they ask, fewest first; nil
	// where each asks one, as then no job can be blocked while a slot is
	// free, no plan reserves anything, and limits are not kept.
	classes []sizeClass
	limits  []ending // its running jobs' limits, sorted, where it has classes
	dirty   bool     // to plan again at this instant
	walk    walk     // the plan made at this instant so far
}

// walk is how far one pool's plan at one instant has gone, so that a
// pool planned again at the same instant (jobs ahead of its next job
// started elsewhere) goes on from there.
type walk struct {
	valid   bool
	at      int64
	cursor  int  // the last job of queue tested
	planned bool // a job could not start: h holds the reservations
	h       horizon
}

// newSched prepares a replay in the memory of prev, a replay done with
// (nil: none).
func newSched(prev *sched, slots Slots, jobs []Job, lim limits) *sched {
	s := &sched{jobs: jobs, lim: lim, nextCycle: math.MaxInt64}
	if prev != nil {
		s.mem = prev.mem
	}
	n := len(jobs)
	s.out, s.pool, s.rank, s.local = reuse(&s.mem.out, n), reuse(&s.mem.pool, n), reuse(&s.mem.rank, n), reuse(&s.mem.local, n)
	index := s.newPools(slots)
	s.byRank = reuse(&s.mem.byRank, n)[:0]
	for i := range jobs {
		s.pool[i] = -1
		if p, ok := index[jobs[i].Profile]; ok && jobs[i].Count <= slots[jobs[i].Profile] {
			s.pool[i] = p
			s.byRank = append(s.byRank, int32(i))
		}
	}
	placed := len(s.byRank)
	s.submits = append(reuse(&s.mem.submits, placed)[:0], s.byRank...)
	priorityOrder(jobs, s.byRank)
	// Each pool's queue and pending set cut from one buffer each.
	sizes := make([]int, len(s.pools))
	for _, j := range s.byRank {
		sizes[s.pool[j]]++
	}
	queues, trees := reuse(&s.mem.queues, placed), reuse(&s.mem.trees, placed)
	for i, p := range s.pools {
		p.queue, queues = queues[:0:sizes[i]], queues[sizes[i]:]
		p.pending, trees = fenwickIn(trees[:sizes[i]]), trees[sizes[i]:]
	}
	for r, j := range s.byRank {
		s.rank[j] = int32(r)
		p := s.pools[s.pool[j]]
		s.local[j] = int32(len(p.queue))
		p.queue = append(p.queue, j)
	}
	members, classTrees := s.mem.members[:0], s.mem.classTrees[:0]
	for _, p := range s.pools {
		members, classTrees = s.sizeClasses(p, members, classTrees)
	}
	s.mem.members, s.mem.classTrees = members, classTrees
	s.pending = fenwickIn(reuse(&s.mem.pending, placed))
	s.ends = s.mem.ends[:0]
	slices.SortFunc(s.submits, func(a, b int32) int {
		return cmp.Or(cmp.Compare(jobs[a].Submit, jobs[b].Submit), cmp.Compare(s.rank[a], s.rank[b]))
	})
	return s
}

// newPools makes a pool of each profile with slots, by name, and returns
// their indices.
func (s *sched) newPools(slots Slots) map[string]int32 {
	names := make([]string, 0, len(slots))
	for p, n := range slots {
		if n > 0 {
			names = append(names, p)
		}
	}
	slices.Sort(names)
	index := make(map[string]int32, len(names))
	for i, p := range names {
		index[p] = int32(i)
		s.pools = append(s.pools, &pool{name: p, slots: slots[p], free: slots[p]})
	}
	return index
}

// sizeClasses groups p's jobs by the slots they ask, where some ask more
// than one; their members and trees are cut from the ends of members and
// trees, which it returns grown.
func (s *sched) sizeClasses(p *pool, members []int32, trees []int64) ([]int32, []int64) {
	if !slices.ContainsFunc(p.queue, func(j int32) bool { return s.jobs[j].Count > 1 }) {
		return members, trees
	}
	sizes := map[int]int{}
	for _, j := range p.queue {
		sizes[s.jobs[j].Count]++
	}
	if s.inClass == nil {
		s.inClass = reuse(&s.mem.inClass, len(s.jobs))
	}
	for _, n := range slices.Sorted(maps.Keys(sizes)) {
		from := len(members)
		for li, j := range p.queue {
			if s.jobs[j].Count == n {
				s.inClass[j] = int32(len(members) - from)
				members = append(members, int32(li))
			}
		}
		at := len(trees)
		trees = slices.Grow(trees, 2*sizes[n])[:at+2*sizes[n]]
		p.classes = append(p.classes, newSizeClass(n, members[from:len(members):len(members)], trees[at:len(trees):len(trees)]))
	}
	return members, trees
}

// class is job j's size class in p, nil where p has none.
func (s *sched) class(p *pool, j int32) *sizeClass {
	for i := range p.classes {
		if p.classes[i].slots == s.jobs[j].Count {
			return &p.classes[i]
		}
	}
	return nil
}

// run replays every instant at which a job is submitted or ends, or
// backfill runs a cycle: the ends first, so that the schedulers see their
// slots free, then the submissions, then the schedulers.
func (s *sched) run() {
	for {
		t, ok := s.instant()
		if !ok {
			return
		}
		for len(s.ends) > 0 && s.ends[0].at == t {
			s.end(s.ends.pop().job)
			s.changed(t)
		}
		for s.next < len(s.submits) && s.jobs[s.submits[s.next]].Submit == t {
			s.submit(s.submits[s.next])
			s.next++
			s.changed(t)
		}
		s.schedule(t)
	}
}

// instant is the next time a job is submitted or ends, or a backfill
// cycle is due.
func (s *sched) instant() (int64, bool) {
	t := s.nextCycle
	if s.next < len(s.submits) {
		t = min(t, s.jobs[s.submits[s.next]].Submit)
	}
	if len(s.ends) > 0 {
		t = min(t, s.ends[0].at)
	}
	return t, t != math.MaxInt64
}

// changed notes a submission or end at t: backfill's next cycle is due
// bf_interval after its last, or now where that has passed (its thread
// runs a cycle only once something changed since the last).
func (s *sched) changed(t int64) {
	if s.lim.interval < 0 || s.nextCycle != math.MaxInt64 {
		return
	}
	s.nextCycle = t
	if s.cycled {
		s.nextCycle = max(t, after(s.lastCycle, s.lim.interval))
	}
}

// schedule starts what Slurm's schedulers would at t: backfill's plan at
// its cycles (at every instant without an interval), the main scheduler
// between them.
func (s *sched) schedule(t int64) {
	switch {
	case s.lim.interval < 0:
		s.settle(t)
	case t == s.nextCycle:
		s.cycle(t)
	default:
		s.mainScheduler(t)
	}
}

// cycle is one of backfill's: every pool planned afresh at t, as Slurm's
// backfill builds its plan anew each cycle.
func (s *sched) cycle(t int64) {
	s.cycled, s.lastCycle, s.nextCycle = true, t, math.MaxInt64
	for _, p := range s.pools {
		p.walk.valid, p.dirty = false, true
	}
	s.settle(t)
}

// mainScheduler starts pending jobs in priority order while each fits the
// slots free now, and stops at the first that does not: Slurm's main
// scheduler, which stops there for the job's partition (the whole layout
// here). It keeps no reservation: those of backfill last its cycle, and
// stopping at the first job blocked cannot take the slots they hold.
func (s *sched) mainScheduler(t int64) {
	for {
		r, ok := s.pending.kth(0)
		if !ok {
			return
		}
		j := s.byRank[r]
		p := s.pools[s.pool[j]]
		if s.jobs[j].Count > p.free {
			return
		}
		s.start(p, j, t)
	}
}

func (s *sched) submit(j int32) {
	p := s.pools[s.pool[j]]
	s.pending.add(int(s.rank[j]), 1)
	p.pending.add(int(s.local[j]), 1)
	if c := s.class(p, j); c != nil {
		c.set(int(s.inClass[j]), s.jobs[j].LimitS)
	}
	p.walk.valid = false
	s.mayStart(p, j)
}

// mayStart plans p again where job j, newly pending or newly within
// MaxJobTest of the head, could start. Nothing else of p can start for
// it: the jobs ahead of j see nothing new, and those after it only lose
// slots to its reservation (j newly pending) or lie deeper than
// MaxJobTest (j newly within).
func (s *sched) mayStart(p *pool, j int32) {
	if s.jobs[j].Count <= p.free && s.within(j) {
		p.dirty = true
	}
}

// within says whether fewer than MaxJobTest pending jobs are ahead of j:
// whether backfill tests it.
func (s *sched) within(j int32) bool {
	return s.lim.depth < 0 || s.pending.before(int(s.rank[j])) < s.lim.depth
}

func (s *sched) end(j int32) {
	p := s.pools[s.pool[j]]
	p.free += s.jobs[j].Count
	if p.classes != nil {
		e := ending{at: s.out[j].Start + s.jobs[j].LimitS, job: j}
		i, ok := slices.BinarySearchFunc(p.limits, e, ending.compare)
		if !ok {
			panic("replay: a running job's limit is missing from its pool")
		}
		p.limits = slices.Delete(p.limits, i, i+1)
	}
	p.walk.valid = false
	p.dirty = true
}

// settle plans every pool that may start a job at t until none may: a
// start can bring a job of another pool within MaxJobTest of the head.
// Nothing else can start a job at t: with no job of its own submitted or
// ended and none ahead of its jobs started, a pool's plan holds, as the
// running jobs' limits and the reservations lie after t (see pass).
func (s *sched) settle(t int64) {
	for {
		var p *pool
		for _, q := range s.pools {
			if q.dirty {
				p = q
				break
			}
		}
		if p == nil {
			return
		}
		p.dirty = false
		s.pass(p, t)
	}
}

// pass plans p at t: its pending jobs in priority order, each started if it
// fits now without taking a reserved slot, else reserved at its earliest
// start, until no slot is free, the queue ends, the next job lies
// MaxJobTest pending jobs deep, or no job left could start now. A running
// job's limit lies after t (it ended at its limit at the latest), and so
// does every reservation (a job that could start at t does), so a plan
// made earlier with the same jobs running and pending still holds at t,
// save where bf_window's end, which moves with t, cut a reservation short
// (see the package comment).
func (s *sched) pass(p *pool, t int64) {
	w := &p.walk
	if !w.valid || w.at != t {
		*w = walk{valid: true, at: t, cursor: -1, h: w.h}
	}
	for p.free > 0 {
		li, ok := p.pending.next(w.cursor)
		if !ok {
			return
		}
		j := p.queue[li]
		if !s.within(j) {
			return // beyond bf_max_job_test; a start ahead of it plans p again
		}
		w.cursor = li
		if !s.test(p, j, t) && !s.anyFits(p) {
			return
		}
	}
}

// test starts job j of p at t if it fits now, and reserves its earliest
// start if it does not; it says whether j started. Until a job of the plan
// is blocked there is no reservation, and fitting now is having the slots
// free (Slurm's main scheduler); from then on the horizon holds the
// reservations (its backfill).
func (s *sched) test(p *pool, j int32, t int64) bool {
	w, job := &p.walk, &s.jobs[j]
	if !w.planned {
		if job.Count <= p.free {
			s.start(p, j, t)
			return true
		}
		w.planned = true
		w.h.reset(t, after(t, s.lim.window), p.free, p.limits)
	}
	at, ok := w.h.earliest(job.Count, job.LimitS)
	if ok {
		w.h.take(at, job.LimitS, job.Count)
	}
	if ok && at == t {
		s.start(p, j, t)
		return true
	}
	return false
}

// anyFits says whether a job of p after the walk's cursor and within
// MaxJobTest could still start now: one whose limit fits the hole its
// slots leave. Reservations only shrink holes, so where none does, the
// rest of the plan starts nothing and is left unmade.
func (s *sched) anyFits(p *pool) bool {
	w := &p.walk
	to := len(p.queue)
	if s.lim.depth >= 0 {
		// The deepest job tested is the one MaxJobTest-1 pending jobs deep;
		// p's jobs up to it are those ranked no lower.
		if r, ok := s.pending.kth(s.lim.depth - 1); ok {
			to, _ = slices.BinarySearchFunc(p.queue, int32(r), func(j, r int32) int { return cmp.Compare(s.rank[j], r+1) })
		}
	}
	for i := range p.classes {
		c := &p.classes[i]
		if c.slots > p.free {
			break
		}
		if c.least(w.cursor, to) <= w.h.hole(c.slots) {
			return true
		}
	}
	return false
}

func (s *sched) start(p *pool, j int32, t int64) {
	job := &s.jobs[j]
	p.free -= job.Count
	s.pending.add(int(s.rank[j]), -1)
	p.pending.add(int(s.local[j]), -1)
	if c := s.class(p, j); c != nil {
		c.set(int(s.inClass[j]), math.MaxInt64)
	}
	if p.classes != nil {
		e := ending{at: t + job.LimitS, job: j, slots: int32(job.Count)}
		i, _ := slices.BinarySearchFunc(p.limits, e, ending.compare)
		p.limits = slices.Insert(p.limits, i, e)
	}
	end := t + min(job.RuntimeS, job.LimitS)
	s.out[j] = Placement{Placed: true, Start: t, End: end, WaitS: t - job.Submit}
	s.ends.push(event{at: end, job: j})
	s.deepen()
}

// deepen plans again the pool of the job a start brought within
// MaxJobTest of the head, the one now that deep, where it could start.
func (s *sched) deepen() {
	if s.lim.depth < 0 {
		return
	}
	if r, ok := s.pending.kth(s.lim.depth - 1); ok {
		j := s.byRank[r]
		s.mayStart(s.pools[s.pool[j]], j)
	}
}
