package savings

import (
	"context"
	"encoding/csv"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/migadvisor/migadvisor/advisor"
	"github.com/migadvisor/migadvisor/advisor/app/index"
	"github.com/migadvisor/migadvisor/advisor/base/history"
	"github.com/migadvisor/migadvisor/advisor/base/history/historytest"
	"github.com/migadvisor/migadvisor/advisor/base/memory"
	"github.com/migadvisor/migadvisor/advisor/base/runmodel"
	"github.com/migadvisor/migadvisor/catalog"
	"github.com/migadvisor/migadvisor/slurm"
)

// The histories the cross-checks judge: one user per script, so that the
// report's verdict on each can be read alone (Request.User).

// agreeHeader is sacct's header with the fields a script's request shows.
const agreeHeader = "JobIDRaw|JobID|Cluster|User|Account|Partition|QOS|State|ExitCode|Submit|Start|End|ElapsedRaw|TimelimitRaw|AllocCPUS|ReqMem|AllocTRES|WorkDir|AdminComment|JobName\n"

// agreeRun is one job of a history: its GPU type, state, elapsed seconds,
// jobstats' AdminComment and what its output printed ("": none).
type agreeRun struct {
	gpu, state string
	seconds    int
	comment    string
	output     string
}

// agreeCase is a user's script and its runs.
type agreeCase struct {
	user    string
	command string // what the script runs; "": python3 USER.py
	runs    []agreeRun
	// smaller: recommend is expected to advise a profile smaller than the
	// whole GPU the script asks for (else the case proves nothing).
	smaller bool
}

const (
	monitorLine = "MIGADVISOR_GPU peak_mib=%d used_peak_mib=%d total_mib=81559 samples=120 scope=tree util=mean:20,max:40 device=NVIDIA A100-SXM4-80GB\n"
	torchLine   = "MIGADVISOR_VERSION torch 2.11\n"
)

// oomSliceText is PyTorch's message on 1g.10gb: 8.4 GiB in use and 2 GiB
// more asked for, so the job needs at least 10.4 GiB.
const oomSliceText = "torch.OutOfMemoryError: CUDA out of memory. Tried to allocate 2.00 GiB. GPU 0 has a total capacity of 9.50 GiB " +
	"of which 1.10 GiB is free. Including non-PyTorch memory, this process has 8.40 GiB memory in use.\n"

func peakOutput(mib int) string { return fmt.Sprintf(monitorLine, mib, mib) }

func agreeCases() []agreeCase {
	full := func(state string, seconds int, comment, output string) agreeRun {
		return agreeRun{"a100", state, seconds, comment, output}
	}
	return []agreeCase{
		// The quick start: completed on 1g.10gb and on the whole GPU, with
		// no GPU memory figure at all.
		{user: "quick", smaller: true, runs: []agreeRun{
			{"a100_10g", "COMPLETED", 4800, "", ""}, {"a100_10g", "COMPLETED", 4900, "", ""},
			full("COMPLETED", 3600, "", ""), full("COMPLETED", 3650, "", "")}},
		// The monitor's peak, 4 GiB, on the whole GPU and 3g.40gb.
		{user: "peak", command: "srun ./solver", smaller: true, runs: []agreeRun{
			full("COMPLETED", 3600, "", peakOutput(4096)), full("COMPLETED", 3620, "", peakOutput(4096)),
			{"a100_40g", "COMPLETED", 4000, "", peakOutput(4096)}, {"a100_40g", "COMPLETED", 4050, "", peakOutput(4096)}}},
		// Out of memory on 1g.10gb; completed on the whole GPU with no figure.
		{user: "oom", smaller: true, runs: []agreeRun{
			{"a100_10g", "FAILED", 600, "", oomSliceText},
			full("COMPLETED", 3600, "", ""), full("COMPLETED", 3640, "", "")}},
		// PyTorch's cache held 6 GiB of the whole GPU: a ceiling, not a need.
		{user: "torch", smaller: true, runs: []agreeRun{
			full("COMPLETED", 3600, "", torchLine+peakOutput(6144)), full("COMPLETED", 3630, "", torchLine+peakOutput(6144))}},
		// Measured on the whole GPU only, by jobstats: 3 GiB.
		{user: "fullonly", smaller: true, runs: []agreeRun{
			full("COMPLETED", 3600, jobstats(3, 80, 10), ""), full("COMPLETED", 3610, jobstats(3, 80, 10), "")}},
		// GROMACS, measured on the whole GPU only: scaled like the reference
		// benchmark it looks like.
		{user: "md", command: "gmx mdrun -deffnm md -nb gpu", smaller: true, runs: []agreeRun{
			full("COMPLETED", 3600, jobstats(2, 80, 60), ""), full("COMPLETED", 3610, jobstats(2, 80, 60), "")}},
		// The whole GPU only, with no figure: nothing tells a slice would do.
		{user: "unmeasured", runs: []agreeRun{full("COMPLETED", 3600, "", ""), full("COMPLETED", 3620, "", "")}},
		// 70 GiB of the whole GPU: right where it is.
		{user: "big", runs: []agreeRun{
			full("COMPLETED", 3600, jobstats(70, 80, 90), ""), full("COMPLETED", 3600, jobstats(70, 80, 90), "")}},
	}
}

