package collect

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/migadvisor/migadvisor/slurm"
)

// batchScriptsInOrder is `sacct --batch-script` output of scripts by id,
// in the order of ids ("" for NONE).
func batchScriptsInOrder(ids []string, scripts map[string]string) string {
	var b strings.Builder
	for _, id := range ids {
		text := scripts[id]
		if text == "" {
			text = "NONE\n"
		}
		fmt.Fprintf(&b, "Batch Script for %s\n%s\n%s\n", id, strings.Repeat("-", 80), text)
	}
	return b.String()
}

// A saved file of scripts links jobs by the ids sacct names them by: a het
// job's components (30+0, 30+1) and an array's tasks (19_2) as much as
// JobIDRaw; an id the history holds under two cluster names is linked to
// neither (the file names no cluster); a job the file names twice is linked
// once; and the file is linked a chunk at a time, as if at once.
func TestLinkScriptsFromAFile(t *testing.T) {
	ctx := context.Background()
	for _, chunk := range []int{1, 2, 5000} {
		t.Run(fmt.Sprintf("chunk%d", chunk), func(t *testing.T) {
			was := linkChunk
			linkChunk = chunk
			t.Cleanup(func() { linkChunk = was })
			col := testCollector(t)
			dump := "JobIDRaw|JobID|Cluster|State|JobName|WorkDir|AllocTRES\n" +
				"30|30+0|c1|COMPLETED|het|/w|gres/gpu:a100=1\n" +
				"31|30+1|c1|COMPLETED|het|/w|gres/gpu:a100=1\n" +
				"20|19_2|c1|COMPLETED|sweep|/w|gres/gpu:a100_20g=1\n" +
				"40|40|c1|COMPLETED|twin|/w|gres/gpu:a100=1\n" +
				"50|50|c1|COMPLETED|plain|/w|gres/gpu:a100=1\n" +
				"51|51|c1|COMPLETED|none|/w|gres/gpu:a100=1\n" +
				"60|60|c1|COMPLETED|cpu|/w|cpu=1\n"
			// Another cluster's job 40, from a dump of its own.
			other := "JobIDRaw|JobID|Cluster|State|JobName|WorkDir|AllocTRES\n40|40|c2|COMPLETED|twin|/w|gres/gpu:a100=1\n"
			if res, err := col.ImportDump(ctx, strings.NewReader(other)); err != nil || res.New != 1 {
				t.Fatalf("import c2: %+v %v", res, err)
			}
			if res, err := col.ImportDump(ctx, strings.NewReader(dump)); err != nil || res.New != 7 {
				t.Fatalf("import: %+v %v", res, err)
			}
			script := "#!/bin/bash\npython train.py\n"
			ids := []string{"30+0", "30+1", "19_2", "40", "50", "51", "60", "50", "999"}
			file := filepath.Join(t.TempDir(), "scripts.txt")
			write(t, file, batchScriptsInOrder(ids, map[string]string{"30+0": script, "30+1": script, "19_2": script, "40": script,
				"50": script, "60": script}))
			res, err := col.LinkScriptsFrom(ctx, file, nil)
			if err != nil {
				t.Fatal(err)
			}
			// Linked: 30 and 31, 20, 50 (named twice, linked once).
			// Missing: 51 (NONE). Ambiguous: 40 under c1 and c2.
			// Unmatched: 60 (CPU-only), 999 (not held).
			want := ScriptsResult{Linked: 4, Missing: 1, From: file, Unmatched: 2, Ambiguous: 2,
				KindsUnread: "a saved file of scripts does not say which jobs ran a batch step"}
			if res != want {
				t.Errorf("got  %+v\nwant %+v", res, want)
			}
			if got := unlinkedKeys(t, col); got != "c1/40 c2/40" {
				t.Errorf("left unlinked: %s, want both 40s", got)
			}
		})
	}
}

