package replay

import "math/bits"

// fenwick is a set of positions 0..n-1 (a Fenwick tree of counts): which
// jobs, by their place in priority order, are pending. It answers how many
// are ahead of one and which is the k-th in O(log n), so that a plan never
// scans the queue.
type fenwick struct {
	tree []int32 // tree[i-1] counts the positions (i - i&-i, i]
	top  int     // the highest power of two ≤ n
}

// fenwickIn is the empty set of len(tree) positions in tree, all zeros.
func fenwickIn(tree []int32) fenwick {
	f := fenwick{tree: tree}
	if n := len(tree); n > 0 {
		f.top = 1 << (bits.Len(uint(n)) - 1)
	}
	return f
}

// add puts position i in the set (d = 1) or takes it out (d = -1).
func (f *fenwick) add(i int, d int32) {
	for i++; i <= len(f.tree); i += i & -i {
		f.tree[i-1] += d
	}
}

// before counts the positions in the set below i.
func (f *fenwick) before(i int) int {
	n := 0
	for ; i > 0; i -= i & -i {
		n += int(f.tree[i-1])
	}
	return n
}

// kth is the k-th position of the set, counting from 0; false when the set
// holds k or fewer.
func (f *fenwick) kth(k int) (int, bool) {
	pos := 0 // the tree's positions ≤ pos hold k or fewer
	for step := f.top; step > 0; step >>= 1 {
		if next := pos + step; next <= len(f.tree) && int(f.tree[next-1]) <= k {
			pos = next
			k -= int(f.tree[next-1])
		}
	}
	return pos, pos < len(f.tree)
}

// next is the first position of the set above i (i = -1: the first); false
// when none is.
func (f *fenwick) next(i int) (int, bool) {
	return f.kth(f.before(i + 1))
}
