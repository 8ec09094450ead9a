// Package savings is the admins' report of where the site's GPU service
// units go: over the GPU jobs that ended in a period, per user and per
// script, the jobs whose evidence says a smaller profile would have done
// (by recommend's own risk model and runtime model), what they spent and
// what the recommended profile would have cost; totals per profile, per
// user and for the cluster; the jobs that ran out of GPU memory on a slice
// too small; and, never silently, the jobs that could not be judged and
// why. Notices to users (notice.go) and the CSV (csv.go) are built from it.
package savings

import (
	"fmt"
	"math"
	"strconv"
	"time"

	"github.com/migadvisor/migadvisor/advisor"
	"github.com/migadvisor/migadvisor/advisor/base/history"
	"github.com/migadvisor/migadvisor/advisor/base/runmodel"
	"github.com/migadvisor/migadvisor/catalog"
)

// Request says what to report on.
type Request struct {
	Site   *catalog.Site
	Period history.Period // the jobs that ended in it
	User   string         // one user's jobs; "": everyone's
	// Thresholds: the site's [report] with its defaults filled
	// (catalog.Report.WithDefaults) and the command line's overrides.
	Thresholds catalog.Report
	// Progress, when set, hears how many of the scripts were judged.
	Progress func(done, total int)
	// Peers are the peers of a script (less its own: fingerprint) that
	// scale it when it was measured on one profile, as recommend's do; nil:
	// none.
	Peers func(fingerprint string) []runmodel.Peer
	// Judged, when set, hears each GPU job of the period as the report
	// judged it: what a layout planner sizes its demand by.
	Judged func(Judged)
}

// Judged is one GPU job of the period as the report judged it.
type Judged struct {
	Record *history.JobRecord
	// Recommendation is its script's (nil for a session, or where none
	// was made): the runtimes it predicts on each profile.
	Recommendation *advisor.Recommendation
	// MovedTo is the profile the report moves it to ("" where it stays
	// where it ran), and Ratio its runtime there over its runtime as it
	// ran (1 for a session, held as long), RatioMax the slow end of the
	// prediction's range.
	MovedTo         string
	Ratio, RatioMax float64
	// Unjudged is why the report could not judge it, "" where it did.
	Unjudged string
}

// Report is the report. SU figures are the site's list price of each job
// as it ran (its CPUs, memory, profile and elapsed time).
type Report struct {
	Site       string         `json:"site"`
	From       time.Time      `json:"from"`
	Until      time.Time      `json:"until"`
	User       string         `json:"user,omitempty"`
	Thresholds Thresholds     `json:"thresholds"`
	Total      Tally          `json:"total"`
	Profiles   []ProfileTally `json:"profiles"` // by the profile the jobs ran on, smallest first
	Users      []UserTally    `json:"users"`    // most SU saved first
	Scripts    []Script       `json:"scripts"`  // at or above the thresholds, most SU saved first
	// Below counts the scripts under min_su_saved: in the totals, not
	// listed.
	Below Below    `json:"below_thresholds"`
	OOMs  []OOMJob `json:"out_of_memory"` // most SU first
	// ToMeasure are the scripts whose fit on a cheaper profile is not
	// known yet, with the profile to try, most SU possible first: what
	// turns an unknown into a next step.
	ToMeasure []Measure  `json:"to_measure"`
	Unjudged  []Unjudged `json:"unjudged"` // most SU first
	// Measurements are the jobs of probes and sweeps (their variants,
	// SweepDir): in the totals, and evidence for their scripts'
	// judgements, but never counted as jobs on too big a slice, out of
	// memory or unjudged: the user was asked to run them.
	Measurements Measurements `json:"measurements"`
	// Held is what the history holds of ended jobs, where no GPU job ended
	// in the period (nil otherwise): why the report is empty, and what
	// fills it.
	Held *history.Held `json:"history_holds,omitempty"`
	// DB is the history file the report read where it is not the user's
	// own (MIGADVISOR_DB, --db): the collect an empty report names writes
	// to it, not to the admin's own history. "" for the default history or
	// a site store.
	DB string `json:"-"`
	// Snapshot: the history read is a published snapshot, which no
	// collect writes: an empty report names the live history's collect
	// and publish.
	Snapshot bool `json:"-"`
}

// Measurements counts the variants of probes and sweeps, and what they
// spent.
type Measurements struct {
	Jobs int     `json:"jobs"`
	SU   float64 `json:"su"`
}