// agreeScript is a case's script: a whole A100, with the resources its
// jobs' accounting shows.
func agreeScript(name, command string) string {
	if command == "" {
		command = "python3 " + name + ".py"
	}
	return "#!/bin/bash\n#SBATCH --job-name=" + name + "\n#SBATCH --partition=gpu\n#SBATCH --qos=standard\n#SBATCH --account=abc123\n" +
		"#SBATCH --ntasks=1\n#SBATCH --cpus-per-task=4\n#SBATCH --mem=16G\n#SBATCH --gres=gpu:a100:1\n#SBATCH --time=03:00:00\n" +
		command + "\n"
}

// agreeWorld is the cases' history, each job linked to its script and its
// output scanned, as a site's collect files them.
type agreeWorld struct {
	site    *catalog.Site
	st      *history.Store
	dir     string
	scripts map[string]string // user → the script's path
	ran     map[string][]string
}

func buildAgreeWorld(t *testing.T, cases []agreeCase) *agreeWorld {
	t.Helper()
	ctx := context.Background()
	w := &agreeWorld{site: site(t), dir: t.TempDir(), scripts: map[string]string{}, ran: map[string][]string{}}
	var dump strings.Builder
	dump.WriteString(agreeHeader)
	type output struct{ id, text string }
	var outputs []output
	var subs []history.Submission
	id := 1000
	for _, c := range cases {
		path := filepath.Join(w.dir, c.user, c.user+".sh")
		if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(path, []byte(agreeScript(c.user, c.command)), 0o644); err != nil {
			t.Fatal(err)
		}
		s, err := slurm.ReadScript(path)
		if err != nil {
			t.Fatal(err)
		}
		w.scripts[c.user] = path
		for i, r := range c.runs {
			id++
			end := time.Date(2026, 11, 2+i, 10, 0, 0, 0, time.Local)
			start := end.Add(-time.Duration(r.seconds) * time.Second)
			f := func(t time.Time) string { return t.Format("2006-01-02T15:04:05") }
			fmt.Fprintf(&dump, "%d|%d|wulver|%s|abc123|gpu|standard|%s|%s|%s|%s|%s|%d|180|4|16G|cpu=4,gres/gpu:%s=1,gres/gpu=1,mem=16G,node=1|%s|%s|%s\n",
				id, id, c.user, r.state, map[bool]string{true: "1:0", false: "0:0"}[r.state == "FAILED"], f(start), f(start), f(end),
				r.seconds, r.gpu, filepath.Dir(path), r.comment, c.user)
			subs = append(subs, history.Submission{Cluster: "wulver", JobID: fmt.Sprint(id), Fingerprint: s.Fingerprint(), Source: path,
				Script: path, Submitted: start})
			if r.output != "" {
				outputs = append(outputs, output{fmt.Sprint(id), r.output})
			}
			if r.state == "COMPLETED" {
				w.ran[c.user] = append(w.ran[c.user], w.site.ProfileNameOf(r.gpu, 1))
			}
		}
	}
	w.st = historytest.FromDump(t, w.site, dump.String())
	if err := w.st.RecordSubmissions(ctx, subs); err != nil {
		t.Fatal(err)
	}
	for _, o := range outputs {
		ev, err := slurm.ScanOutput(strings.NewReader(o.text), slurm.ScanOptions{})
		if err != nil {
			t.Fatal(err)
		}
		if err := w.st.RecordOutput(ctx, "wulver", o.id, filepath.Join(w.dir, "slurm-"+o.id+".out"), int64(len(o.text)), time.Now(), ev); err != nil {
			t.Fatal(err)
		}
	}
	return w
}

