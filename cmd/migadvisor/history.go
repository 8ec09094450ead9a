package main

import (
	"context"
	"fmt"
	"io"
	"math"
	"strings"
	"time"

	"github.com/urfave/cli/v2"

	"github.com/migadvisor/migadvisor/advisor"
	"github.com/migadvisor/migadvisor/advisor/history"
	"github.com/migadvisor/migadvisor/catalog"
	"github.com/migadvisor/migadvisor/internal/textutil"
	"github.com/migadvisor/migadvisor/slurm"
)

func historyCommand() *cli.Command {
	return withUsageErrors(&cli.Command{
		Name:      "history",
		Usage:     "show the evidence per job: state, time, memory, OOMs, work, SU",
		ArgsUsage: "[JOB.sh]",
		Description: `With JOB.sh, lists the jobs linked to that script (by fingerprint: its sweep
variants count as the script) and those of its earlier versions, marked ~:
the script edited since, found by its path or by its job name, CPUs and
memory (the ones recommend weighs as "runs of an earlier version"). They
come from your history and, when the site file names one ([history]
site_db), the site-wide history, each job once. Without JOB.sh, every job in
your history, newest first. SU is the site's formula applied to the job's
CPUs, requested memory, GPU profile and elapsed time. Unknown values print as
"-" (null in JSON); in JSON, "earlier" marks an earlier version's job and
"history" says which history a job came from (own or site).

With no job to show it says why, in one line naming the histories read: no
runs of JOB.sh yet, its tracked jobs waiting for 'collect', or jobs of its
name linked to no script, and what to run. With --json, stdout holds [] and
that line goes to stderr.

A history this user cannot write (a site-wide one, --db site.db) is read
read-only.

Examples:
   migadvisor history train.sh
   migadvisor history --limit 20
   migadvisor --db /shared/migadvisor/history.db history --limit 20   # the site's published snapshot
   migadvisor history train.sh --json | jq '.[] | {job_id, profile, gpu_mem_peak_mib, oom, earlier}'`,
		Flags: []cli.Flag{
			&cli.IntFlag{Name: "limit", Value: 100, Usage: "show at most this many jobs (0: all)"},
			jsonFlag(),
		},
		Action: bindAction(historyOptionsFrom, runHistory),
	})
}

