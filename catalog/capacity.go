package catalog

import "math"

// Capacity is a profile's share of a whole GPU's throughput, in (0, 1]: the
// geometric mean of its share of the SMs and of the memory bandwidth. A MIG
// slice's compute and bandwidth shares differ (1g.10gb on an A100 has 14 of
// 108 SMs but 1/8 of the bandwidth), and real jobs are limited by some mix of
// the two; on the Wulver tables the geometric mean predicts runtimes better
// than either share alone.
func (s *Site) Capacity(p *Profile) float64 {
	full := s.fullSMs()
	if full <= 0 || p.SMs <= 0 {
		return p.BandwidthShare
	}
	return math.Sqrt(math.Min(float64(p.SMs)/float64(full), 1) * p.BandwidthShare)
}

// fullSMs is the SM count of the site's whole GPU: the model's, else the
// largest profile's.
func (s *Site) fullSMs() int {
	if m, ok := s.Model(); ok && m.SMs > 0 {
		return m.SMs
	}
	n := 0
	for _, p := range s.Profiles {
		n = max(n, p.SMs)
	}
	return n
}
