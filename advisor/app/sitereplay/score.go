package sitereplay

import (
	"cmp"
	"fmt"
	"io"
	"slices"

	"github.com/migadvisor/migadvisor/catalog"
	"github.com/migadvisor/migadvisor/internal/textutil"
)

// Score is what advice does on the month, by its truth.
type Score struct {
	Name  string
	Moved int // the month's jobs it moves to another profile
	// Saved: what the moved jobs that survive the move save, the truth's
	// SU where they ran less the truth's SU where the advice sends them
	// (negative where the move costs more).
	Saved float64
	// Killed: the moved jobs whose need does not fit where the advice
	// sends them; Wasted what they spend there before they die (half
	// their runtime there: an out-of-memory error comes anywhere in a run)
	// and that their rerun pays again.
	Killed int
	Wasted float64
	// Fixed: jobs that died of GPU out-of-memory where they ran, sent to a
	// profile they fit.
	Fixed int
}

// Net is what the advice saves less what its killed jobs waste.
func (s Score) Net() float64 { return s.Saved - s.Wasted }

// Possible is what the month allows: each job on the cheapest profile it
// fits, single-GPU jobs alone (a slice is one GPU).
type Possible struct {
	SU   float64 // the month's GPU jobs' SU, as they ran
	Save float64 // what the cheapest fitting profile of each job saves
	Jobs int     // the jobs that can save anything
}

// Scorer prices the month's jobs with the site's SU formula.
type Scorer struct {
	Site  *catalog.Site
	Month *Month
}

// su is the job's charge on profile p for its work's runtime there.
func (s Scorer) su(j *Job, p int, hours float64) (float64, error) {
	u := catalog.Usage{Profile: Profiles[p], GPUs: j.GPUs, CPUs: j.CPUs, MemMiB: float64(j.MemGB) * 1024, Hours: hours,
		Partition: "gpu", QoS: "standard"}
	job, err := s.Site.JobOf(u)
	if err != nil {
		return 0, err
	}
	ch, err := s.Site.Charge(job)
	return ch.SU, err
}

// suOf is the job's charge on profile p for the whole of its work there.
func (s Scorer) suOf(j *Job, p int) float64 {
	v, err := s.su(j, p, j.RuntimeS(p)/3600)
	if err != nil {
		panic(fmt.Sprintf("sitereplay: price job %d on %s: %v", j.ID, Profiles[p], err)) // the month's profiles are the site's
	}
	return v
}

// Score scores advice: the profile each job of the month should have
// asked for, by id (jobs it leaves out, or names their own profile for,
// stay).
func (s Scorer) Score(name string, advice map[int]string) Score {
	sc := Score{Name: name}
	for _, j := range s.Month.Jobs {
		to, ok := advice[j.ID]
		if !ok || !j.InPeriod || j.GPUs == 0 || to == j.Profile {
			continue
		}
		t := slices.Index(Profiles[:], to)
		if t < 0 {
			continue
		}
		sc.Moved++
		switch {
		case j.OOM && j.Fits(t):
			sc.Fixed++
		case !j.Fits(t):
			sc.Killed++
			w, _ := s.su(j, t, j.RuntimeS(t)/2/3600)
			sc.Wasted += w
		default:
			sc.Saved += s.suOf(j, j.ProfileIndex()) - s.suOf(j, t)
		}
	}
	return sc
}

// Allows is what each job of the month could save on the cheapest profile
// it fits, by id (jobs that can save nothing left out).
func (s Scorer) Allows() (map[int]float64, Possible) {
	out := map[int]float64{}
	var p Possible
	for _, j := range s.Month.Jobs {
		if !j.InPeriod || j.GPUs == 0 {
			continue
		}
		ran := j.ProfileIndex()
		here := s.suOf(j, ran)
		p.SU += here
		if j.GPUs != 1 || j.OOM {
			continue
		}
		best := here
		for k := range Profiles {
			if j.Fits(k) {
				best = min(best, s.suOf(j, k))
			}
		}
		if here-best > 1e-9 {
			out[j.ID] = here - best
			p.Save += here - best
			p.Jobs++
		}
	}
	return out, p
}