// Below is the scripts whose saving is under min_su_saved: how many, their
// smaller-slice jobs, what those spent, would have cost, and saved.
type Below struct {
	Scripts int     `json:"scripts"`
	Jobs    int     `json:"jobs"`
	SU      float64 `json:"su"`
	SUThere float64 `json:"su_there"`
	Saved   float64 `json:"su_saved"`
}

// Thresholds are the ones the report applied.
type Thresholds struct {
	MinSUSaved float64 `json:"min_su_saved"`
	MinRuns    int     `json:"min_runs"`
}

// Tally counts GPU jobs and their SU.
type Tally struct {
	Jobs int     `json:"jobs"`
	SU   float64 `json:"su"` // what they spent (jobs with an SU figure)
	// Smaller: the jobs a smaller profile would have done, what they
	// spent, and what the recommended profile would have cost.
	Smaller        int     `json:"smaller_jobs"`
	SmallerSU      float64 `json:"smaller_su"`
	SmallerSUThere float64 `json:"smaller_su_there"`
	// Larger: the jobs a larger profile would have cost less for (they
	// run that much faster there), what they spent, and what it would
	// have cost. Saved counts both.
	Larger        int     `json:"larger_jobs"`
	LargerSU      float64 `json:"larger_su"`
	LargerSUThere float64 `json:"larger_su_there"`
	Saved         float64 `json:"su_saved"`
	// OOM: the jobs that ran out of GPU memory, and what they spent.
	OOM   int     `json:"oom_jobs"`
	OOMSU float64 `json:"oom_su"`
}

// Moved is the jobs another profile would have cost less for, smaller or
// larger, what they spent and what it would have cost: the columns of a
// table whose SAVED counts both.
func (t Tally) Moved() (jobs int, su, there float64) {
	return t.Smaller + t.Larger, t.SmallerSU + t.LargerSU, t.SmallerSUThere + t.LargerSUThere
}

// SavedShare is what the cheaper slices would have saved as a share of
// what the jobs spent: a whole percent ("17%"), never a bare 0% for a
// saving there is; "" when they spent nothing.
func (t Tally) SavedShare() string {
	if t.SU <= 0 {
		return ""
	}
	pct := math.Round(t.Saved / t.SU * 100)
	if pct == 0 && t.Saved > 0 {
		return "under 1%"
	}
	return strconv.FormatFloat(pct, 'f', 0, 64) + "%"
}

// ProfileTally is a profile's jobs, as they ran.
type ProfileTally struct {
	Profile string `json:"profile"`
	Tally
}

// UserTally is a user's jobs.
type UserTally struct {
	User    string `json:"user"`
	Scripts int    `json:"scripts"` // listed scripts
	Tally
}

