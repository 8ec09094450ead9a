package savings

import (
	"testing"

	"github.com/migadvisor/migadvisor/advisor"
	"github.com/migadvisor/migadvisor/advisor/base/outcome"
)

// Why no profile is safe says what the script's runs did, and only that.
func TestUnfinishedSaysHowTheRunsEnded(t *testing.T) {
	cancelled := advisor.Run{State: "CANCELLED", Outcome: outcome.Outcome{Kind: outcome.Cancelled}}
	timedOut := advisor.Run{State: "TIMEOUT", TimedOut: true, Outcome: outcome.Outcome{Kind: outcome.TimeLimit}}
	failed := advisor.Run{State: "FAILED", Outcome: outcome.Outcome{Kind: outcome.Failed}}
	hostOOM := advisor.Run{State: "OUT_OF_MEMORY", HostOOM: true, Outcome: outcome.Outcome{Kind: outcome.HostOOM}}
	done := advisor.Run{State: "COMPLETED", Completed: true, Outcome: outcome.Outcome{Kind: outcome.Completed}}
	for _, c := range []struct {
		runs []advisor.Run
		want string
	}{
		{[]advisor.Run{cancelled, cancelled}, noProfile + " (runs that were cancelled before they completed)"},
		{[]advisor.Run{cancelled, timedOut, done}, noProfile + " (runs that reached their time limit or were cancelled before they completed)"},
		{[]advisor.Run{hostOOM, failed, timedOut}, noProfile + " (runs that reached their time limit, failed, or ran out of host memory)"},
		{[]advisor.Run{done}, noProfile},
	} {
		if got := unfinished(c.runs); got != c.want {
			t.Errorf("got  %q\nwant %q", got, c.want)
		}
	}
}