// Coverage is how much of what the month could still save beyond what the
// advice proves (each job's saving on the cheapest profile it fits, less
// what the advice's move saves it) lies in the scripts it lists to measure
// (by user and job name).
type Coverage struct {
	Rest, Covered float64
	Scripts       int
}

// Share is Covered over Rest; 1 when nothing is left.
func (c Coverage) Share() float64 {
	if c.Rest <= 0 {
		return 1
	}
	return c.Covered / c.Rest
}

// Cover scores a list of scripts to measure against the month's rest.
func (s Scorer) Cover(moved map[int]string, toMeasure []UserJob) Coverage {
	listed := map[UserJob]bool{}
	for _, u := range toMeasure {
		listed[u] = true
	}
	c := Coverage{Scripts: len(listed)}
	for j, left := range s.left(moved) {
		c.Rest += left
		if listed[UserJob{User: j.User, Name: j.Name}] {
			c.Covered += left
		}
	}
	return c
}

// left is what each job could still save beyond what the advice's move
// saves it (a move that costs more, or kills it, saves nothing); jobs with
// nothing left are left out.
func (s Scorer) left(moved map[int]string) map[*Job]float64 {
	allows, _ := s.Allows()
	out := map[*Job]float64{}
	for _, j := range s.Month.Jobs {
		a := allows[j.ID]
		if a <= 0 {
			continue
		}
		if to, ok := moved[j.ID]; ok {
			if t := slices.Index(Profiles[:], to); t >= 0 && j.Fits(t) {
				a -= max(0, s.suOf(j, j.ProfileIndex())-s.suOf(j, t))
			}
		}
		if a > 1e-9 {
			out[j] = a
		}
	}
	return out
}

// Uncovered is what the month could still save beyond what the advice
// proves, in the scripts the list to measure leaves out: by script and
// class, most first.
func (s Scorer) Uncovered(moved map[int]string, toMeasure []UserJob) []Left {
	listed := map[UserJob]bool{}
	for _, u := range toMeasure {
		listed[u] = true
	}
	sums := map[Left]float64{}
	for j, left := range s.left(moved) {
		if u := (UserJob{User: j.User, Name: j.Name}); !listed[u] {
			sums[Left{UserJob: u, Class: j.Class}] += left
		}
	}
	var out []Left
	for l, su := range sums {
		l.SU = su
		out = append(out, l)
	}
	slices.SortFunc(out, func(x, y Left) int { return cmp.Or(cmp.Compare(y.SU, x.SU), cmp.Compare(x.Name, y.Name)) })
	return out
}

// Left is a script whose saving the advice neither made nor listed.
type Left struct {
	UserJob
	Class string
	SU    float64
}

// UserJob names a user's script by its job name.
type UserJob struct{ User, Name string }

// WriteTable writes the scores side by side, with what the month allows.
func WriteTable(w io.Writer, scores []Score, possible Possible, cover *Coverage) {
	fmt.Fprintln(w, "| advice | jobs moved | SU saved | jobs killed | SU they waste | net SU saved |")
	fmt.Fprintln(w, "|---|---:|---:|---:|---:|---:|")
	for _, s := range scores {
		fmt.Fprintf(w, "| %s | %d | %s | %d | %s | %s |\n", s.Name, s.Moved, su(s.Saved), s.Killed, su(s.Wasted), su(s.Net()))
	}
	fmt.Fprintf(w, "| what the month allows | %d | %s | 0 | 0 | %s |\n", possible.Jobs, su(possible.Save), su(possible.Save))
	if cover != nil {
		fmt.Fprintf(w, "\nScripts to measure: %s, covering %s of the %s SU the month could still save (%.0f%%).\n",
			textutil.Plural(cover.Scripts, "script"), su(cover.Covered), su(cover.Rest), 100*cover.Share())
	}
}