// Script is one user's script whose jobs another profile would have done
// for fewer SU: a smaller one, or a larger one they run enough faster on
// (Direction). A job not linked to a script (its script unknown to slurmdbd) is
// grouped with the user's jobs of the same name, CPUs, memory and
// partition; an interactive session (session.IsInteractive) with the
// user's sessions of its name, judged as recommend --session judges them.
type Script struct {
	User string `json:"user"`
	// Name is the job name most of the listed jobs bear (the first in
	// alphabetical order where several are borne as often): never a
	// probe's variant's, which is not listed, nor one that changes with
	// the newest job.
	Name        string `json:"job_name"`
	Fingerprint string `json:"fingerprint,omitempty"` // "" for jobs grouped by name, and sessions
	// Path is the file most of the listed jobs were submitted from (never
	// a probe's variant's), when known; "" where only slurmdbd's copy is
	// (sacct --batch-script -j ID shows it).
	Path string `json:"script,omitempty"`
	// Session: the jobs are interactive sessions, priced per hour held;
	// Change is then what to choose for the next one (recommend
	// --session's change: OnDemand's form, or salloc's options).
	Session     bool     `json:"session,omitempty"`
	Change      string   `json:"change,omitempty"`
	Jobs        int      `json:"jobs"`    // its jobs that the recommended profile would have done for less
	JobIDs      []string `json:"job_ids"` // every one (the CSV gives the first MaxJobIDs)
	RanOn       []string `json:"ran_on"`  // the profiles they ran on
	Recommended string   `json:"recommended"`
	// Direction is "smaller" or "larger": where Recommended lies from
	// the profiles the jobs ran on.
	Direction string `json:"direction"`
	Request   string `json:"request"`              // the sbatch option that asks for it
	TimeLimit string `json:"time_limit,omitempty"` // the --time it needs, when longer than the jobs'
	Basis     string `json:"basis"`
	Runs      int    `json:"runs"` // the runs the judgement rests on
	// The GPU memory figure recommend judged by (SeenMiB, as MeasuredBy
	// saw it) and the need read from it (NeedMiB: the figure, with a
	// margin where the runs were of an earlier version of the script). MemoryKind says what it proves, as
	// memory.NeedJSON.Kind does: allocated or peak, the need; oom,
	// at least that (an out-of-memory message's bound); ceiling, at most
	// that (a caching or preallocating framework's peak, HeldBy saying
	// whose); "": no figure, the profile fits by a run that completed
	// (Fits).
	SeenMiB    float64 `json:"gpu_mem_seen_mib"`
	NeedMiB    float64 `json:"gpu_mem_need_mib"`
	MemoryKind string  `json:"gpu_mem_kind"`
	HeldBy     string  `json:"gpu_mem_held_by,omitempty"`
	MeasuredBy string  `json:"measured_by"`
	// Fits is recommend's reason that the recommended profile is a low
	// risk, where no memory figure gives one ("completed on 1g.10gb in 2
	// runs").
	Fits      string  `json:"fits,omitempty"`
	UsableMiB float64 `json:"usable_mib"` // the recommended profile's
	// The resources the newest job asked for: what tells apart scripts
	// grouped by job name.
	CPUs      int64   `json:"cpus"`
	MemMiB    float64 `json:"mem_mib"`
	Partition string  `json:"partition"`
	// RanRequest is the sbatch option of the profile the jobs ran on,
	// when they all ran on one: the line to replace.
	RanRequest string `json:"ran_request,omitempty"`
	// RuntimeRatio is the recommended profile's runtime over the one the
	// jobs ran on (>1: slower there); RanS the runtime there, RuntimeS
	// and RuntimeMaxS the one expected on the recommended profile and the
	// top of its range (0: unknown).
	RuntimeRatio float64 `json:"runtime_ratio"`
	RanS         float64 `json:"ran_s"`
	RuntimeS     float64 `json:"runtime_s"`
	RuntimeMaxS  float64 `json:"runtime_max_s"`
	SUSpent      float64 `json:"su_spent"`
	SUThere      float64 `json:"su_there"`
	SUSaved      float64 `json:"su_saved"`
	// TimeBudgetS: every run ran to this time limit, so SUThere is the SU
	// of the same work there (its runs there would do less in that time).
	TimeBudgetS float64 `json:"time_budget_s,omitempty"`
	Why         string  `json:"why"`
	// group is the key of the group of jobs the row is of: a script
	// listed and worth measuring too is one script (Notify counts it
	// once). "" in a Script the report did not build.
	group string
	// saved is SUSaved before it was rounded: a sum of scripts' savings
	// rounds once, as the report's tallies do, and a notice says the
	// figure the user's row does. 0 in a Script the report did not build.
	saved float64
}

// unrounded is the script's saving before rounding, where the report
// built it; else SUSaved.
func (s Script) unrounded() float64 {
	if s.saved != 0 {
		return s.saved
	}
	return s.SUSaved
}

// Period says when the jobs ended, in the report's own time zone: a
// calendar month as one ("in November 2026 (CET)"), whole days as dates
// with the last one included ("from 2026-11-01 to 2026-11-14"), else
// times, the end excluded.
func (rep *Report) Period() string {
	from, until := rep.From, rep.Until
	ref := until
	if ref.IsZero() {
		ref = from
	}
	zone, _ := ref.Zone()
	midnight := func(t time.Time) bool {
		return t.IsZero() || t.Equal(time.Date(t.Year(), t.Month(), t.Day(), 0, 0, 0, 0, t.Location()))
	}
	days := midnight(from) && midnight(until)
	switch {
	case from.IsZero() && until.IsZero():
		return "at any time"
	case days && !from.IsZero() && from.Day() == 1 && until.Equal(from.AddDate(0, 1, 0)):
		return fmt.Sprintf("in %s (%s)", from.Format("January 2006"), zone)
	case days && from.IsZero():
		return fmt.Sprintf("up to and including %s (%s)", until.AddDate(0, 0, -1).Format(time.DateOnly), zone)
	case days && until.IsZero():
		return fmt.Sprintf("since %s (%s)", from.Format(time.DateOnly), zone)
	case days:
		return fmt.Sprintf("from %s to %s (%s)", from.Format(time.DateOnly), until.AddDate(0, 0, -1).Format(time.DateOnly), zone)
	case from.IsZero():
		return fmt.Sprintf("before %s (%s)", until.Format("2006-01-02 15:04"), zone)
	case until.IsZero():
		return fmt.Sprintf("since %s (%s)", from.Format("2006-01-02 15:04"), zone)
	}
	return fmt.Sprintf("from %s to %s (%s)", from.Format("2006-01-02 15:04"), until.Format("2006-01-02 15:04"), zone)
}