var agreeNow = time.Date(2026, 12, 1, 0, 0, 0, 0, time.Local)

// recommend is `migadvisor recommend SCRIPT` run by the script's user, with
// the peers beside the history.
func (w *agreeWorld) recommend(t *testing.T, user string, peers index.PeerSet) *advisor.Recommendation {
	t.Helper()
	path := w.scripts[user]
	s, err := slurm.ReadScript(path)
	if err != nil {
		t.Fatal(err)
	}
	open := func(ctx context.Context, p string) (*history.Store, error) {
		return history.OpenWith(ctx, p, history.Options{ReadOnly: true})
	}
	rec, err := advisor.Advise(context.Background(), advisor.AdviseRequest{Path: path, Script: s, Site: w.site, UserDB: w.st.Path(),
		User: user, Now: agreeNow, SubmitDir: filepath.Dir(path),
		Peers: func(fp string) ([]runmodel.Peer, error) { return peers.Except(fp), nil }},
		advisor.AdviseDeps{Open: advisor.HistoryOpeners{Own: open, SiteWide: open}})
	if err != nil {
		t.Fatalf("%s: recommend: %v", user, err)
	}
	return rec
}

// wrapper is the sbatch wrapper's advice for `sbatch SCRIPT`: the
// script's runs from the site's published advice index, judged as
// wrapper.advise judges them.
func (w *agreeWorld) wrapper(t *testing.T, user string, idx *index.Reader) *advisor.Recommendation {
	t.Helper()
	path := w.scripts[user]
	s, err := slurm.ReadScript(path)
	if err != nil {
		t.Fatal(err)
	}
	runs, err := index.ScriptRuns(advisor.KeyOf(path, s, w.site, user), nil, idx)
	if err != nil || len(runs) == 0 {
		t.Fatalf("%s: the advice index holds %d runs: %v", user, len(runs), err)
	}
	cl := slurm.ParseCommandLine([]string{path})
	job := advisor.Job{Script: path, Fingerprint: s.Fingerprint(), Resources: cl.Resources(s, nil), Runs: runs,
		QueueWaitS: map[string]float64{}, Now: agreeNow, User: user, Reads: s}
	if advisor.NeedsPrior(runs) {
		set, err := index.ReadPeers(nil, idx)
		if err != nil {
			t.Fatal(err)
		}
		job.Peers = set.Except(s.Fingerprint())
		if refs, ok := catalog.ReferenceFor(w.site); ok {
			job.Resembles, _ = advisor.RecogniseWorkload(refs, s)
		}
	}
	rec, err := advisor.Recommend(w.site, job, advisor.Options{})
	if err != nil {
		t.Fatalf("%s: the wrapper's recommend: %v", user, err)
	}
	return rec
}

func profileOf(rec *advisor.Recommendation) string {
	if rec.Recommended == nil {
		return ""
	}
	return *rec.Recommended
}

