package accuracy

import (
	"fmt"
	"testing"

	"github.com/migadvisor/migadvisor/advisor"
	"github.com/migadvisor/migadvisor/internal/testutil"
)

func TestScratchTrials(t *testing.T) {
	site := testutil.Wulver(t)
	wl := identified(site, ReferenceCases(site))
	m := Model{site, wl}
	for _, p := range []Protocol{LeaveOneOut, TwoKnown} {
		for _, c := range wl {
			for _, tr := range Trials(p, c) {
				refs := advisor.ReferencesOf(site, c.benchmark())
				s, _ := advisor.ExplainTimes(tr.Known, refs)
				sec, _, _, _ := m.Predict(c, tr.Known, tr.Target)
				var ks string
				for _, k := range tr.Known {
					ks += k.Profile + " "
				}
				fmt.Printf("%v %-25s %-30s -> %-8s %+6.1f%%  %s | %s\n", p, c.Name, ks, tr.Target.Profile, 100*(sec/tr.Target.Seconds-1), s.Form(), s.Why)
			}
		}
	}
}
