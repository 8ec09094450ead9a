package session

import (
	"context"
	"strings"
	"testing"

	"github.com/migadvisor/migadvisor/advisor/base/history/historytest"
)

const dumpHeader = "JobIDRaw|JobID|Cluster|User|State|ExitCode|Submit|Start|End|NNodes|AllocCPUS|ReqMem|AllocTRES|TRESUsageInMax|JobName|Partition\n"

// row is a session's accounting record, and its step's with gres/gpumem,
// its peak ("" for none).
func row(id, user, name, day, gpumem string) string {
	times := "|2026-11-" + day + "T09:00:00|2026-11-" + day + "T09:01:00|2026-11-" + day + "T11:01:00|1|2|8G|"
	job := id + "|" + id + "|wulver|" + user + "|TIMEOUT|0:0" + times + "cpu=2,gres/gpu:a100=1,gres/gpu=1,mem=8G,node=1||" + name + "|gpu\n"
	if gpumem == "" {
		return job
	}
	return job + id + ".0|" + id + ".0|wulver|" + user + "|CANCELLED|0:15" + times + "cpu=2,gres/gpu=1,mem=8G,node=1|gres/gpu=1,gres/gpumem=" +
		gpumem + "|bash|gpu\n"
}

// Advise reads the user's history and the site's: the user's sessions of
// the name alone, a job both hold once (with the figure one of them has),
// newest first.
func TestAdviseReadsBothHistoriesOnce(t *testing.T) {
	site := wulver(t)
	own := historytest.FromDump(t, site, dumpHeader+row("10", "alice", jupyter, "10", "")+row("11", "alice", jupyter, "11", ""))
	shared := historytest.FromDump(t, site, dumpHeader+row("11", "alice", jupyter, "11", "2048M")+row("12", "alice", jupyter, "12", "1024M")+
		row("13", "bob", jupyter, "13", "70000M")+row("14", "alice", "interactive", "14", "70000M"))
	a, err := Advise(context.Background(), Request{Name: jupyter, User: "alice", Site: site}, own, shared)
	if err != nil {
		t.Fatal(err)
	}
	var ids []string
	for _, p := range a.Past {
		ids = append(ids, p.JobID)
	}
	if strings.Join(ids, " ") != "12 11 10" || a.WithMemory != 2 || *a.PeakMiB != 2048 || a.Recommended != "1g.10gb" || a.CPUs != 2 {
		t.Errorf("sessions %v, %d measured, peak %v, recommended %q, %d CPUs", ids, a.WithMemory, a.PeakMiB, a.Recommended, a.CPUs)
	}
	a, err = Advise(context.Background(), Request{Name: jupyter, User: "carol", Site: site}, own, shared)
	if want := "in your history at " + own.Path() + " and the site-wide history at " + shared.Path() + ":"; err != nil || !strings.Contains(a.Why, want) {
		t.Errorf("carol's sessions: %v, why %q, want %q", err, a.Why, want)
	}
	a, err = Advise(context.Background(), Request{Name: jupyter, User: "carol", Site: site}, nil)
	if err != nil || a.Sessions != 0 || !strings.Contains(a.Why, "in no history (there is none yet)") {
		t.Errorf("no history: %v %+v", err, a)
	}
}
