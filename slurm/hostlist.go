package slurm

import (
	"fmt"
	"strconv"
	"strings"
)

// maxHosts bounds a hostlist's expansion: a typo such as n[1-99999999]
// must not fill the memory.
const maxHosts = 1 << 16

// ExpandHostlist is the host names of a Slurm hostlist as scontrol show
// hostnames gives them: "n[0101-0103,0105]" is n0101, n0102, n0103,
// n0105 (the numbers keep the width the range gives them), "a[1-2]b[1-2]"
// a1b1, a1b2, a2b1, a2b2, "gpu01,gpu02" both; a name with no brackets is
// itself. An unbalanced bracket, a range that runs backwards or is not a
// number, or more than 65,536 hosts is an error.
func ExpandHostlist(list string) ([]string, error) {
	var out []string
	for _, part := range splitHostlist(list) {
		hosts, err := expandHost(part)
		if err != nil {
			return nil, fmt.Errorf("hostlist %q: %w", list, err)
		}
		out = append(out, hosts...)
		if len(out) > maxHosts {
			return nil, fmt.Errorf("hostlist %q: more than %d hosts", list, maxHosts)
		}
	}
	return out, nil
}

// splitHostlist splits a hostlist at the commas outside brackets.
func splitHostlist(list string) []string {
	var parts []string
	depth, start := 0, 0
	for i, c := range list {
		switch c {
		case '[':
			depth++
		case ']':
			depth--
		case ',':
			if depth == 0 {
				parts = append(parts, list[start:i])
				start = i + 1
			}
		}
	}
	return append(parts, list[start:])
}

// expandHost expands one host expression's bracket groups, left to right.
func expandHost(host string) ([]string, error) {
	open := strings.IndexByte(host, '[')
	if open < 0 {
		if strings.ContainsRune(host, ']') || host == "" {
			return nil, fmt.Errorf("%q is no host name", host)
		}
		return []string{host}, nil
	}
	end := strings.IndexByte(host[open:], ']')
	if end < 0 {
		return nil, fmt.Errorf("%q has no closing bracket", host)
	}
	prefix, ranges, rest := host[:open], host[open+1:open+end], host[open+end+1:]
	tails, err := expandHost(rest + "x") // "x": a name of its own, removed below
	if err != nil {
		return nil, err
	}
	var out []string
	for _, r := range strings.Split(ranges, ",") {
		nums, err := expandRange(r)
		if err != nil {
			return nil, err
		}
		for _, n := range nums {
			for _, t := range tails {
				out = append(out, prefix+n+t[:len(t)-1])
				if len(out) > maxHosts {
					return nil, fmt.Errorf("more than %d hosts", maxHosts)
				}
			}
		}
	}
	return out, nil
}

// expandRange is "0101-0103" as 0101, 0102, 0103, or "7" as itself.
func expandRange(r string) ([]string, error) {
	lo, hi, isRange := strings.Cut(r, "-")
	a, err := strconv.Atoi(lo)
	if err != nil || a < 0 {
		return nil, fmt.Errorf("%q is no number", lo)
	}
	if !isRange {
		return []string{lo}, nil
	}
	b, err := strconv.Atoi(hi)
	if err != nil || b < a {
		return nil, fmt.Errorf("range %q runs from %s to %q", r, lo, hi)
	}
	if b-a >= maxHosts {
		return nil, fmt.Errorf("range %q: more than %d hosts", r, maxHosts)
	}
	out := make([]string, 0, b-a+1)
	for n := a; n <= b; n++ {
		out = append(out, fmt.Sprintf("%0*d", len(lo), n))
	}
	return out, nil
}
