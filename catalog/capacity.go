package catalog

import (
	"cmp"
	"math"
	"slices"
	"strings"
)

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

// Times scales each share by the other's: shares of one GPU expressed in
// another's, given how much of the other the first GPU's whole is.
func (sh Shares) Times(by Shares) Shares {
	return Shares{SM: sh.SM * by.SM, Bandwidth: sh.Bandwidth * by.Bandwidth}
}

// Relative is the whole of GPU model from as shares of the whole of model
// to: its SMs times their clock and their FP32 cores (Hopper's SM does
// twice an Ampere SM's work per clock), and its memory bandwidth. An H100
// is 3.4 A100s in SM throughput and 1.6 A100 80GBs in bandwidth, so a job
// emulated on an H100 slice of 16 SMs ran with 42% of an A100's SM
// throughput, three times a 1g.10gb's. False when either model lacks the
// figures.
func Relative(from, to *GPUModel) (Shares, bool) {
	if from == nil || to == nil {
		return Shares{}, false
	}
	if from.Name == to.Name {
		return Shares{SM: 1, Bandwidth: 1}, true
	}
	a, b := from.smThroughput(), to.smThroughput()
	if a <= 0 || b <= 0 || from.BandwidthGBs <= 0 || to.BandwidthGBs <= 0 {
		return Shares{}, false
	}
	return Shares{SM: a / b, Bandwidth: from.BandwidthGBs / to.BandwidthGBs}, true
}

func (m *GPUModel) smThroughput() float64 {
	return float64(m.SMs) * float64(m.ClockMHz) * float64(m.CoresPerSM)
}

// ProfilesBySize lists the site's profiles from the smallest: least usable
// memory, then least capacity.
func (s *Site) ProfilesBySize() []*Profile {
	var ps []*Profile
	for i := range s.Profiles {
		ps = append(ps, &s.Profiles[i])
	}
	slices.SortStableFunc(ps, func(x, y *Profile) int {
		if c := cmp.Compare(x.UsableMemory.MiB(), y.UsableMemory.MiB()); c != 0 {
			return c
		}
		return cmp.Compare(s.Capacity(x), s.Capacity(y))
	})
	return ps
}

// ProfileWords is a profile as a sentence names it: "a full A100" for a
// whole GPU, the slice's name ("1g.10gb") otherwise.
func (s *Site) ProfileWords(name string) string {
	if p, ok := s.Profile(name); ok && !p.IsMIG() {
		model, _, _ := strings.Cut(s.GPUModel, "-")
		if model == "" {
			model = "GPU"
		}
		return "a full " + model
	}
	return name
}
