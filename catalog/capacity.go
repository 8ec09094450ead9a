package catalog

import "math"

// Resource is what a job's time is taken to scale with on a profile: its
// share of the GPU's SMs, of its memory bandwidth, or the geometric mean of
// the two. A MIG slice's shares differ (on an A100, 2g.20gb has 2/7 of
// MIG mode's SMs but 1/4 of the bandwidth; 3g.40gb 3/7 and 1/2; 4g.40gb 4/7
// and still 1/2), so which one a job is bound by decides how it scales.
type Resource int

const (
	Mixed Resource = iota // both: the geometric mean of the two shares
	SMs
	Bandwidth
)

// Resources are all of them, the default first.
var Resources = []Resource{Mixed, SMs, Bandwidth}

func (r Resource) String() string {
	switch r {
	case SMs:
		return "SMs"
	case Bandwidth:
		return "memory bandwidth"
	}
	return "SMs and bandwidth"
}

// Shares is a profile's share of a whole GPU: of its SMs (the whole GPU
// outside MIG mode counts them all, so an A100's 7g slice has 98/108) and of
// its memory bandwidth (memory slices over the model's).
type Shares struct{ SM, Bandwidth float64 }

// Of is the share of one resource.
func (sh Shares) Of(r Resource) float64 {
	switch r {
	case SMs:
		return sh.SM
	case Bandwidth:
		return sh.Bandwidth
	}
	return math.Sqrt(sh.SM * sh.Bandwidth)
}

// Shares is the profile's share of the whole GPU's SMs and bandwidth. A
// profile with no SM count is taken at its bandwidth share.
func (s *Site) Shares(p *Profile) Shares {
	sm := p.BandwidthShare
	if full := s.fullSMs(); full > 0 && p.SMs > 0 {
		sm = math.Min(float64(p.SMs)/float64(full), 1)
	}
	return Shares{SM: sm, Bandwidth: p.BandwidthShare}
}

// Capacity is a profile's share of a whole GPU's throughput, in (0, 1], for
// a job bound by both resources: the geometric mean of its SM and bandwidth
// shares. It orders profiles by size.
func (s *Site) Capacity(p *Profile) float64 { return s.Shares(p).Of(Mixed) }

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
