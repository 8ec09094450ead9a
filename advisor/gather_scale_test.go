package advisor

import (
	"context"
	"database/sql"
	"fmt"
	"path/filepath"
	"testing"
	"time"

	"github.com/migadvisor/migadvisor/advisor/base/history"
	"github.com/migadvisor/migadvisor/advisor/base/history/historytest"
	"github.com/migadvisor/migadvisor/catalog"
	"github.com/migadvisor/migadvisor/catalog/catalogtest"
	"github.com/migadvisor/migadvisor/internal/procio"
	"github.com/migadvisor/migadvisor/slurm"
	"github.com/migadvisor/migadvisor/slurm/sacctgen"
)

// bytesRead is how many bytes this process has read from files so far
// (rchar: SQLite reads a history's pages itself, a page a call), or -1
// where /proc does not say.
func bytesRead() int64 { return procio.Count("rchar") }

// scaleHistory is a history of n generated jobs (sacctgen's) at path: half
// linked to slurmdbd's scripts, as a site-wide history collected with
// --scripts is, and twelve tracked as runs of known.
func scaleHistory(t *testing.T, site *catalog.Site, n int, known *slurm.Script) string {
	t.Helper()
	ctx := context.Background()
	st := historytest.FromReader(t, site, sacctgen.New(n, slurm.SacctDelimiter), "wulver")
	at := time.Unix(1_790_000_000, 0)
	var subs []history.Submission
	for i := 0; i < n; i += 2 {
		subs = append(subs, history.Submission{Cluster: "wulver", JobID: fmt.Sprint(sacctgen.FirstJobID + i),
			Fingerprint: fmt.Sprintf("fp%04d", i%500), Source: "sacct:x", Script: "sacct:x", Submitted: at})
	}
	for i := range 12 { // the same twelve jobs whatever n: their records depend on their ids
		subs = append(subs, history.Submission{Cluster: "wulver", JobID: fmt.Sprint(sacctgen.FirstJobID + 401 + 2*i),
			Fingerprint: known.Fingerprint(), Source: "known.sh", Script: "known.sh", Submitted: at})
	}
	if err := st.RecordSubmissions(ctx, subs); err != nil {
		t.Fatal(err)
	}
	return st.Path()
}

// What recommend and history read of a history does not grow with its
// jobs: every query is a look-up through an index, bounded by the script's
// jobs, its job name's, and the newest jobs of each profile that the queue
// waits are the median of. Measured as the pages the process reads (the
// bytes it reads over the history's page size) from a history of 2,000
// jobs and from one of 30,000, whose jobs table alone is 7 MB: a query that
// reads every job reads it. A job name's jobs are more in the larger one,
// each read with its page: 128 pages more is the bound.
func TestGatherReadsDoNotGrowWithTheHistory(t *testing.T) {
	if testing.Short() || bytesRead() < 0 {
		t.Skip("builds two histories; /proc/self/io says what was read")
	}
	ctx := context.Background()
	site := catalogtest.Wulver(t)
	dir := t.TempDir()
	script := func(name, text string) (string, *slurm.Script) {
		path := filepath.Join(dir, name)
		return path, catalogtest.WriteScript(t, path, text)
	}
	knownPath, known := script("known.sh", "#!/bin/bash\n#SBATCH --gres=gpu:a100_40g:1\n#SBATCH --time=4:00:00\npython train.py\n")
	newPath, fresh := script("new.sh", "#!/bin/bash\n#SBATCH -J fresh\n#SBATCH --gres=gpu:a100_20g:1\npython never_seen.py\n")
	namedPath, named := script("named.sh", "#!/bin/bash\n#SBATCH -J train-7\n#SBATCH --gres=gpu:a100_20g:1\npython other.py\n")
	small, large := scaleHistory(t, site, 2_000, known), scaleHistory(t, site, 30_000, known)
	cases := []struct {
		name     string
		path     string
		script   *slurm.Script
		siteWide bool
	}{
		{"own history, a new script", newPath, fresh, false},
		{"own history, a new script of a job name the history has", namedPath, named, false},
		{"own history, a script with runs", knownPath, known, false},
		{"site-wide history, a new script", newPath, fresh, true},
		{"site-wide history, a new script of a job name the history has", namedPath, named, true},
		{"site-wide history, a script with runs", knownPath, known, true},
	}
	for _, c := range cases {
		read := func(path string) int64 {
			st, err := history.OpenWith(ctx, path, history.Options{ReadOnly: true})
			if err != nil {
				t.Fatal(err)
			}
			defer st.Close()
			req := GatherRequest{Path: c.path, Script: c.script, WaitsSince: time.Unix(0, 0)}
			var own *history.Store
			var siteWide []*history.Store
			if req.User = "user7"; c.siteWide {
				siteWide = append(siteWide, st)
			} else {
				own = st
			}
			before := bytesRead()
			if _, err := GatherFor(ctx, site, req, own, siteWide...); err != nil {
				t.Fatal(err)
			}
			key := KeyOf(c.path, c.script, site, req.User)
			if _, err := History(ctx, &key, 100, own, siteWide...); err != nil {
				t.Fatal(err)
			}
			return bytesRead() - before
		}
		s, l := read(small)/pageSize(t, small), read(large)/pageSize(t, large)
		t.Logf("%s: %d pages read from 2,000 jobs, %d from 30,000", c.name, s, l)
		if l-s > 128 {
			t.Errorf("%s: %d pages read from 30,000 jobs, %d from 2,000", c.name, l, s)
		}
	}
}

// pageSize is the page size of the history at path, bytes.
func pageSize(t *testing.T, path string) int64 {
	t.Helper()
	db, err := sql.Open("sqlite3", "file:"+path+"?mode=ro")
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	var n int64
	if err := db.QueryRow("PRAGMA page_size").Scan(&n); err != nil || n <= 0 {
		t.Fatalf("the page size of %s: %d, %v", path, n, err)
	}
	return n
}
