package replay

// event is a running job's true end.
type event struct {
	at  int64
	job int32
}

// endHeap is a binary min-heap of ends, the earliest first and, at one
// instant, the lower job index: written out rather than through
// container/heap, whose interface calls cost a third of a million jobs'
// replay.
type endHeap []event

func (e event) before(o event) bool {
	return e.at < o.at || e.at == o.at && e.job < o.job
}

func (h *endHeap) push(e event) {
	*h = append(*h, e)
	q := *h
	for i := len(q) - 1; i > 0; {
		parent := (i - 1) / 2
		if !q[i].before(q[parent]) {
			break
		}
		q[i], q[parent] = q[parent], q[i]
		i = parent
	}
}

func (h *endHeap) pop() event {
	q := *h
	top := q[0]
	last := len(q) - 1
	q[0] = q[last]
	q = q[:last]
	for i := 0; ; {
		least, l, r := i, 2*i+1, 2*i+2
		if l < len(q) && q[l].before(q[least]) {
			least = l
		}
		if r < len(q) && q[r].before(q[least]) {
			least = r
		}
		if least == i {
			break
		}
		q[i], q[least] = q[least], q[i]
		i = least
	}
	*h = q
	return top
}
