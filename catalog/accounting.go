package catalog

import (
	"math"
	"strconv"
	"strings"
	"sync"
)

// Accounting names one slice many ways. Slurm's AutoDetect=nvml types a
// MIG device <product>_<slices>g.<GiB>gb, the product name as NVML gives it
// lower-cased, spaces made underscores and cut at its first dash
// (nvidia_a100_3g.39gb: the memory is NVML's size rounded to whole GiB, so
// drivers 535/545 write 3g.39gb where others wrote 3g.40gb), and a whole
// GPU by its product name (nvidia_a100-sxm4-80gb); hand-written gres.conf
// files use what their admins chose (a100_10g, a100_1g.10gb, 1g.10gb).
// A profile is found for all of them: the site file's own names first
// (request and gres_types), then the profile's name, then the names the
// built-in GPU model derives for its slice.

// Ranks of the names a profile answers to in accounting, the strongest
// first. A name two profiles claim goes to the stronger claim; at the same
// rank, to the first profile in the site file that claims it when both
// have the same slice (the same slice on two partitions, say), and to
// neither when their slices differ: guessing between two slices would
// misprice the job, so it is reported as a type the site does not name.
const (
	rankSite       = iota // the request's type and gres_types: the site file's own (unique, checked on load)
	rankName              // the profile's name and slice as written: 1g.10gb, full
	rankDerived           // NVIDIA's name of the slice on the model: a100_1g.10gb, nvidia_a100-sxm4-80gb
	rankSpelling          // other spellings of it: the memory rounded (3g.39gb), a +me slice without +me
	rankWholeSlice        // a whole GPU's MIG slice of all its compute (7g.80gb), for a site with no profile of it
	rankMemory            // the memory alone, as Wulver writes it: a100_10g, a100_80gb
)

// accountingIndex maps accounting keys (AccountingKey) to profiles. It is
// built on first use: the sbatch wrapper reads the site on every
// submission and never looks a job up in accounting.
type accountingIndex struct {
	once  sync.Once
	names map[string]accountingClaim
}

type accountingClaim struct {
	profile   int // index in Site.Profiles
	rank      int
	ambiguous bool // claimed at the same rank by profiles of different slices
}

// AccountingKey is a GPU type as accounting names are compared: lower
// case, spaces and dashes as underscores, without a leading "nvidia_".
// nvidia_a100-sxm4-80gb, A100-SXM4-80GB and a100_sxm4_80gb are one name.
func AccountingKey(gpuType string) string {
	k := strings.ToLower(strings.TrimSpace(gpuType))
	k = strings.Map(func(r rune) rune {
		if r == ' ' || r == '-' {
			return '_'
		}
		return r
	}, k)
	return strings.TrimPrefix(k, "nvidia_")
}

// ProfileForAccounting maps a GPU type as accounting records it (AllocTRES
// gres/gpu:TYPE=N) to a profile: by the site file's names for it, its
// profile name, or the names NVIDIA and Slurm give its slice on the site's
// GPU model, case aside. "" is an untyped GPU, which gets untyped_gpu.
func (s *Site) ProfileForAccounting(gpuType string) (*Profile, bool) {
	if strings.TrimSpace(gpuType) == "" {
		return s.ProfileForType("")
	}
	if p, ok := s.ProfileForType(gpuType); ok {
		return p, true
	}
	c, ok := s.accountingNames()[AccountingKey(gpuType)]
	if !ok || c.ambiguous {
		return nil, false
	}
	return &s.Profiles[c.profile], true
}

// accountingNames is the site's index, built once (a Site made without
// Parse or Builtin builds it on every call).
func (s *Site) accountingNames() map[string]accountingClaim {
	if s.acct == nil {
		return s.buildAccountingNames()
	}
	s.acct.once.Do(func() { s.acct.names = s.buildAccountingNames() })
	return s.acct.names
}

