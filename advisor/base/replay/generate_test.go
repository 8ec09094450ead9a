package replay

import (
	"math/rand/v2"
	"slices"
	"testing"
)

// wholeGPU is the generated queues' profile of a whole GPU, the only one
// whose jobs ask several at once (MIG slices cannot be pooled by one
// process).
const wholeGPU = "7g.80gb"

// generate draws n jobs for slots, offered at load times what the slots
// can run: each profile drawn in proportion to its slots over the GPUs its
// jobs ask on average; time limits from one hour to two days, most short;
// runtimes a share of the limit, one in seven reaching it; submissions
// spread uniformly over the period that load fills.
func generate(rng *rand.Rand, n int, slots Slots, load float64) []Job {
	profiles := make([]string, 0, len(slots))
	for p := range slots {
		profiles = append(profiles, p)
	}
	slices.Sort(profiles)
	weights, total := make([]float64, len(profiles)), 0
	for i, p := range profiles {
		weights[i] = float64(slots[p])
		if p == wholeGPU {
			weights[i] /= 1.36 // 1, 2 or 4 GPUs: 0.80 + 2×0.12 + 4×0.08
		}
		total += slots[p]
	}
	limits := []int64{3600, 3600, 2 * 3600, 4 * 3600, 4 * 3600, 8 * 3600, 24 * 3600, 48 * 3600}
	jobs := make([]Job, n)
	var work float64
	for i := range jobs {
		j := &jobs[i]
		j.Profile = profiles[pick(rng, weights)]
		j.Count = 1
		if j.Profile == wholeGPU {
			switch x := rng.Float64(); {
			case x < 0.08:
				j.Count = 4
			case x < 0.20:
				j.Count = 2
			}
		}
		j.LimitS = limits[rng.IntN(len(limits))]
		j.RuntimeS = j.LimitS
		if rng.IntN(7) > 0 {
			j.RuntimeS = int64(float64(j.LimitS) * (0.05 + 0.95*rng.Float64()))
		}
		work += float64(j.Count) * float64(j.RuntimeS)
	}
	period := work / (float64(total) * load)
	submits := make([]int64, n)
	for i := range submits {
		submits[i] = int64(rng.Float64() * period)
	}
	slices.Sort(submits)
	for i := range jobs {
		jobs[i].ID, jobs[i].Submit = int64(i+1), submits[i]
	}
	return jobs
}

func pick(rng *rand.Rand, weights []float64) int {
	var sum float64
	for _, w := range weights {
		sum += w
	}
	x := rng.Float64() * sum
	for i, w := range weights {
		if x -= w; x < 0 {
			return i
		}
	}
	return len(weights) - 1
}

// On a generated queue, no instant runs more slots of a profile than the
// layout has, no job starts before its submission, and every job the
// layout can hold runs.
func TestGeneratedQueueKeepsTheSlots(t *testing.T) {
	slots := Slots{}.Add(3, "3g.40gb", "2g.20gb", "1g.10gb", "1g.10gb").Add(4, wholeGPU)
	jobs := generate(rand.New(rand.NewPCG(1, 2)), 3000, slots, 0.9)
	for _, opt := range []Options{{}, {MaxJobTest: 5, WindowS: 3600}, {MaxJobTest: -1, WindowS: -1}} {
		r := replay(t, slots, jobs, opt)
		type change struct {
			at      int64
			profile string
			slots   int
		}
		var changes []change
		for i, p := range r.Jobs {
			j := jobs[i]
			if !p.Placed || p.Start < j.Submit {
				t.Fatalf("%+v: job %+v: %+v", opt, j, p)
			}
			changes = append(changes, change{p.Start, j.Profile, j.Count}, change{p.End, j.Profile, -j.Count})
		}
		// Ends before starts at one instant: a slot freed is free.
		slices.SortFunc(changes, func(a, b change) int {
			if a.at != b.at {
				return int(a.at - b.at)
			}
			return a.slots - b.slots
		})
		used := map[string]int{}
		for _, c := range changes {
			if used[c.profile] += c.slots; used[c.profile] > slots[c.profile] {
				t.Fatalf("%+v: %d × %s in use at %d", opt, used[c.profile], c.profile, c.at)
			}
		}
	}
}
