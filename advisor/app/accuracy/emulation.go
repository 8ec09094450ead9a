package accuracy

import (
	"bufio"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"

	"github.com/migadvisor/migadvisor/advisor/base/runmodel"
	"github.com/migadvisor/migadvisor/catalog"
	"github.com/migadvisor/migadvisor/slurm"
)

// An emulation ('migadvisor emulate') times a job on each profile of a
// site on one whole GPU: how close are the ratios between its profiles to
// those of the real slices? Each emulated time is taken two ways: as it ran
// (plain), and scaled by the runtime model from the shares the slice was
// measured to have (its SMs at its clock, its copy bandwidth) to the real
// slice's (corrected), as recommend does.

// EmulatedCase is one workload's emulation: its time per unit of work on
// each profile, at the shares each run was measured to have (the profile's
// own where it was not measured).
type EmulatedCase struct {
	Name   string
	Points []runmodel.Point
	// Utilization and MemUtilization are the mean GPU and memory
	// utilization over the runs' monitor summaries (percent; -1 unknown):
	// which resource the job waits on.
	Utilization, MemUtilization float64
}

// ReadEmulation reads the emulation in dir (its record and each run's
// output) as a case: each run's time per unit of work is 1 / the last
// number rate captures from its output (a rate, work per second). A run
// that did not complete or printed no rate is left out.
func ReadEmulation(site *catalog.Site, name, dir string, rate *regexp.Regexp) (EmulatedCase, error) {
	path := filepath.Join(dir, slurm.EmulationRecordName)
	data, err := os.ReadFile(path)
	if err != nil {
		return EmulatedCase{}, err
	}
	rec, err := slurm.ParseEmulationRecord(path, data)
	if err != nil {
		return EmulatedCase{}, err
	}
	c := EmulatedCase{Name: name, Utilization: -1, MemUtilization: -1}
	var util, mem float64
	for _, run := range rec.Runs {
		p, ok := site.Profile(run.Profile)
		if !ok || run.Outcome != slurm.EmulatedCompleted {
			continue
		}
		r, err := lastRate(filepath.Join(dir, run.Output), rate)
		if err != nil {
			return c, err
		}
		if r <= 0 {
			continue
		}
		point := runmodel.Point{Profile: run.Profile, Shares: ranAt(site, rec, run, p), Seconds: 1 / r, Emulated: true}
		if u, m, ok := utilizationOf(filepath.Join(dir, run.Summary)); ok {
			util, mem = util+u, mem+m
			point.Busy = busyPerUnit(filepath.Join(dir, run.Output), u, run.Seconds)
		}
		c.Points = append(c.Points, point)
	}
	if util > 0 {
		c.Utilization, c.MemUtilization = util, mem // their ratio is what tells
	}
	return c, nil
}

// ranAt is the shares of the site's GPU an emulated run had: as measured
// (its SMs at its clock, its copy bandwidth), else its profile's, on the
// GPU that ran it, taken to the site's GPU.
func ranAt(site *catalog.Site, rec *slurm.EmulationRecord, run slurm.EmulatedRun, p *catalog.Profile) catalog.Shares {
	at := site.Shares(p)
	if sm, bw, ok := rec.RanAt(run, catalog.RatedClockMHz(rec.GPU)); ok {
		at = catalog.Shares{SM: sm, Bandwidth: bw}
	}
	at, _ = runmodel.OnSiteGPU(site, rec.GPU, at)
	return at
}

// ReadEmulations reads repeated emulations of one workload (ReadEmulation
// on each directory) as one case: per profile, the median time per unit of
// work and the median of the shares its slices were measured to have, as
// recommend takes the median of a profile's runs. A job whose time is
// mostly CPU time varies by a fifth from one emulation to the next on the
// same GPU, more than the slices' differences.
func ReadEmulations(site *catalog.Site, name string, rate *regexp.Regexp, dirs ...string) (EmulatedCase, error) {
	all := EmulatedCase{Name: name, Utilization: -1, MemUtilization: -1}
	byProfile := map[string][]runmodel.Point{}
	var order []string
	for _, dir := range dirs {
		c, err := ReadEmulation(site, name, dir, rate)
		if err != nil {
			return all, err
		}
		for _, p := range c.Points {
			if _, ok := byProfile[p.Profile]; !ok {
				order = append(order, p.Profile)
			}
			byProfile[p.Profile] = append(byProfile[p.Profile], p)
		}
		if c.Utilization > 0 {
			all.Utilization, all.MemUtilization = max(all.Utilization, 0)+c.Utilization, max(all.MemUtilization, 0)+c.MemUtilization
		}
	}
	for _, profile := range order {
		points := byProfile[profile]
		pick := func(f func(runmodel.Point) float64) float64 {
			v := make([]float64, len(points))
			for i, p := range points {
				v[i] = f(p)
			}
			slices.Sort(v)
			if n := len(v); n%2 == 0 {
				return (v[n/2-1] + v[n/2]) / 2
			}
			return v[len(v)/2]
		}
		seconds, busy := pick(func(p runmodel.Point) float64 { return p.Seconds }), 0.0
		if !slices.ContainsFunc(points, func(p runmodel.Point) bool { return p.Busy <= 0 }) {
			// The median share of the time busy, of the median time: the
			// two medians of different emulations would not pair.
			busy = seconds * pick(func(p runmodel.Point) float64 { return p.Busy / p.Seconds })
		}
		all.Points = append(all.Points, runmodel.Point{Profile: profile, Seconds: seconds,
			Shares: catalog.Shares{SM: pick(func(p runmodel.Point) float64 { return p.Shares.SM }),
				Bandwidth: pick(func(p runmodel.Point) float64 { return p.Shares.Bandwidth })}, Busy: busy, Emulated: true})
	}
	return all, nil
}