// publish writes the history's snapshot and advice index, as collect
// --publish does, and opens the index.
func (w *agreeWorld) publish(t *testing.T) (*index.Reader, index.PeerSet) {
	t.Helper()
	dir := filepath.Join(w.dir, "published")
	if err := os.Mkdir(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	p, err := index.Publish(context.Background(), w.st, dir)
	if err != nil {
		t.Fatal(err)
	}
	idx, err := index.Open(p.Index)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { idx.Close() })
	peers, err := index.ReadPeers(nil, idx)
	if err != nil {
		t.Fatal(err)
	}
	return idx, peers
}

// One judgement, said the same everywhere: for each history, recommend,
// the wrapper (from the published advice index) and the admins' report
// name the same profile; where it is smaller than the one the jobs ran
// on, the report counts their saving, and where recommend leaves a
// smaller slice to a probe for want of memory evidence, the report says
// the jobs were not judged, and why.
func TestRecommendWrapperAndReportAgree(t *testing.T) {
	cases := agreeCases()
	w := buildAgreeWorld(t, cases)
	idx, peers := w.publish(t)
	order := w.site.ProfilesBySize()
	rank := func(p string) int {
		return slices.IndexFunc(order, func(q *catalog.Profile) bool { return q.Name == p })
	}
	for _, c := range cases {
		t.Run(c.user, func(t *testing.T) {
			rec := w.recommend(t, c.user, peers)
			wr := w.wrapper(t, c.user, idx)
			want := profileOf(rec)
			if got := profileOf(wr); got != want {
				t.Errorf("recommend advises %q but the wrapper, from the advice index, %q.", want, got)
			}
			if c.smaller != (want != "" && rank(want) < rank("full")) {
				t.Fatalf("recommend advises %q (%s), which is not what this history was built to show.", want, rec.Reason)
			}
			rep, err := Build(context.Background(), w.st, Request{Site: w.site, Period: november, User: c.user,
				Thresholds: catalog.Report{MinSUSaved: 0, MinRuns: 1}, Peers: peers.Except})
			if err != nil {
				t.Fatal(err)
			}
			// The period's jobs that completed on a bigger profile than
			// recommend's: the ones the report must count.
			bigger := 0
			for _, p := range w.ran[c.user] {
				if want != "" && rank(p) > rank(want) {
					bigger++
				}
			}
			switch {
			case bigger > 0 && len(rep.Scripts) != 1:
				t.Fatalf("recommend advises %s for %d jobs that ran on a bigger profile, but the report lists %d scripts and leaves unjudged %+v.",
					want, bigger, len(rep.Scripts), rep.Unjudged)
			case bigger > 0:
				sc := rep.Scripts[0]
				if sc.Recommended != want || sc.Jobs != bigger || sc.SUSaved <= 0 || rep.Total.Smaller != bigger {
					t.Errorf("recommend advises %s for %d jobs, but the report says %s for %d jobs saving %g SU.", want, bigger, sc.Recommended, sc.Jobs, sc.SUSaved)
				}
			case len(rep.Scripts) != 0 || rep.Total.Smaller != 0:
				t.Errorf("recommend advises %q, nothing smaller, but the report counts %d jobs for a smaller slice.", want, rep.Total.Smaller)
			}
			// A probe of a smaller profile than the jobs ran on is
			// recommend's "not known yet": the report's "not judged", for
			// the reason the memory evidence gives.
			probes := rec.NextStep.Kind == advisor.NextProbe && slices.ContainsFunc(rec.NextStep.Profiles, func(p string) bool {
				pa := slices.IndexFunc(rec.Profiles, func(pa advisor.ProfileAdvice) bool { return pa.Profile == p })
				return rank(p) < rank("full") && pa >= 0 && rec.Profiles[pa].OOMRisk == memory.RiskUnknown
			})
			unjudged := 0
			for _, u := range rep.Unjudged {
				unjudged += u.Jobs
				if !strings.Contains(u.Reason, "GPU memory") {
					t.Errorf("the report leaves %d jobs unjudged for %q, which says nothing of the GPU memory evidence recommend lacks.", u.Jobs, u.Reason)
				}
			}
			if bigger == 0 && probes != (unjudged > 0) {
				t.Errorf("recommend's next step is %q, but the report leaves %d jobs unjudged (%+v).", rec.Next, unjudged, rep.Unjudged)
			}
		})
	}
}

