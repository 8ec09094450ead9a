// Package sitereplay makes a month of a MIG site whose truth is known (each
// job's real GPU memory need and its runtime on every profile, scaled as
// Wulver's published tables scale), writes the evidence a site really keeps
// of it (sacct's records with or without Slurm's gres/gpumem and
// gres/gpuutil, jobstats' summaries for some jobs, output files, the
// monitor's line for a few), and scores advice on it: the report's, and the
// simple rules sites already run (Job Defense Shield's alert, Princeton's
// MIG calculator, the Alliance's 50/50 rule) on the same evidence. What it
// scores is what the month truly saves, never what the advice claims.
package sitereplay

import (
	"math"
	"math/rand/v2"
	"slices"
	"time"
)

// Options choose the month.
type Options struct {
	Seed uint64
	// GPUTRES: accounting has Slurm's gres/gpumem and gres/gpuutil
	// (AccountingStorageTRES=gres/gpumem,gres/gpuutil), on whole GPUs
	// only: MIG slices report neither.
	GPUTRES bool
	// Month is the first day of the month, in the site's time zone.
	Month time.Time
	// ScriptsFrom is when the site set AccountingStoreFlags=job_script:
	// slurmdbd stores the scripts of the jobs that start from then on
	// (sacct --batch-script; Files.Scripts). Zero: no scripts at all.
	ScriptsFrom time.Time
}

// Job is one job of the month: what it asked for, how it ran, what is
// true of it and what the site's evidence shows.
type Job struct {
	ID      int    `json:"id"`
	User    string `json:"user"`
	Name    string `json:"job_name"`
	Class   string `json:"class"`
	Group   int    `json:"group"` // the user's script: jobs of one group share a name and resources
	Profile string `json:"profile"`
	GPUs    int    `json:"gpus"` // 0: a CPU-only job
	CPUs    int    `json:"cpus"`
	MemGB   int    `json:"mem_gb"`
	// InPeriod: the job ended in the month scored; others are the
	// history's earlier runs.
	InPeriod bool      `json:"in_period"`
	Submit   time.Time `json:"submit"`
	Start    time.Time `json:"start"`
	ElapsedS float64   `json:"elapsed_s"`
	LimitMin int       `json:"time_limit_min"`
	State    string    `json:"state"`
	Session  bool      `json:"session,omitempty"`

	// The truth.
	NeedGiB float64 `json:"need_gib"` // the GPU memory the job needs
	FullS   float64 `json:"full_s"`   // its runtime (its work's) on a whole GPU
	OOM     bool    `json:"oom"`      // it died of GPU out-of-memory where it ran
	ratio   [4]float64
	fixed   bool

	// The evidence, as the rules read it (the report reads the files).
	SacctPeakGiB    *float64 `json:"sacct_peak_gib,omitempty"`    // gres/gpumem
	SacctUtil       *float64 `json:"sacct_util,omitempty"`        // gres/gpuutil (TRESUsageInMax: the largest sample)
	JobstatsPeakGiB *float64 `json:"jobstats_peak_gib,omitempty"` // jobstats' peak
	JobstatsUtil    *float64 `json:"jobstats_util,omitempty"`     // jobstats' mean utilisation (whole GPUs)
	MonitorPeakGiB  *float64 `json:"monitor_peak_gib,omitempty"`  // the monitor's line in the output
	MonitorUtil     *float64 `json:"monitor_util,omitempty"`
	Output          string   `json:"-"` // the output file's text; "" for none
}

// ProfileIndex is the job's profile's place in Profiles.
func (j *Job) ProfileIndex() int { return slices.Index(Profiles[:], j.Profile) }

// ratioRan is the runtime where the job ran over the whole GPU's.
func (j *Job) ratioRan() float64 { return j.ratio[j.ProfileIndex()] }

// RuntimeS is how long the job's work takes on profile p: a session is held
// as long anywhere; a fixed-time job's work (what it did in its time
// limit) takes its time there scaled by the profile's ratio.
func (j *Job) RuntimeS(p int) float64 { return j.FullS * j.ratio[p] }

