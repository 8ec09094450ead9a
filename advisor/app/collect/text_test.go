package collect

import (
	"errors"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/migadvisor/migadvisor/slurm"
)

func TestSummaryWriteText(t *testing.T) {
	at := time.Date(2026, 11, 2, 8, 0, 0, 0, time.UTC)
	cases := []struct {
		name string
		sum  Summary
		want string
	}{
		{"nothing tracked", Summary{Source: SourceNone},
			"accounting: no tracked job is waiting for its record\njob output: 0 files read, 0 unchanged\n"},
		{"a dump", Summary{Source: "dump.psv", Read: 3, New: 2, Updated: 1, Stubs: 1, SkippedTotal: 2,
			Outputs: OutputSummary{Scanned: 4, Unchanged: 1, GPUOOMs: 1, Work: 2, GPUMemory: 1, Emulated: 2,
				Unread: []string{"a.out: truncated"}, Capped: []string{"big.out"}, Missing: []string{"7", "8"}}},
			"accounting (dump.psv): 3 jobs: 2 new, 1 updated, 0 unchanged, 1 still a placeholder record (run collect again in a few seconds)" +
				"; 2 records skipped\n" +
				"job output: 4 files read, 1 unchanged; 1 GPU OOM, work reported by 2 jobs, GPU memory measured in 1 job, 2 emulated runs\n" +
				"skipped: a.out: truncated\nbig.out is over 64 MiB: read its first and last 32 MiB only\n" +
				"no output file found for jobs 7, 8 (point --outputs at their directory)\n"},
		{"sacct, site-wide", Summary{Source: "sacct", Read: 1, Unchanged: 1, Jobstats: 3, JobstatsGPU: 1, BadJobstats: 1,
			BadJobstatsJobs: []BadSummary{{"9", "no JSON"}}, Window: &Window{Since: at, FromWatermark: true, Rechecked: 2, Watermark: at.Add(time.Hour)},
			UnknownToSlurm: []string{"99"}, Linked: 1, Unlinked: 2, Refiled: []RefiledJobs{{"local", "wulver", 1}, {"c", "wulver", 3}},
			Scripts: &ScriptsResult{Linked: 2, Missing: 1, Allocations: 3}, Store: &StoreReport{Store: "u@h:3306/db", Changes: 5},
			Published: &PublishSummary{Snapshot: "/p/history.db", Index: "/p/advice.idx", Scripts: 1, Runs: 2, From: "site store u@h:3306/db"}},
			"accounting (sacct): 1 job: 0 new, 0 updated, 1 unchanged\n" +
				"jobstats: GPU figures of 1 job read from AdminComment; 2 other summaries held none; " +
				"1 summaries could not be read, imported without them (job 9: no JSON)\n" +
				"window: since 2026-11-02 08:00:00 (where the last collect left off), and 2 jobs still running or pending asked about by id\n" +
				"the next collect starts at 2026-11-02 09:00:00\n" +
				"Slurm has no job 99: was the id mistyped?\n" +
				"2 submissions through the sbatch wrapper found no job in accounting a day later " +
				"(refused by sbatch? another user, name or directory?): dropped\n" +
				"1 submission through the sbatch wrapper linked to its job\n" +
				"1 job filed under cluster \"local\" is the same as wulver's: it is one record now, under wulver\n" +
				"3 jobs filed under cluster \"c\" are the same as wulver's: each is one record now, under wulver\n" +
				"scripts: 2 jobs linked from slurmdbd, 1 batch job without a stored script (AccountingStoreFlags=job_script?); " +
				"3 salloc or srun allocations, which have no batch script\n" +
				"job output: 0 files read, 0 unchanged\n" +
				"site store: 5 rows written or deleted in u@h:3306/db\n" +
				"published /p/history.db and /p/advice.idx (2 runs of 1 script) from the site store u@h:3306/db\n"},
		{"a window kept", Summary{Source: "sacct", Window: &Window{Since: at, Gap: at.Add(-time.Hour)}, Ambiguous: 2, Linked: 2,
			Scripts: &ScriptsResult{Missing: 2, KindsUnread: "sacct failed: x"},
			Store:   &StoreReport{Store: "u@h:3306/db"}, Published: &PublishSummary{Snapshot: "s", Index: "i", From: "/h.db"}},
			"accounting (sacct): 0 jobs: 0 new, 0 updated, 0 unchanged\n" +
				"window: since 2026-11-02 08:00:00\n" +
				"the next collect still starts at 2026-11-02 07:00:00: --since is later, and moving it would skip what lies between\n" +
				"2 submissions through the sbatch wrapper left unlinked as ambiguous (scripts of one job name submitted from one directory " +
				"at once, and slurmdbd has not stored their jobs' scripts yet): the next collect tries again\n" +
				"2 submissions through the sbatch wrapper linked to their jobs\n" +
				"scripts: 0 jobs linked from slurmdbd, 2 without a stored script (AccountingStoreFlags=job_script? or salloc and srun allocations, " +
				"which never have one: sacct could not tell them apart: sacct failed: x)\n" +
				"job output: 0 files read, 0 unchanged\n" +
				"site store: u@h:3306/db already had everything\n" +
				"published s and i (0 runs of 0 scripts)\n"},
		{"a dump with a job's record skipped", Summary{Source: "dump.psv", Read: 125, New: 125, StepsAlone: 1, SkippedTotal: 1},
			"accounting (dump.psv): 125 jobs: 125 new, 0 updated, 0 unchanged" +
				"; the steps alone of 1 more job whose own record was skipped or is not in the input; 1 record skipped\n" +
				"job output: 0 files read, 0 unchanged\n"},
		{"an empty dump", Summary{Source: "empty.psv"},
			"accounting (empty.psv): the dump holds no job\njob output: 0 files read, 0 unchanged\n"},
		{"a dump without End and User", Summary{Source: "dump.psv", Read: 2, New: 2,
			Lacks: []MissingFields{{[]string{"End"}, "without End a job is in no period's report"}, {[]string{"User"}, "without User no one is told"}}},
			"accounting (dump.psv): 2 jobs: 2 new, 0 updated, 0 unchanged\n" +
				"the dump lacks End and User, which the report and recommend need: without End a job is in no period's report, without User no one is told " +
				"(collect --help shows the sacct command that saves every field it reads)\n" +
				"job output: 0 files read, 0 unchanged\n"},
	}
	for _, c := range cases {
		var b strings.Builder
		c.sum.WriteText(&b)
		if b.String() != c.want {
			t.Errorf("%s:\n%s\nwant:\n%s", c.name, b.String(), c.want)
		}
	}
}

