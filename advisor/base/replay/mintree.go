package replay

import (
	"math"
	"slices"
)

// sizeClass is the jobs of one pool that ask one number of slots, with the
// least time limit of those pending over any range of the pool's queue:
// what a plan asks to know whether any job further down could still start.
type sizeClass struct {
	slots   int
	members []int32 // their places in the pool's queue, ascending
	tree    []int64 // a segment tree of the pending members' limits; math.MaxInt64 for the others
}

// newSizeClass is the class of the jobs asking slots, placed in the
// queue at members, its tree in tree (2 × len(members) long).
func newSizeClass(slots int, members []int32, tree []int64) sizeClass {
	c := sizeClass{slots: slots, members: members, tree: tree}
	for i := range c.tree {
		c.tree[i] = math.MaxInt64
	}
	return c
}

// set gives member i the limit v (pending) or math.MaxInt64 (not).
func (c *sizeClass) set(i int, v int64) {
	i += len(c.members)
	c.tree[i] = v
	for ; i > 1; i >>= 1 {
		c.tree[i>>1] = min(c.tree[i], c.tree[i^1])
	}
}

// least is the least limit of the pending members placed in the queue
// after from and before to.
func (c *sizeClass) least(from, to int) int64 {
	l, _ := slices.BinarySearch(c.members, int32(from+1))
	r, _ := slices.BinarySearch(c.members, int32(to))
	v := int64(math.MaxInt64)
	for l, r = l+len(c.members), r+len(c.members); l < r; l, r = l>>1, r>>1 {
		if l&1 == 1 {
			v = min(v, c.tree[l])
			l++
		}
		if r&1 == 1 {
			r--
			v = min(v, c.tree[r])
		}
	}
	return v
}