// Fits reports whether the job's need fits profile p's usable memory.
func (j *Job) Fits(p int) bool { return j.NeedGiB <= usableGiB[p] }

// Month is a generated month and the runs before it.
type Month struct {
	Options Options
	Jobs    []*Job
}

// Period is the month scored: [From, Until).
func (m *Month) Period() (from, until time.Time) {
	return m.Options.Month, m.Options.Month.AddDate(0, 1, 0)
}

// template is a user's script: a class run on a profile, some times a month.
type template struct {
	class   string
	profile string
	jobs    [2]int // in the month, drawn in [lo, hi]
	earlier string // a profile it ran on once or twice before the month; "": none
	name    string // the job name; "": the class's
}

// templates are the month's scripts. Most ask for a whole GPU they do not
// need; some ask for a slice too small (their runs die) or one dearer per
// unit of work than the next size up; some need what they ask for.
var templates = []template{
	{class: "gromacs", profile: "full", jobs: [2]int{4, 8}, name: "md-prod"},
	{class: "gromacs", profile: "full", jobs: [2]int{3, 6}, name: "lysozyme"},
	{class: "gromacs", profile: "full", jobs: [2]int{2, 5}, earlier: "3g.40gb", name: "membrane-eq"},
	{class: "gromacs", profile: "3g.40gb", jobs: [2]int{3, 6}, name: "run_md"},
	{class: "qlora", profile: "full", jobs: [2]int{3, 6}, name: "qlora-qwen"},
	{class: "qlora", profile: "full", jobs: [2]int{2, 4}, name: "finetune"},
	{class: "qlora", profile: "1g.10gb", jobs: [2]int{3, 6}, name: "lora-small"},
	{class: "resnet", profile: "full", jobs: [2]int{3, 7}, name: "resnet18"},
	{class: "resnet", profile: "full", jobs: [2]int{2, 4}, earlier: "1g.10gb", name: "train"},
	{class: "deepcnn", profile: "full", jobs: [2]int{3, 6}, name: "cnn-cifar"},
	{class: "mnist", profile: "full", jobs: [2]int{3, 8}, name: "mnist"},
	{class: "mnist", profile: "1g.10gb", jobs: [2]int{3, 6}, name: "mnist-mig"},
	{class: "matmul", profile: "full", jobs: [2]int{2, 5}, name: "gemm-bench"},
	{class: "jax", profile: "full", jobs: [2]int{3, 6}, name: "flax-vit"},
	{class: "jax", profile: "full", jobs: [2]int{2, 4}, name: "train"},
	{class: "keras", profile: "full", jobs: [2]int{3, 6}, name: "keras-seg"},
	{class: "solver", profile: "full", jobs: [2]int{3, 6}, name: "flowsolve"},
	{class: "bigmodel", profile: "full", jobs: [2]int{2, 5}, name: "llm-7b"},
	{class: "spiky", profile: "full", jobs: [2]int{3, 6}, name: "postproc"},
	{class: "spiky", profile: "full", jobs: [2]int{2, 4}, name: "spectra"},
	{class: "fixedtime", profile: "full", jobs: [2]int{3, 5}, name: "hpo-search"},
	{class: "midmodel", profile: "1g.10gb", jobs: [2]int{2, 4}, name: "seg-unet"},
	{class: "midmodel", profile: "full", jobs: [2]int{3, 6}, name: "seg-unet-big"},
	{class: "session", profile: "full", jobs: [2]int{4, 9}, name: "interactive"},
	{class: "session", profile: "full", jobs: [2]int{3, 6}, name: "sys/dashboard/sys/jupyter"},
	{class: "session", profile: "1g.10gb", jobs: [2]int{3, 6}, name: "interactive"},
	{class: "ddp", profile: "full", jobs: [2]int{2, 4}, name: "ddp-train"},
}

// cpuOnly are the month's jobs without a GPU, per user.
const cpuOnly = 12