func su(v float64) string { return catalog.FormatSU(v) }

// ClassRow is what advice does to one class of the month's jobs.
type ClassRow struct {
	Class         string
	Jobs          int
	Allows        float64
	Moved, Killed []int // per advice, in the order given
	Saved         []float64
}

// ByClass breaks the scores of each advice down by the jobs' class.
func (s Scorer) ByClass(advice []map[int]string) []ClassRow {
	allows, _ := s.Allows()
	rows := map[string]*ClassRow{}
	var order []string
	for _, j := range s.Month.Jobs {
		if !j.InPeriod || j.GPUs == 0 {
			continue
		}
		r := rows[j.Class]
		if r == nil {
			r = &ClassRow{Class: j.Class, Moved: make([]int, len(advice)), Killed: make([]int, len(advice)), Saved: make([]float64, len(advice))}
			rows[j.Class] = r
			order = append(order, j.Class)
		}
		r.Jobs++
		r.Allows += allows[j.ID]
		for k, a := range advice {
			one := s.scoreJob(j, a)
			r.Moved[k] += one.Moved
			r.Killed[k] += one.Killed
			r.Saved[k] += one.Net()
		}
	}
	out := make([]ClassRow, len(order))
	for i, c := range order {
		out[i] = *rows[c]
	}
	return out
}

// scoreJob scores advice on one job.
func (s Scorer) scoreJob(j *Job, advice map[int]string) Score {
	one := Scorer{Site: s.Site, Month: &Month{Jobs: []*Job{j}}}
	return one.Score("", advice)
}

// MonthScore is one month's scores: the report's, the best rule's (the
// most net SU saved), what its scripts to measure cover, what it allows.
type MonthScore struct {
	Name     string
	Report   Score
	Rules    []Score
	Cover    Coverage
	Possible Possible
}

// BestRule is the rule that saved the most net SU.
func (m MonthScore) BestRule() Score {
	best := m.Rules[0]
	for _, r := range m.Rules[1:] {
		if r.Net() > best.Net() {
			best = r
		}
	}
	return best
}

// WriteSummary writes one line a month: the report beside the best rule,
// the jobs each kills, and what the scripts to measure cover.
func WriteSummary(w io.Writer, months []MonthScore) {
	fmt.Fprintln(w, "| month | the month allows | report: jobs moved, net SU saved | best rule: jobs moved, net SU saved | report ÷ best rule | jobs killed: report, rules (most) | to measure covers |")
	fmt.Fprintln(w, "|---|---:|---:|---:|---:|---:|---:|")
	for _, m := range months {
		best := m.BestRule()
		ratio := "—"
		if best.Net() > 0 {
			ratio = fmt.Sprintf("%.2f×", m.Report.Net()/best.Net())
		}
		killed := 0
		for _, r := range m.Rules {
			killed = max(killed, r.Killed)
		}
		fmt.Fprintf(w, "| %s | %s | %d, %s | %s: %d, %s | %s | %d, %d | %.0f%% |\n", m.Name, su(m.Possible.Save), m.Report.Moved, su(m.Report.Net()),
			best.Name, best.Moved, su(best.Net()), ratio, m.Report.Killed, killed, 100*m.Cover.Share())
	}
}

// WriteCompact writes a month's scores in four columns, for a page with
// little room: each advice's jobs moved, net SU saved and jobs killed.
func WriteCompact(w io.Writer, scores []Score, possible Possible) {
	fmt.Fprintln(w, "| advice | jobs moved | net SU saved | jobs killed |")
	fmt.Fprintln(w, "|---|---:|---:|---:|")
	for _, s := range scores {
		fmt.Fprintf(w, "| %s | %d | %s | %d |\n", s.Name, s.Moved, su(s.Net()), s.Killed)
	}
	fmt.Fprintf(w, "| what the month allows | %d | %s | 0 |\n", possible.Jobs, su(possible.Save))
}