// historyJob is one job in history's JSON output.
type historyJob struct {
	JobID            string             `json:"job_id"`
	JobKey           string             `json:"job_key"` // JobIDRaw
	Cluster          string             `json:"cluster"`
	Name             string             `json:"name"`
	User             string             `json:"user"`
	Partition        string             `json:"partition"`
	QoS              string             `json:"qos"`
	Profile          *string            `json:"profile"`
	RequestedProfile *string            `json:"requested_profile"`
	GPUType          string             `json:"gpu_type"`
	GPUCount         int64              `json:"gpu_count"`
	State            string             `json:"state"`
	ExitCode         *int64             `json:"exit_code"`
	ExitSignal       *int64             `json:"exit_signal"`
	Submit           *time.Time         `json:"submit"`
	Start            *time.Time         `json:"start"`
	End              *time.Time         `json:"end"`
	ElapsedS         *int64             `json:"elapsed_s"`
	TimeLimitMin     *int64             `json:"timelimit_min"`
	CPUs             *int64             `json:"cpus"`
	ReqMemMiB        *float64           `json:"req_mem_mib"`
	MaxRSSMiB        *float64           `json:"max_rss_mib"`
	GPUMemPeakMiB    *float64           `json:"gpu_mem_peak_mib"`
	GPUMemSource     *string            `json:"gpu_mem_source"` // the peak's: monitor, jobstats or sacct (gres/gpumem)
	GPUMemPeaks      map[string]float64 `json:"gpu_mem_peaks"`  // every source's peak, MiB; "framework": the job's own allocated peak
	// GPUMemHeldBy is what held the memory, as the job's output shows it:
	// a caching or preallocating framework's peak is a ceiling, no need.
	GPUMemHeldBy   *advisor.MemoryHolder `json:"gpu_mem_held_by,omitempty"`
	GPUMemTotalMiB *float64              `json:"gpu_mem_total_mib"`
	GPUUtil        *string               `json:"gpu_util"`         // the monitor's: supported, unsupported (A100 MIG), error
	GPUUtilPct     *float64              `json:"gpu_util_pct"`     // mean: the monitor's, else sacct's gres/gpuutil
	GPUMemUtilPct  *float64              `json:"gpu_mem_util_pct"` // mean memory (DRAM) utilization: the monitor's
	OOM            *string               `json:"oom"`
	OOMMessage     *string               `json:"oom_message"`
	GPUNeedMiB     *float64              `json:"gpu_need_mib"` // lower bound from a GPU OOM message
	TimeLimitHit   bool                  `json:"time_limit_hit"`
	Work           *float64              `json:"work"`
	WorkUnit       *string               `json:"work_unit"`
	Metrics        map[string]float64    `json:"metrics"`
	SU             *float64              `json:"su"`
	Script         *string               `json:"script"`
	Fingerprint    *string               `json:"fingerprint"`
	Workload       *string               `json:"workload"`
	Output         *string               `json:"output"`
	Placeholder    bool                  `json:"placeholder"` // slurmdbd's stub record, not final
	Earlier        bool                  `json:"earlier"`     // a job of an earlier version of JOB.sh
	History        string                `json:"history"`     // own, or site (the site-wide history)
	// Emulated are the runs of the emulation the job ran (migadvisor
	// emulate), in its order; omitted for a job that ran none.
	Emulated []historyEmulated `json:"emulated,omitempty"`
}

// historyEmulated is one emulated run of a job in history's JSON output.
type historyEmulated struct {
	Profile    string   `json:"profile"`
	GPU        *string  `json:"gpu"`       // the GPU that ran it
	SMPct      int      `json:"sm_pct"`    // MPS active-thread percentage, 100 with no limit
	MemLimit   *string  `json:"mem_limit"` // CUDA_MPS_PINNED_DEVICE_MEM_LIMIT; null: no cap
	Outcome    string   `json:"outcome"`   // completed, failed, budget
	ExitStatus int      `json:"exit_status"`
	Seconds    float64  `json:"seconds"`
	GPUPeakMiB *float64 `json:"gpu_peak_mib"` // the run's own peak, from the monitor
	OOM        *string  `json:"oom"`          // gpu: out of memory under the cap
	// The share of the whole GPU's SMs (at the run's clock) and copy
	// bandwidth the run had, measured; null: not measured.
	SMShare        *float64 `json:"sm_share"`
	BandwidthShare *float64 `json:"bandwidth_share"`
}

// shareOrNull is a measured share to three places, nil when unknown.
func shareOrNull(v float64) *float64 {
	if v <= 0 {
		return nil
	}
	r := math.Round(v*1000) / 1000
	return &r
}

// historyOptions are history's flags.
type historyOptions struct {
	Global globalFlags
	Script string // "" for every job in the history
	Limit  int    // 0: all
	JSON   bool
	User   string // who asks: in the site-wide history only their jobs are earlier versions
}

func historyOptionsFrom(c *cli.Context) (historyOptions, error) {
	if c.NArg() > 1 {
		return historyOptions{}, usageError{"history takes at most one JOB.sh"}
	}
	o := historyOptions{Global: globalFlagsFrom(c), Script: c.Args().First(), Limit: c.Int("limit"), JSON: c.Bool("json"),
		User: currentUserName()}
	return o, nonNegative("--limit", o.Limit, "a number of jobs, 0 for all")
}