// users are the site's researchers; each template goes to one of them.
var users = []string{"ab123", "cd456", "ef789", "gh012", "ij345", "kl678", "mn901", "op234", "qr567", "st890", "uv123", "wx456"}

// DefaultMonth is the month Generate makes when Options name none.
var DefaultMonth = time.Date(2026, 10, 1, 0, 0, 0, 0, time.Local)

// Generate makes the month of opts.Seed.
func Generate(opts Options) *Month {
	if opts.Month.IsZero() {
		opts.Month = DefaultMonth
	}
	rng := rand.New(rand.NewPCG(opts.Seed, 0x6d6967))
	m := &Month{Options: opts}
	id := 4_100_000
	for g, t := range templates {
		user := users[(g*7+int(opts.Seed))%len(users)]
		name := t.name
		n := t.jobs[0] + rng.IntN(t.jobs[1]-t.jobs[0]+1)
		spec := groupSpec{c: classes[t.class], group: g, user: user, name: name}
		spec.draw(rng, opts)
		if t.earlier != "" {
			for k := 0; k < 1+rng.IntN(2); k++ {
				at := opts.Month.AddDate(0, 0, -20+k*3).Add(time.Duration(rng.IntN(36000)) * time.Second)
				m.Jobs = append(m.Jobs, spec.job(rng, id, t.earlier, at, false))
				id++
			}
		}
		for k := 0; k < n; k++ {
			day := 1 + (k*27/n+rng.IntN(3))%26
			at := opts.Month.AddDate(0, 0, day).Add(time.Duration(rng.IntN(50000)) * time.Second)
			m.Jobs = append(m.Jobs, spec.job(rng, id, t.profile, at, true))
			id++
		}
	}
	for k := 0; k < cpuOnly; k++ {
		at := opts.Month.AddDate(0, 0, 1+rng.IntN(26)).Add(time.Duration(rng.IntN(50000)) * time.Second)
		h := 1 + 5*rng.Float64()
		m.Jobs = append(m.Jobs, &Job{ID: id, User: users[k%len(users)], Name: "preprocess", Class: "cpu", Group: -1, CPUs: 16, MemGB: 64,
			InPeriod: true, Submit: at, Start: at.Add(90 * time.Second), ElapsedS: math.Round(h * 3600), FullS: math.Round(h * 3600),
			LimitMin: 600, State: "COMPLETED"})
		id++
	}
	slices.SortStableFunc(m.Jobs, func(a, b *Job) int { return a.Submit.Compare(b.Submit) })
	for i, j := range m.Jobs { // ids in submission order, as Slurm gives them
		j.ID = 4_100_000 + i
	}
	for _, j := range m.Jobs {
		if c := classes[j.Class]; c != nil && c.output != nil && !j.Session && rng.Float64() < 0.92 {
			writeOutput(j, c, rng)
		}
	}
	return m
}

// groupSpec is what a user's script's jobs share: the class, and the draws
// that stay put from job to job (its data, its batch size).
type groupSpec struct {
	c          *class
	group      int
	user, name string
	need, held float64
	util       float64
	hours      float64
	jobstats   bool // the site's jobstats summarised this user's jobs
	monitor    bool // the jobs ran under migadvisor's monitor
	gpuTRES    bool // accounting has gres/gpumem and gres/gpuutil
}

func (s *groupSpec) draw(rng *rand.Rand, opts Options) {
	c := s.c
	s.gpuTRES = opts.GPUTRES
	s.need = between(rng, c.needGiB)
	s.held = max(s.need, between(rng, c.heldGiB))
	if c.holder == preallocates { // a share of the device
		s.held = between(rng, c.heldGiB)
	}
	s.util = between(rng, c.util)
	s.hours = between(rng, c.hours)
	s.jobstats = rng.Float64() < 0.35
	s.monitor = !c.session && rng.Float64() < 0.12
}

func between(rng *rand.Rand, r [2]float64) float64 { return r[0] + (r[1]-r[0])*rng.Float64() }