// The GPU types a collect could not place are named, the first
// unplacedShown, with what to add to the site file; an untyped GPU is
// said apart.
func TestSummaryWriteTextUnplaced(t *testing.T) {
	many := make([]GPUTypeJobs, unplacedShown+1)
	for i := range many {
		many[i] = GPUTypeJobs{fmt.Sprintf("t%d", i), 1}
	}
	cases := []struct {
		name   string
		types  []GPUTypeJobs
		others int
		want   string
	}{
		{"one", []GPUTypeJobs{{"h100_1g", 1}}, 0,
			"1 job on a GPU type this site file does not name: h100_1g (1); add it as gres_types in the site file\n"},
		{"two and untyped", []GPUTypeJobs{{"a", 3}, {"", 1}, {"b", 1}}, 0,
			"4 jobs on GPU types this site file does not name: a (3), b (1); add them as gres_types in the site file\n" +
				"1 job on a GPU of no type, which this site file gives no profile: set untyped_gpu in the site file\n"},
		{"untyped only", []GPUTypeJobs{{"", 2}}, 0,
			"2 jobs on GPUs of no type, which this site file gives no profile: set untyped_gpu in the site file\n"},
		{"past the kept", []GPUTypeJobs{{"a", 1}}, 5,
			"6 jobs on GPU types this site file does not name: a (1), others; add them as gres_types in the site file\n"},
		{"past the shown", many, 0,
			"11 jobs on GPU types this site file does not name: t0 (1), t1 (1), t2 (1), t3 (1), t4 (1), t5 (1), t6 (1), t7 (1), t8 (1), " +
				"t9 (1), others; add them as gres_types in the site file\n"},
	}
	for _, c := range cases {
		var b strings.Builder
		Summary{UnplacedGPUTypes: c.types, UnplacedOtherJobs: c.others}.writeUnplaced(&b)
		if b.String() != c.want {
			t.Errorf("%s:\n%s\nwant:\n%s", c.name, b.String(), c.want)
		}
	}
}

// The skipped records of a dump are named, the first skippedShown, and
// the rest counted.
func TestImportResultWriteSkipped(t *testing.T) {
	var r ImportResult
	for i := range skippedShown + 2 {
		r.Skipped = append(r.Skipped, &slurm.LineError{Line: i + 2, Err: errors.New("short")})
	}
	r.SkippedTotal = 30
	var b strings.Builder
	r.WriteSkipped(&b, "d.psv")
	lines := strings.Split(strings.TrimSuffix(b.String(), "\n"), "\n")
	want := fmt.Sprintf("d.psv: 10 more records skipped (--json lists the first %d)", slurm.MaxSkippedKept)
	if len(lines) != skippedShown+1 || lines[0] != "d.psv:2: skipped: short" || lines[skippedShown] != want {
		t.Errorf("WriteSkipped: %d lines, first %q, last %q; want %d, the last %q", len(lines), lines[0], lines[len(lines)-1], skippedShown+1, want)
	}
}

func TestNoSuchJob(t *testing.T) {
	for ids, want := range map[string]string{
		"5":   "Slurm has no job 5: was the id mistyped?",
		"5 6": "Slurm has no jobs 5, 6: were the ids mistyped?",
	} {
		if got := NoSuchJob(strings.Fields(ids)); got != want {
			t.Errorf("NoSuchJob(%s) = %q, want %q", ids, got, want)
		}
	}
}