func runHistory(ctx context.Context, o historyOptions, w outWriters) error {
	site, err := o.Global.loadSite()
	if err != nil {
		return err
	}
	var key *advisor.ScriptKey
	var script *slurm.Script
	if o.Script != "" {
		if script, err = slurm.ReadScript(o.Script); err != nil {
			return err
		}
		k := advisor.KeyOf(o.Script, script, site, o.User)
		key = &k
	}
	hs, err := advisor.Histories(ctx, advisor.HistoriesRequest{UserDB: o.Global.DB, Site: site, AllJobs: key == nil}, readHistories(w.Err))
	if err != nil {
		return err
	}
	defer hs.Close()
	if hs.Warning != "" {
		fmt.Fprintf(w.Err, "migadvisor: %s\n", hs.Warning)
	}
	st, siteWide := hs.Own, hs.SiteWide
	recs, err := advisor.History(ctx, key, o.Limit, st, siteWide...)
	if err != nil {
		return err
	}
	jobs := make([]historyJob, 0, len(recs))
	for i := range recs {
		jobs = append(jobs, toHistoryJob(&recs[i], site))
	}
	if len(jobs) == 0 {
		why := fmt.Sprintf("no jobs in %s yet: 'migadvisor collect' reads your jobs from Slurm accounting", historiesRead(st, siteWide))
		if key != nil {
			req := advisor.GatherRequest{Path: o.Script, Script: script, User: o.User}
			if why, err = whyNoRuns(ctx, site, req, st, siteWide); err != nil {
				return err
			}
		}
		return sayEmptyTo(w, o.JSON, why)
	}
	if o.JSON {
		return writeJSON(w.Out, jobs)
	}
	printHistory(w.Out, jobs)
	return nil
}

// sayEmptyTo answers with nothing to show, and says why: an empty answer
// is never silent. In text the sentence stands where the table would; in
// JSON stdout holds the data alone (empty, an array, never null), and the
// sentence goes to stderr, as track's notes do.
func sayEmptyTo(w outWriters, asJSON bool, why string) error {
	if !asJSON {
		_, err := fmt.Fprintln(w.Out, why)
		return err
	}
	if err := writeJSON(w.Out, []struct{}{}); err != nil {
		return err
	}
	fmt.Fprintf(w.Err, "migadvisor: %s\n", why)
	return nil
}

// historiesRead names the histories a command read: "the history at
// PATH", or yours and the site-wide one.
func historiesRead(own *history.Store, siteWide []*history.Store) string {
	if len(siteWide) == 0 && own != nil {
		return "the history at " + own.Path()
	}
	paths := make([]string, len(siteWide))
	for i, st := range siteWide {
		paths[i] = st.Path()
	}
	if own == nil {
		return "the site-wide history at " + textutil.JoinAnd(paths)
	}
	return fmt.Sprintf("your history at %s and the site-wide history at %s", own.Path(), textutil.JoinAnd(paths))
}

// whyNoRuns says, in one line, why history has no jobs of the script at
// path: none of it or its earlier versions in the histories read, and what
// would give it some. Where its tracked jobs wait for collect, or jobs of
// its name are in the history linked to no script, recommend's notes say
// so (advisor.Gather words them); else the ways to runs: track for jobs
// plain sbatch submitted, a probe to measure it.
func whyNoRuns(ctx context.Context, site *catalog.Site, req advisor.GatherRequest, own *history.Store, siteWide []*history.Store) (string, error) {
	// Queue waits since now: none to read, only the notes are wanted.
	req.WaitsSince = time.Now()
	job, err := advisor.GatherFor(ctx, site, req, own, siteWide...)
	if err != nil {
		return "", err
	}
	path := req.Path
	word := slurm.ShellWord(path)
	what := fmt.Sprintf("if you submitted it with plain sbatch, 'migadvisor track %s JOBID...' links its jobs to it; "+
		"'migadvisor recommend --probe %s' measures it", word, word)
	if len(job.Notes) > 0 {
		what = strings.Join(job.Notes, "; ")
	}
	return fmt.Sprintf("no runs of %s, nor of its earlier versions, in %s: %s", path, historiesRead(own, siteWide), what), nil
}