// A file of scripts is of the jobs the collect read: a job of the same id
// under another cluster name is neither linked to its script nor counted
// ambiguous. Without the clusters, an array task held under two names is
// one ambiguous job a name, counted once, not once by each of its ids.
func TestLinkScriptsFromAFileKeepsToItsClusters(t *testing.T) {
	ctx := context.Background()
	for _, c := range []struct {
		clusters []string
		want     ScriptsResult
		unlinked string
	}{
		{[]string{"c1"}, ScriptsResult{Linked: 2}, "c2/20 c2/40"},
		{nil, ScriptsResult{Ambiguous: 4}, "c1/20 c1/40 c2/20 c2/40"},
	} {
		col := testCollector(t)
		for _, cluster := range []string{"c2", "c1"} {
			dump := "JobIDRaw|JobID|Cluster|State|JobName|WorkDir|AllocTRES\n" +
				"20|19_2|" + cluster + "|COMPLETED|sweep|/w|gres/gpu:a100_20g=1\n" +
				"40|40|" + cluster + "|COMPLETED|twin|/w|gres/gpu:a100=1\n"
			if res, err := col.ImportDump(ctx, strings.NewReader(dump)); err != nil || res.New != 2 {
				t.Fatalf("import %s: %+v %v", cluster, res, err)
			}
		}
		file := filepath.Join(t.TempDir(), "scripts.txt")
		script := "#!/bin/bash\npython train.py\n"
		write(t, file, batchScriptsInOrder([]string{"19_2", "40"}, map[string]string{"19_2": script, "40": script}))
		res, err := col.LinkScriptsFrom(ctx, file, c.clusters)
		if err != nil {
			t.Fatal(err)
		}
		c.want.From = file
		if res != c.want {
			t.Errorf("clusters %v: got %+v, want %+v", c.clusters, res, c.want)
		}
		if got := unlinkedKeys(t, col); got != c.unlinked {
			t.Errorf("clusters %v: left unlinked %s, want %s", c.clusters, got, c.unlinked)
		}
	}
}

// A script's text is kept before its jobs are linked: a linked job is not
// asked about again, so a text that could not be kept then must leave its
// jobs unlinked, for the next collect to link and keep.
func TestLinkScriptsKeepsTheTextFirst(t *testing.T) {
	ctx := context.Background()
	col := testCollector(t)
	dump := "JobIDRaw|JobID|Cluster|State|JobName|WorkDir|AllocTRES\n50|50|c1|COMPLETED|plain|/w|gres/gpu:a100=1\n"
	if _, err := col.ImportDump(ctx, strings.NewReader(dump)); err != nil {
		t.Fatal(err)
	}
	script := "#!/bin/bash\npython train.py\n"
	file := filepath.Join(t.TempDir(), "scripts.txt")
	write(t, file, batchScriptsInOrder([]string{"50"}, map[string]string{"50": script}))
	blocker := col.Store.Path() + ".scripts"
	write(t, blocker, "a file where the directory goes")
	if _, err := col.LinkScriptsFrom(ctx, file, nil); err == nil {
		t.Fatal("linked with nowhere to keep the text")
	}
	os.Remove(blocker)
	res, err := col.LinkScriptsFrom(ctx, file, nil)
	if err != nil || res.Linked != 1 {
		t.Fatalf("the next collect: %+v %v", res, err)
	}
	if got := col.Store.ScriptText(slurm.Parse("x", []byte(script)).Fingerprint()); string(got) != script {
		t.Errorf("text kept: %q", got)
	}
}

// unlinkedKeys are the jobs the history holds with no script linked, as
// CLUSTER/KEY, sorted.
func unlinkedKeys(t *testing.T, col *Collector) string {
	t.Helper()
	left, err := col.Store.UnlinkedJobs(context.Background(), 100)
	if err != nil {
		t.Fatal(err)
	}
	var keys []string
	for _, j := range left {
		keys = append(keys, j.Cluster+"/"+j.Key)
	}
	slices.Sort(keys)
	return strings.Join(keys, " ")
}
