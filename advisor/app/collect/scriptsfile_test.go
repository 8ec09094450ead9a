package collect

import (
	"context"
	"fmt"
	"path/filepath"
	"strings"
	"testing"
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
			res, err := col.LinkScriptsFrom(ctx, file)
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
			left, err := col.Store.UnlinkedJobs(ctx, 100)
			if err != nil {
				t.Fatal(err)
			}
			var keys []string
			for _, j := range left {
				keys = append(keys, j.Cluster+"/"+j.Key)
			}
			if strings.Join(keys, " ") != "c1/40 c2/40" && strings.Join(keys, " ") != "c2/40 c1/40" {
				t.Errorf("left unlinked: %v, want both 40s", keys)
			}
		})
	}
}
