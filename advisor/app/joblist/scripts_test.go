package joblist

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/migadvisor/migadvisor/advisor/base/history"
	"github.com/migadvisor/migadvisor/advisor/base/history/historytest"
	"github.com/migadvisor/migadvisor/catalog/catalogtest"
)

const dumpHeader = "JobIDRaw|JobID|Cluster|User|State|ExitCode|Submit|Start|End|NNodes|AllocCPUS|ReqMem|AllocTRES|JobName|Partition\n"

func job(id, user, name, day, gpu string) string {
	return id + "|" + id + "|wulver|" + user + "|COMPLETED|0:0|2026-11-" + day + "T09:00:00|2026-11-" + day + "T09:01:00|2026-11-" + day +
		"T10:01:00|1|2|8G|cpu=2,gres/gpu:" + gpu + "=1,gres/gpu=1,mem=8G,node=1|" + name + "|gpu\n"
}

func link(t *testing.T, st *history.Store, subs ...history.Submission) {
	t.Helper()
	for i := range subs {
		subs[i].Cluster, subs[i].Submitted = "wulver", time.Now()
		if subs[i].Script == "" {
			subs[i].Script = subs[i].Source
		}
	}
	if err := st.RecordSubmissions(context.Background(), subs); err != nil {
		t.Fatal(err)
	}
}

// Scripts lists the scripts both histories link the user's jobs to, each
// job once, the one submitted last first, with where each was last seen
// (slurmdbd's copy for the site's), its profiles, most used first, and the
// history that first links it; another user's scripts are not listed.
func TestScriptsListsTheUsersScripts(t *testing.T) {
	site := catalogtest.Wulver(t)
	own := historytest.FromDump(t, site, dumpHeader+job("10", "alice", "train", "10", "a100_10g")+job("11", "alice", "train", "11", "a100")+
		job("12", "alice", "train", "12", "a100_10g")+job("13", "alice", "solo", "13", "a100")+job("14", "alice", "unlinked", "14", "a100"))
	link(t, own, history.Submission{JobID: "10", Fingerprint: "fp-train", Source: "/home/alice/train.sh"},
		history.Submission{JobID: "11", Fingerprint: "fp-train", Source: "/home/alice/train.sh"},
		history.Submission{JobID: "12", Fingerprint: "fp-train", Source: "/home/alice/train.sh"},
		history.Submission{JobID: "13", Fingerprint: "fp-solo", Source: "/home/alice/solo.sh"})
	shared := historytest.FromDump(t, site, dumpHeader+job("12", "alice", "train", "12", "a100_10g")+job("15", "alice", "md", "15", "a100_20g")+
		job("16", "bob", "bobs", "16", "a100"))
	link(t, shared, history.Submission{JobID: "12", Fingerprint: "fp-train", Source: "sacct:wulver/12"},
		history.Submission{JobID: "15", Fingerprint: "fp-md", Source: "sacct:wulver/15"},
		history.Submission{JobID: "16", Fingerprint: "fp-bob", Source: "sacct:wulver/16"})
	scripts, err := Scripts(context.Background(), "alice", own, shared)
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, s := range scripts {
		got = append(got, strings.Join([]string{s.Path, s.JobName, string(rune('0' + s.Jobs)), strings.Join(s.Profiles, ","), s.History}, " "))
	}
	want := "sacct:wulver/15 md 1 2g.20gb site|/home/alice/solo.sh solo 1 full own|/home/alice/train.sh train 3 1g.10gb,full own"
	if strings.Join(got, "|") != want {
		t.Errorf("scripts\n%s\nwant\n%s", strings.Join(got, "|"), want)
	}
	var text strings.Builder
	WriteScripts(&text, scripts)
	for _, line := range []string{"SCRIPT ", "sacct:CLUSTER/JOB: known from the copy", "next: migadvisor recommend /home/alice/solo.sh\n"} {
		if !strings.Contains(text.String(), line) {
			t.Errorf("text lacks %q:\n%s", line, text.String())
		}
	}
}
