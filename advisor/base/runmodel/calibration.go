package runmodel

import (
	_ "embed"
	"encoding/json"
	"fmt"
	"math"
	"slices"
	"sync"

	"github.com/migadvisor/migadvisor/catalog"
)

// A prediction's range is calibrated, not guessed: the built-in reference
// benchmarks are predicted profile by profile from their other profiles
// (from all but one, from each pair, from each single profile), exactly as
// recommend predicts a job, and the range for a prediction is the spread of
// those errors in the same situation — from one profile (a prior) or more
// (a fit), and the target inside the measured ones or beyond them on either
// side. Going
// beyond is where models fail: a job whose slices scale with the SMs may
// gain nothing on the whole GPU (Wulver's GROMACS: 3g.40gb to full is 2.6×
// the SMs and 1.03× as fast), and the range says so.

// RunNoise is the least a range spans either side: runs of one job on one
// profile differ by a few percent.
const RunNoise = 0.03

// coverage is the share of held-out times a range is built to hold.
const coverage = 0.9

// direction is where a target lies against the measured profiles.
type direction int

const (
	inside direction = iota
	above            // bigger than any measured profile
	below            // smaller than any measured profile
)

// cell is a kind of prediction: where its target lies, and whether it
// rests on one profile, where how the job scales is a prior's guess.
type cell struct {
	dir    direction
	single bool
}

// situation is a prediction's cell and how far (in log share) from the
// measured profile it is scaled.
type situation struct {
	cell
	distance float64
}

func situationOf(s Scaling, points []Point, to catalog.Shares) situation {
	lo, hi := math.Inf(1), 0.0
	for _, p := range points {
		lo, hi = math.Min(lo, p.Shares.Of(s.Resource)), math.Max(hi, p.Shares.Of(s.Resource))
	}
	// Distance on SMs and bandwidth alike: a profile the same in one
	// resource can still be far in the other.
	from := nearest(s.Resource, points, to)
	d := math.Max(math.Abs(math.Log(to.SM/from.Shares.SM)), math.Abs(math.Log(to.Bandwidth/from.Shares.Bandwidth)))
	single := len(points) == 1
	switch share := to.Of(s.Resource); {
	case share > hi*(1+1e-9):
		return situation{cell{above, single}, d}
	case share < lo*(1-1e-9):
		return situation{cell{below, single}, d}
	}
	return situation{cell{inside, single}, d}
}

// calibration holds the signed log errors, log(measured / predicted), of
// the reference trials per unit of distance, by cell, sorted: errors grow
// with how far a prediction is scaled.
type calibration map[cell][]float64

// band is a range in log units around a prediction.
type band struct{ lo, hi float64 }

func (c calibration) band(sit situation) band {
	errs := c[sit.cell]
	b := band{-RunNoise, RunNoise}
	if n := len(errs); n > 0 {
		// Split conformal ranks: with n errors, the ⌈(n+1)q⌉-th smallest
		// bounds a new one with probability q.
		tail := (1 - coverage) / 2
		hiRank := min(n, int(math.Ceil(float64(n+1)*(1-tail))))
		loRank := max(1, n+1-hiRank)
		b.lo, b.hi = math.Min(b.lo, errs[loRank-1]*sit.distance), math.Max(b.hi, errs[hiRank-1]*sit.distance)
	}
	return b
}

// The calibration on every built-in reference benchmark is the same for
// every run of this build, so it is computed when the model or the
// references change and embedded (calibration.json; TestBuiltinCalibration
// checks it and rewrites it with -update): advice at submission must not
// spend milliseconds recomputing it.
//
//go:embed calibration.json
var builtinCalibrationJSON []byte

var builtinCalibration = sync.OnceValue(func() calibration {
	c, err := decodeCalibration(builtinCalibrationJSON)
	if err != nil {
		panic("advisor/base/runmodel/calibration.json: " + err.Error())
	}
	return c
})

var (
	calibrationMu    sync.Mutex
	calibrationCache = map[string]calibration{}
)

// calibrationFor is the calibration on every built-in reference benchmark
// but the one named exclude.
func calibrationFor(exclude string) calibration {
	if !isReferenceBenchmark(exclude) {
		return builtinCalibration()
	}
	calibrationMu.Lock()
	defer calibrationMu.Unlock()
	if c, ok := calibrationCache[exclude]; ok {
		return c
	}
	c := computeCalibration(exclude)
	calibrationCache[exclude] = c
	return c
}

// isReferenceBenchmark reports whether a built-in reference set has a
// benchmark of that name: only its exclusion changes the calibration.
func isReferenceBenchmark(name string) bool {
	for _, set := range catalog.BuiltinReferences() {
		if _, ok := set.Benchmark(name); ok && name != "" {
			return true
		}
	}
	return false
}

// computeCalibration runs the reference trials, leaving one benchmark out
// ("": none).
func computeCalibration(exclude string) calibration {
	c := calibration{}
	for _, set := range catalog.BuiltinReferences() {
		site, err := catalog.Builtin(set.Site)
		if err != nil {
			continue
		}
		for i := range set.Benchmarks {
			if b := &set.Benchmarks[i]; b.IsPrior() && b.Name != exclude {
				c.add(ReferencesOf(site, exclude, b.Name), usable(BenchmarkPoints(site, b)))
			}
		}
	}
	for _, errs := range c {
		slices.Sort(errs)
	}
	return c
}

// The embedded form: errors by cell name.
func (k cell) String() string {
	where := [...]string{"inside", "above", "below"}[k.dir]
	if k.single {
		return where + ", one profile"
	}
	return where + ", fitted"
}

func encodeCalibration(c calibration) ([]byte, error) {
	named := map[string][]float64{}
	for k, errs := range c {
		named[k.String()] = errs
	}
	return json.MarshalIndent(map[string]any{"version": 1, "errors_per_unit_distance": named}, "", " ")
}

func decodeCalibration(data []byte) (calibration, error) {
	var file struct {
		Version int                  `json:"version"`
		Errors  map[string][]float64 `json:"errors_per_unit_distance"`
	}
	if err := json.Unmarshal(data, &file); err != nil {
		return nil, err
	}
	if file.Version != 1 {
		return nil, fmt.Errorf("version %d is not supported", file.Version)
	}
	c := calibration{}
	for _, dir := range []direction{inside, above, below} {
		for _, single := range []bool{false, true} {
			k := cell{dir, single}
			c[k] = file.Errors[k.String()]
		}
	}
	return c, nil
}

// add predicts each of a benchmark's profiles from every subset of the
// others that recommend may meet: all the others, each pair, each one.
func (c calibration) add(refs References, points []Point) {
	for i, target := range points {
		others := slices.Delete(slices.Clone(points), i, i+1)
		var subsets [][]Point
		if len(others) >= 3 {
			subsets = append(subsets, others)
		}
		for a := range others {
			subsets = append(subsets, []Point{others[a]})
			for b := a + 1; b < len(others); b++ {
				subsets = append(subsets, []Point{others[a], others[b]})
			}
		}
		for _, known := range subsets {
			s, ok := ExplainTimes(known, refs)
			if !ok {
				s = refs.Prior()
			}
			pred := s.at(known, target.Shares)
			sit := situationOf(s, known, target.Shares)
			if sit.distance > 0 {
				c[sit.cell] = append(c[sit.cell], math.Log(target.Seconds/pred)/sit.distance)
			}
		}
	}
}
