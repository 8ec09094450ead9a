package main

import "testing"

func TestJobsNamedUpTo(t *testing.T) {
	ids := []string{"1", "2", "3", "4"}
	for n, want := range map[int]string{4: "jobs 1, 2, 3, 4", 10: "jobs 1, 2, 3, 4", 2: "jobs 1, 2 and 2 more"} {
		if got := jobsNamedUpTo(ids, n); got != want {
			t.Errorf("up to %d: %q, want %q", n, got, want)
		}
	}
}