// Words follow what the evidence proves: where recommend judged a script
// by an out-of-memory message's bound, the report's reason, the user's
// notice and the CSV say "at least"; by a caching framework's peak, "at
// most", held by its cache; by a peak, what the jobs used; by runs alone,
// the runs that completed.
func TestMemoryWordsFollowTheEvidence(t *testing.T) {
	cases := agreeCases()
	w := buildAgreeWorld(t, cases)
	_, peers := w.publish(t)
	rep, err := Build(context.Background(), w.st, Request{Site: w.site, Period: november, Thresholds: catalog.Report{MinSUSaved: 0, MinRuns: 1},
		Peers: peers.Except})
	if err != nil {
		t.Fatal(err)
	}
	var csvText strings.Builder
	if err := rep.WriteCSV(&csvText); err != nil {
		t.Fatal(err)
	}
	rows, err := csv.NewReader(strings.NewReader(csvText.String())).ReadAll()
	if err != nil {
		t.Fatal(err)
	}
	kinds := map[string]bool{}
	for _, sc := range rep.Scripts {
		rec := w.recommend(t, sc.User, peers)
		fig, kind := rec.GPUMemNeed, ""
		if fig == nil {
			fig = rec.GPUMemCeiling
		}
		if fig != nil {
			kind = fig.Kind
		}
		kinds[kind] = true
		notice := compose(rep, w.site, w.site.Report.WithDefaults(), sc.User, []Script{sc}).Body
		var says, never []string
		switch kind {
		case memory.NeedOOM:
			says = []string{"needs at least " + memory.FormatMiB(fig.MiB), "they need at least " + memory.FormatMiB(fig.MiB)}
			never = []string{"used at most", "needs " + memory.FormatMiB(fig.MiB)}
		case memory.NeedCeiling:
			held := rec.GPUMemHolder.Software + "'s cache"
			if rec.GPUMemHolder.Kind == memory.HolderInterpreted {
				held = rec.GPUMemHolder.Software
			}
			says = []string{"needs at most " + memory.FormatMiB(fig.MiB), "they need at most " + memory.FormatMiB(fig.MiB), "held by " + held,
				"the peak " + held + " held"}
			never = []string{"used at most", "needs " + memory.FormatMiB(fig.MiB)}
		case "":
			says = []string{"completed on " + sc.Recommended, "not measured, but they completed on " + sc.Recommended}
			never = []string{"0 MiB"}
		default:
			says = []string{"needs " + memory.FormatMiB(fig.MiB), "they used at most " + memory.FormatMiB(fig.SeenMiB)}
			never = []string{"at least"}
		}
		text := sc.Why + "\n" + notice
		for _, s := range says {
			if !strings.Contains(text, s) {
				t.Errorf("%s's script, judged by a GPU memory figure of kind %q, is not said to be %q: %s", sc.User, kind, s, text)
			}
		}
		for _, s := range never {
			if strings.Contains(text, s) {
				t.Errorf("%s's script, judged by a GPU memory figure of kind %q, is worded %q, which the evidence does not prove: %s", sc.User, kind, s, text)
			}
		}
		for _, row := range rows[1:] {
			if row[0] == sc.User && row[len(row)-1] != kind {
				t.Errorf("%s's CSV row says the memory figure is of kind %q, recommend's is %q.", sc.User, row[len(row)-1], kind)
			}
		}
	}
	for _, k := range []string{memory.NeedOOM, memory.NeedCeiling, memory.NeedPeak, ""} {
		if !kinds[k] {
			t.Errorf("no listed script was judged by a memory figure of kind %q, so its words go untested.", k)
		}
	}
	// The OOM list says what its figure proves too.
	for _, o := range rep.OOMs {
		if o.NeedMiB > 0 && o.NeedKind == "" {
			t.Errorf("job %s's GPU memory figure, %g MiB, does not say what it proves.", o.JobID, o.NeedMiB)
		}
	}
}