func (s *Site) buildAccountingNames() map[string]accountingClaim {
	names := map[string]accountingClaim{}
	add := func(name string, profile, rank int) {
		k := AccountingKey(name)
		if k == "" {
			return
		}
		c, ok := names[k]
		switch {
		case !ok || rank < c.rank:
			names[k] = accountingClaim{profile: profile, rank: rank}
		case rank > c.rank || c.profile == profile:
		case s.Profiles[c.profile].Slice != s.Profiles[profile].Slice:
			c.ambiguous = true
			names[k] = c
		}
	}
	stems := s.modelStems()
	for i := range s.Profiles {
		p := &s.Profiles[i]
		add(p.GRESType, i, rankSite)
		for _, t := range p.GRESTypes {
			add(t, i, rankSite)
		}
		add(p.Name, i, rankName)
		add(p.Slice, i, rankName)
		if p.IsMIG() {
			for _, sp := range s.sliceSpellings(p) {
				add(sp.name, i, sp.rank)
				for _, stem := range stems {
					add(stem+"_"+sp.name, i, sp.rank)
				}
			}
			if gb, ok := NominalGB(p.Slice); ok {
				for _, stem := range stems {
					add(stem+"_"+formatGB(gb)+"g", i, rankMemory)
					add(stem+"_"+formatGB(gb)+"gb", i, rankMemory)
				}
			}
			continue
		}
		for _, n := range s.modelNames() {
			for _, stem := range productStems(n) {
				add(stem, i, rankDerived)
			}
		}
		if m := s.model; m != nil {
			// A MIG slice of all the GPU's compute is the whole GPU to
			// a site that names no profile for it.
			for j := range m.Profiles {
				mp := &m.Profiles[j]
				if mp.ComputeSlices != m.ComputeSlices {
					continue
				}
				for _, sp := range migSpellings(mp.Name, mp.Memory.GiB()) {
					add(sp.name, i, rankWholeSlice)
					for _, stem := range stems {
						add(stem+"_"+sp.name, i, rankWholeSlice)
					}
				}
			}
			for _, stem := range stems {
				add(stem+"_"+formatGB(m.Memory.GiB())+"g", i, rankMemory)
				add(stem+"_"+formatGB(m.Memory.GiB())+"gb", i, rankMemory)
			}
		}
	}
	return names
}

// modelNames are the names of the site's GPU model: gpu_model as the site
// writes it, and the built-in model's name and aliases.
func (s *Site) modelNames() []string {
	names := []string{s.GPUModel}
	if m := s.model; m != nil {
		names = append(names, m.Name)
		names = append(names, m.Aliases...)
	}
	return names
}

// modelStems are the prefixes of the model's MIG types: each name of the
// model cut at its first dash, as Slurm cuts it (a100 of A100-SXM4-80GB,
// a100_80gb_pcie of "A100 80GB PCIe"), whole, and its family (a100), each
// once.
func (s *Site) modelStems() []string {
	var stems []string
	seen := map[string]bool{}
	for _, n := range s.modelNames() {
		for _, stem := range productStems(n) {
			if k := AccountingKey(stem); k != "" && !seen[k] {
				seen[k] = true
				stems = append(stems, k)
			}
		}
	}
	return stems
}

// productStems are the names a GPU's product name is written by: whole
// (a100-sxm4-80gb), cut at its first dash as Slurm cuts it for a MIG type
// (a100), and its family, the leading letters and digits (a100); NVIDIA's
// prefix aside, lower case.
func productStems(name string) []string {
	n := strings.ToLower(strings.TrimSpace(name))
	for _, p := range []string{"nvidia ", "nvidia_", "nvidia-"} {
		n = strings.TrimPrefix(n, p)
	}
	if n == "" {
		return nil
	}
	stems := []string{n}
	if cut, _, ok := strings.Cut(n, "-"); ok && cut != "" {
		stems = append(stems, cut)
	}
	end := strings.IndexFunc(n, func(r rune) bool { return !(r >= 'a' && r <= 'z' || r >= '0' && r <= '9') })
	if end > 0 {
		stems = append(stems, n[:end])
	}
	return stems
}

type spelling struct {
	name string
	rank int
}

// sliceSpellings are the names of a MIG profile's slice with every
// memory figure the site and the model give it.
func (s *Site) sliceSpellings(p *Profile) []spelling {
	mems := []float64{p.UsableMemory.GiB()}
	if s.model != nil {
		if mp, ok := s.model.MIGProfile(p.Slice); ok {
			mems = append(mems, mp.Memory.GiB())
		}
	}
	return migSpellings(p.Slice, mems...)
}

// migSpellings are the names of a MIG slice (3g.40gb, 1g.10gb+me): as
// NVIDIA names it, then with each memory figure in whole GiB, rounded as
// Slurm rounds NVML's size, and down and up (3g.39gb, 3g.40gb), and, for a
// slice with media extensions, the same without them (NVML gives both one
// size). A name that is not NVIDIA's form is itself alone.
func migSpellings(slice string, memGiB ...float64) []spelling {
	out := []spelling{{slice, rankDerived}}
	base, ext, _ := strings.Cut(slice, "+")
	g, _, ok := strings.Cut(base, ".")
	if !ok || !strings.HasSuffix(g, "g") {
		return out
	}
	rank := rankSpelling
	if ext != "" {
		out = append(out, spelling{base, rankSpelling})
	}
	for _, m := range memGiB {
		if m <= 0 {
			continue
		}
		for _, gb := range []float64{math.Round(m), math.Floor(m), math.Ceil(m)} {
			if gb > 0 {
				out = append(out, spelling{g + "." + formatGB(gb) + "gb", rank})
			}
		}
	}
	return out
}

func formatGB(gb float64) string { return strconv.FormatFloat(math.Round(gb*100)/100, 'f', -1, 64) }