// File is the script's file where the user submitted it from; "" when
// only slurmdbd's copy of it is known (a site-wide collect links a job to
// it as sacct:CLUSTER/ID) or none is.
func (s Script) File() string { return userFile(s.Path) }

// OOMJob is a job that ran out of GPU memory.
type OOMJob struct {
	User    string  `json:"user"`
	JobID   string  `json:"job_id"`
	Name    string  `json:"job_name"`
	Profile string  `json:"profile"`
	SU      float64 `json:"su"`
	NeedMiB float64 `json:"gpu_mem_need_mib,omitempty"` // what the error asked for, when it said
	// NeedKind says what NeedMiB proves (memory.NeedJSON.Kind):
	// oom, the error's lower bound; else the script's need as recommend
	// judged it.
	NeedKind string `json:"gpu_mem_kind,omitempty"`
	Fits     string `json:"fits,omitempty"` // the profile recommend names for its script, when bigger
}

// Unjudged is why some jobs could not be judged.
type Unjudged struct {
	Reason string  `json:"reason"`
	Jobs   int     `json:"jobs"`
	SU     float64 `json:"su"`
	// Examples name the first few scripts, "user job-name: detail";
	// ExamplesLeftOut counts the scripts past MaxExamples they leave out.
	Examples        []string `json:"examples,omitempty"`
	ExamplesLeftOut int      `json:"examples_left_out,omitempty"`
}

// MaxExamples bounds the scripts an unjudged reason names.
const MaxExamples = 3

// UnknownProfile names the row of the jobs on a GPU type the site file
// does not know.
const UnknownProfile = "(unknown GPU type)"

// MaxJobIDs bounds the job ids a script's CSV row lists.
const MaxJobIDs = 8

// Measure is a user's script worth measuring on one profile: its fit
// there is unknown (no memory figure, a framework's ceiling too close to
// the slice, runs that never completed), and its runtime predicted there
// makes it cheaper than where the period's jobs ran.
type Measure struct {
	User    string `json:"user"`
	Name    string `json:"job_name"`
	Script  string `json:"script,omitempty"`  // the user's file, when known
	Session bool   `json:"session,omitempty"` // interactive sessions of that name
	Profile string `json:"profile"`           // the profile to try
	Request string `json:"request"`           // the sbatch option that asks for it
	// Jobs are the period's jobs the measurement would settle, RanOn the
	// profiles they ran on, SUSpent what they spent.
	Jobs    int      `json:"jobs"`
	JobIDs  []string `json:"job_ids"` // every one: sacct --batch-script -j ID prints the script
	RanOn   []string `json:"ran_on"`
	SUSpent float64  `json:"su_spent"`
	// SUPossible is what they could have saved on Profile, if it fits, at
	// the fast end of the runtime range predicted there: beyond what the
	// report's listed change saves, for jobs it lists.
	SUPossible float64 `json:"su_possible"`
	// Why is what is not known there, in recommend's words; Command the
	// measurement (JOB.sh where the script is not known).
	Why     string `json:"why"`
	Command string `json:"command"`
	// Unknown is what the measurement settles: UnknownFit (whether the
	// jobs fit the profile), UnknownRuntime (they fit; how fast they run
	// there), or UnknownBoth.
	Unknown string `json:"unknown"`
	group   string // as Script's: the group of jobs it is of
}

// What a measurement settles (Measure.Unknown).
const (
	UnknownFit     = "fit"
	UnknownRuntime = "runtime"
	UnknownBoth    = "fit and runtime"
)
