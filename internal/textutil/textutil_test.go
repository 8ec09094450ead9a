package textutil

import "testing"

func TestPlural(t *testing.T) {
	for n, want := range map[int]string{0: "0 runs", 1: "1 run", 2: "2 runs", -1: "-1 runs"} {
		if got := Plural(n, "run"); got != want {
			t.Errorf("Plural(%d) = %q, want %q", n, got, want)
		}
	}
}

func TestJoinAnd(t *testing.T) {
	for _, tc := range []struct {
		words []string
		want  string
	}{
		{nil, ""},
		{[]string{"a"}, "a"},
		{[]string{"a", "b"}, "a and b"},
		{[]string{"a", "b", "c"}, "a, b and c"},
	} {
		if got := JoinAnd(tc.words); got != tc.want {
			t.Errorf("JoinAnd(%q) = %q, want %q", tc.words, got, tc.want)
		}
	}
}

func TestJobsNamed(t *testing.T) {
	for _, c := range []struct {
		ids  []string
		upTo int
		want string
	}{
		{[]string{"7"}, 0, "job 7"},
		{[]string{"7"}, 1, "job 7"},
		{[]string{"1", "2"}, 0, "jobs 1, 2"},
		{[]string{"1", "2", "3", "4"}, 10, "jobs 1, 2, 3, 4"},
		{[]string{"1", "2", "3", "4"}, 2, "jobs 1, 2 and 2 more"},
	} {
		if got := JobsNamed(c.ids, c.upTo); got != c.want {
			t.Errorf("JobsNamed(%v, %d) = %q, want %q", c.ids, c.upTo, got, c.want)
		}
	}
}

func TestNumber(t *testing.T) {
	for x, want := range map[float64]string{3: "3", 2.5: "2.5", 1.0 / 3: "0.333", 1234.5678: "1.23e+03", 0: "0"} {
		if got := Number(x); got != want {
			t.Errorf("Number(%v) = %q, want %q", x, got, want)
		}
	}
}