// job is one run of the group's script on profile, submitted at.
func (s *groupSpec) job(rng *rand.Rand, id int, profile string, at time.Time, inPeriod bool) *Job {
	c := s.c
	j := &Job{ID: id, User: s.user, Name: s.name, Class: c.name, Group: s.group, Profile: profile, GPUs: max(c.gpus, 1),
		CPUs: c.cpus, MemGB: c.memGB, InPeriod: inPeriod, Submit: at, Session: c.session, ratio: c.ratio, fixed: c.fixedTime}
	j.Start = at.Add(time.Duration(30+rng.IntN(1800)) * time.Second)
	j.NeedGiB = round3(s.need * (0.97 + 0.06*rng.Float64()))
	j.FullS = math.Round(s.hours * 3600 * (0.85 + 0.3*rng.Float64()))
	p := j.ProfileIndex()
	j.ElapsedS = math.Round(j.RuntimeS(p))
	j.State = "COMPLETED"
	j.LimitMin = int(math.Ceil(j.ElapsedS*1.6/3600)) * 60
	if c.fixedTime {
		// It runs until its limit wherever it runs: what it does there is
		// the work of FullS on a whole GPU.
		j.LimitMin = int(math.Round(s.hours * 60))
		j.ElapsedS = float64(j.LimitMin*60 + 7)
		j.FullS = math.Round(j.ElapsedS / c.ratio[p])
		j.State = "TIMEOUT"
	}
	if c.session && rng.Float64() < 0.3 {
		j.State = "TIMEOUT"
	}
	if !j.Fits(p) {
		// It dies of GPU out-of-memory a while in.
		j.OOM, j.State = true, "FAILED"
		j.ElapsedS = math.Round(j.ElapsedS * (0.05 + 0.3*rng.Float64()))
	}
	s.evidence(rng, j)
	return j
}

// evidence sets what the site's samplers saw of the job.
func (s *groupSpec) evidence(rng *rand.Rand, j *Job) {
	p := j.ProfileIndex()
	peak := s.peakOn(p)
	sampled := func() *float64 {
		v := peak * (0.86 + 0.14*rng.Float64())
		if s.c.name == "spiky" { // the spike lasts a few seconds: a 30 s sampler misses most of it
			v = 8.4 + 1.1*rng.Float64()
		}
		v = round3(min(v, usableGiB[p]))
		return &v
	}
	full := p == len(Profiles)-1
	util := s.util * (0.9 + 0.2*rng.Float64())
	// Every draw is made whatever the site keeps, so that a month with and
	// without Slurm's GPU figures holds the same jobs.
	sacctPeak, jobstatsPeak := sampled(), sampled()
	// gres/gpuutil in TRESUsageInMax is the largest of Slurm's samples: a
	// little above the mean of a steady job.
	sacctUtil := math.Round(min(100, util*(1+0.25*rng.Float64())))
	if full && s.gpuTRES { // slices report neither memory nor utilisation to Slurm
		j.SacctPeakGiB, j.SacctUtil = sacctPeak, &sacctUtil
	}
	if s.jobstats {
		j.JobstatsPeakGiB = jobstatsPeak
		if full {
			u := math.Round(util*10) / 10
			j.JobstatsUtil = &u
		}
	}
	if s.monitor {
		v := round3(peak)
		j.MonitorPeakGiB = &v
		if full {
			u := math.Round(util)
			j.MonitorUtil = &u
		}
	}
}

// peakOn is the GPU memory the job holds on profile p: its need, or what a
// caching allocator reserves (bounded by the device), or a preallocator's
// share of the device.
func (s *groupSpec) peakOn(p int) float64 {
	switch s.c.holder {
	case caches:
		return max(s.need, min(s.held, 0.94*usableGiB[p]))
	case preallocates:
		return max(s.need, s.held*usableGiB[p])
	}
	return min(s.need, usableGiB[p])
}

func round3(v float64) float64 { return math.Round(v*1000) / 1000 }
