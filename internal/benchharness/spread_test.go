package benchharness

import "testing"

func TestSpreadOf(t *testing.T) {
	hundred := make([]float64, 100)
	for i := range hundred {
		hundred[i] = float64(100 - i) // 100 down to 1: sorted by SpreadOf
	}
	for _, c := range []struct {
		name string
		xs   []float64
		want Spread
	}{
		{"empty", nil, Spread{}},
		{"one", []float64{3}, Spread{N: 1, Min: 3, Median: 3, P95: 3, P99: 3, Max: 3}},
		{"even: the lower middle", []float64{4, 1, 3, 2}, Spread{N: 4, Min: 1, Median: 2, P95: 4, P99: 4, Max: 4}},
		{"odd", []float64{5, 1, 4, 2, 3}, Spread{N: 5, Min: 1, Median: 3, P95: 5, P99: 5, Max: 5}},
		{"a hundred: nearest rank", hundred, Spread{N: 100, Min: 1, Median: 50, P95: 95, P99: 99, Max: 100}},
	} {
		if got := SpreadOf(c.xs); got != c.want {
			t.Errorf("%s: SpreadOf = %+v, want %+v", c.name, got, c.want)
		}
	}
}