// busyPerUnit is the time the GPU was busy in a run per unit of the work
// its output reports (MIGADVISOR_WORK): its mean utilization (%) times its
// time, over the work; 0 (unknown, and the rate's times are explained
// alone) for a run that reports no work. The rate times only the work (a
// training loop), the utilization covers the whole run: this counts all of
// the run's GPU time as the work's, which holds for a job that runs no
// kernel of note outside it (vision_train.py: a 2,000-image test pass
// beside 50,000 images trained) and overstates the busy share otherwise.
func busyPerUnit(output string, utilization, seconds float64) float64 {
	ev, err := slurm.ScanFile(output, slurm.ScanOptions{})
	if err != nil || ev.Work <= 0 || seconds <= 0 {
		return 0
	}
	return utilization / 100 * seconds / ev.Work
}

// utilizationOf is the GPU and memory utilization in a monitor summary.
func utilizationOf(path string) (util, mem float64, ok bool) {
	d, ok := slurm.FirstMonitorDevice(path)
	if !ok || d.UtilGPUMean == nil || d.UtilMemMean == nil {
		return 0, 0, false
	}
	return *d.UtilGPUMean, *d.UtilMemMean, true
}

// lastRate is the last number rate captures in the file, 0 if none; a
// missing file has none.
func lastRate(path string, rate *regexp.Regexp) (float64, error) {
	f, err := os.Open(path)
	if os.IsNotExist(err) {
		return 0, nil
	}
	if err != nil {
		return 0, err
	}
	defer f.Close()
	v := 0.0
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		if m := rate.FindStringSubmatch(sc.Text()); m != nil {
			if x, err := strconv.ParseFloat(m[1], 64); err == nil {
				v = x
			}
		}
	}
	return v, sc.Err()
}

// Ratio is one profile's time over the reference profile's: published (on
// the real slices), emulated as it ran, and emulated and corrected.
type Ratio struct {
	Workload, Profile, Against  string
	Published, Plain, Corrected float64
	Why                         string // the explanation the correction rests on
}

// PlainError and CorrectedError are each ratio's error against the
// published one, as a fraction (+0.1: 10% too slow).
func (r Ratio) PlainError() float64     { return r.Plain/r.Published - 1 }
func (r Ratio) CorrectedError() float64 { return r.Corrected/r.Published - 1 }

// CompareEmulation is the ratios of each profile that the emulation and
// the published case both have to the largest profile they share. The
// correction learns nothing from the published case: the site's other
// reference benchmarks may settle a two-profile explanation, its own not.
func CompareEmulation(site *catalog.Site, emulated EmulatedCase, published Case) []Ratio {
	pub := map[string]float64{}
	for _, p := range published.Points {
		pub[p.Profile] = p.Seconds
	}
	var shared []runmodel.Point
	for _, p := range emulated.Points {
		if _, ok := pub[p.Profile]; ok {
			shared = append(shared, p)
		}
	}
	if len(shared) < 2 {
		return nil
	}
	ref := shared[0]
	for _, p := range shared {
		if q, _ := site.Profile(p.Profile); site.Capacity(q) > capacityOf(site, ref.Profile) {
			ref = p
		}
	}
	bound := runmodel.BoundBy(emulated.Utilization, emulated.MemUtilization)
	refs := runmodel.ReferencesOf(site, published.benchmark())
	fit, ok := runmodel.ExplainEmulated(bound, emulated.Points, refs)
	if !ok {
		fit = runmodel.PriorScaling(refs, -1, -1, emulated.Points)
	}
	at := func(profile string) float64 {
		p, _ := site.Profile(profile)
		s, _, _, _ := fit.Predict(emulated.Points, site.Shares(p))
		return s
	}
	var out []Ratio
	for _, p := range shared {
		if p.Profile == ref.Profile {
			continue
		}
		out = append(out, Ratio{Workload: emulated.Name, Profile: p.Profile, Against: ref.Profile,
			Published: pub[p.Profile] / pub[ref.Profile], Plain: p.Seconds / ref.Seconds,
			Corrected: at(p.Profile) / at(ref.Profile), Why: fit.Form()})
	}
	return out
}

func capacityOf(site *catalog.Site, profile string) float64 {
	p, _ := site.Profile(profile)
	return site.Capacity(p)
}