func toHistoryJob(hr *advisor.HistoryRecord, site *catalog.Site) historyJob {
	r := &hr.JobRecord
	h := historyJob{JobID: r.JobID, JobKey: r.Key, Cluster: r.Cluster, Name: r.Name, User: r.User, Partition: r.Partition,
		QoS: r.QOS, Profile: strPtr(r.Profile), RequestedProfile: strPtr(r.RequestedProfile), GPUType: r.GPUType, GPUCount: r.GPUCount,
		State: r.State, ExitCode: r.ExitCode, ExitSignal: r.ExitSignal, Submit: r.Submit, Start: r.Start, End: r.End,
		ElapsedS: r.ElapsedS, TimeLimitMin: r.TimeLimitMin, CPUs: r.CPUs, ReqMemMiB: roundPtr(r.ReqMemMiB),
		MaxRSSMiB: roundPtr(r.MaxRSSMiB), GPUMemPeakMiB: roundPtr(r.GPUMemPeakMiB()), OOM: strPtr(r.OOM()),
		GPUNeedMiB: roundPtr(r.GPUNeedMiB), TimeLimitHit: r.ReachedTimeLimit(), Work: r.Work,
		WorkUnit: strPtr(r.WorkUnit), Metrics: r.Metrics, SU: jobSU(r, site), Script: strPtr(r.Script),
		Fingerprint: strPtr(r.Fingerprint), Workload: strPtr(r.Workload), Output: strPtr(r.OutputPath), Placeholder: r.Stub}
	h.Earlier, h.History = r.Earlier, "own"
	if hr.SiteWide {
		h.History = "site"
	}
	h.GPUMemSource, h.GPUMemTotalMiB = strPtr(r.GPUMemSource()), roundPtr(r.MonitorTotalMiB)
	if h.GPUMemTotalMiB == nil && r.GPUMemSource() == history.PeakJobstats {
		h.GPUMemTotalMiB = roundPtr(r.JobstatsTotalMiB)
	}
	h.GPUMemPeaks = r.GPUMemPeaks()
	if held := advisor.HolderOfRecord(r); held.Kind != advisor.HolderUnknown {
		h.GPUMemHeldBy = &held
	}
	if v, ok := r.Metrics[advisor.AllocatedMetric]; ok && v > 0 {
		h.GPUMemPeaks["framework"] = v // what the job's framework allocated at most (MIGADVISOR_METRIC)
	}
	for source, v := range h.GPUMemPeaks {
		h.GPUMemPeaks[source] = math.Round(v*10) / 10 // as roundPtr
	}
	h.GPUUtil, h.GPUUtilPct = strPtr(r.MonitorUtil), roundPtr(r.GPUUtilizationPct())
	h.GPUMemUtilPct = roundPtr(r.GPUMemUtilizationPct())
	for i := range r.Emulated {
		e := &r.Emulated[i]
		h.Emulated = append(h.Emulated, historyEmulated{Profile: e.Profile, GPU: strPtr(e.GPU), SMPct: e.Percentage,
			MemLimit: strPtr(e.MemLimit), Outcome: e.Outcome, ExitStatus: e.ExitStatus, Seconds: e.Seconds,
			GPUPeakMiB: roundPtr(e.PeakMiB()), OOM: strPtr(e.OOM()), SMShare: shareOrNull(e.SMShare),
			BandwidthShare: shareOrNull(e.BandwidthShare)})
	}
	switch {
	case r.GPUOOMText != "":
		h.OOMMessage = &r.GPUOOMText
	case r.HostOOMText != "":
		h.OOMMessage = &r.HostOOMText
	}
	return h
}

