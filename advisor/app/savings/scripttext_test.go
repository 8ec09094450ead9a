package savings

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/migadvisor/migadvisor/advisor/base/history"
	"github.com/migadvisor/migadvisor/advisor/base/history/historytest"
	"github.com/migadvisor/migadvisor/catalog"
	"github.com/migadvisor/migadvisor/slurm"
)

// A site-wide history links jobs to the scripts slurmdbd stored, which no
// file holds: the report reads what such a script runs from the copy
// collect kept. ursula's script runs Python, whose framework's peak is a
// ceiling of its need, not the need: 2g.20gb, under the 26 GiB peak, is a
// slice to measure, not one it is known not to fit.
func TestReportReadsTheScriptSlurmdbdStored(t *testing.T) {
	s := site(t)
	text := []byte("#!/bin/bash\n#SBATCH --gres=gpu:a100:1\nmodule load Anaconda3\npython train_unet.py --size big\n")
	fp := slurm.Parse("x", text).Fingerprint()
	build := func(keep bool) string {
		dump := header
		for i, id := range []int{900, 901, 902} {
			dump += line(id, "ursula", "a100", "COMPLETED", fmt.Sprintf("2026-11-1%dT10:00", i), 3600, jobstats(26, 80, 45), "unet")
		}
		st := historytest.FromDump(t, s, dump)
		var subs []history.Submission
		for _, id := range []string{"900", "901", "902"} {
			subs = append(subs, history.Submission{Cluster: "wulver", JobID: id, Fingerprint: fp, Source: "sacct:wulver/" + id,
				Script: "sacct:wulver/" + id, Submitted: time.Now()})
		}
		ctx := context.Background()
		if err := st.RecordSubmissions(ctx, subs); err != nil {
			t.Fatal(err)
		}
		if keep {
			if err := st.KeepScriptTexts(map[string][]byte{fp: text}); err != nil {
				t.Fatal(err)
			}
		}
		rep, err := Build(ctx, st, Request{Site: s, Period: november, Thresholds: catalog.Report{MinSUSaved: 1, MinRuns: 2}})
		if err != nil {
			t.Fatal(err)
		}
		out, _ := json.Marshal(rep)
		return string(out)
	}
	without, with := build(false), build(true)
	t.Logf("without the text: %s", without)
	t.Logf("with it: %s", with)
	if strings.Contains(without, "Python") || !strings.Contains(with, "Python") {
		t.Errorf("the report names Python with the stored text (%v) and without (%v)", strings.Contains(with, "Python"), strings.Contains(without, "Python"))
	}
}