// jobSU is the job's price (advisor.RecordCharge), rounded as the text
// and recommend print it; nil where there is no honest figure.
func jobSU(r *history.JobRecord, site *catalog.Site) *float64 {
	ch, ok := advisor.RecordCharge(site, r)
	if !ok {
		return nil
	}
	su := advisor.RoundSU(ch.SU)
	return &su
}

// peakCell is a job's GPU peak, with the framework whose peak is only a
// ceiling of the need: "60.0G (JAX)".
func peakCell(j historyJob) string {
	cell := mibOrDash(j.GPUMemPeakMiB)
	if h := j.GPUMemHeldBy; h != nil && h.Ceiling() && j.GPUMemPeakMiB != nil {
		cell += " (" + h.Software + ")"
	}
	return cell
}

func printHistory(w io.Writer, jobs []historyJob) {
	t := newTable(w)
	fmt.Fprintln(t, "JOB ID\tPROFILE\tSTATE\tEXIT\tELAPSED\tCPUS\tMEM\tMAX RSS\tGPU PEAK\tOOM\tWORK\tSU")
	for _, j := range jobs {
		state := j.State
		if j.Placeholder {
			state += "?"
		}
		exit := "-"
		if j.ExitCode != nil && j.ExitSignal != nil {
			exit = fmt.Sprintf("%d:%d", *j.ExitCode, *j.ExitSignal)
		}
		elapsed := "-"
		if j.ElapsedS != nil {
			elapsed = slurm.FormatDuration(time.Duration(*j.ElapsedS) * time.Second)
		}
		work := "-"
		if j.Work != nil {
			work = formatNumber(*j.Work) + " " + deref(j.WorkUnit)
		}
		su := "-"
		if j.SU != nil {
			su = advisor.FormatSU(*j.SU)
		}
		id := j.JobID
		if j.Earlier {
			id += " ~"
		}
		fmt.Fprintf(t, "%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\n", id, orDash(deref(j.Profile)), state, exit, elapsed,
			intOrDash(j.CPUs), mibOrDash(j.ReqMemMiB), rssOrDash(j.MaxRSSMiB), peakCell(j), orDash(deref(j.OOM)), work, su)
	}
	t.Flush()
	earlier, fromSite := 0, 0
	for _, j := range jobs {
		if j.Earlier {
			earlier++
		}
		if j.History == "site" {
			fromSite++
		}
	}
	if earlier > 0 {
		fmt.Fprintf(w, "%s of an earlier version of this script (marked ~)\n", textutil.Plural(earlier, "run"))
	}
	switch {
	case fromSite > 0 && fromSite == len(jobs):
		fmt.Fprintln(w, "all from the site-wide history")
	case fromSite > 0:
		fmt.Fprintf(w, "%d of these %d jobs are from the site-wide history, the others from yours\n", fromSite, len(jobs))
	}
}

func strPtr(s string) *string {
	if s == "" {
		return nil
	}
	return &s
}

func deref(s *string) string {
	if s == nil {
		return ""
	}
	return *s
}

func roundPtr(f *float64) *float64 {
	if f == nil {
		return nil
	}
	v := math.Round(*f*10) / 10
	return &v
}

func intOrDash(n *int64) string {
	if n == nil {
		return "-"
	}
	return fmt.Sprint(*n)
}

// mibOrDash prints a size in MiB as "512M" or "5.7G".
func mibOrDash(f *float64) string {
	switch {
	case f == nil:
		return "-"
	case *f >= 1024:
		return fmt.Sprintf("%.1fG", *f/1024)
	case *f < 10:
		return fmt.Sprintf("%.1fM", *f)
	default:
		return fmt.Sprintf("%.0fM", *f)
	}
}

// rssOrDash is a peak RSS, or "-" where sacct took no sample (it would
// print as 0.0M).
func rssOrDash(f *float64) string {
	if f != nil && *f < 0.05 {
		return "-"
	}
	return mibOrDash(f)
}
