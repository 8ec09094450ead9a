package session

import (
	"bytes"
	"context"
	"slices"
	"strings"
	"testing"

	"github.com/migadvisor/migadvisor/advisor/base/history/historytest"
)

// Names lists the names a user's ended GPU sessions took in both
// histories, each session once, the name ended last first, with what
// tells them for sessions; another user's are not theirs.
func TestNamesListsTheUsersSessions(t *testing.T) {
	site := wulver(t)
	own := historytest.FromDump(t, site, dumpHeader+row("10", "alice", jupyter, "10", "")+row("11", "alice", jupyter, "11", "2048M")+
		row("12", "alice", "interactive", "12", "")+row("13", "alice", "train", "09", ""))
	shared := historytest.FromDump(t, site, dumpHeader+row("11", "alice", jupyter, "11", "2048M")+
		row("14", "alice", "ondemand/sys/dashboard/sys/rstudio", "13", "1024M")+row("15", "bob", "bobs", "14", ""))
	names, err := Names(context.Background(), "alice", own, shared)
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, n := range names {
		got = append(got, n.Name+":"+n.Kind+":"+strings.Join(n.Profiles, ",")+":"+string(rune('0'+n.Sessions))+string(rune('0'+n.WithMemory)))
	}
	want := []string{"ondemand/sys/dashboard/sys/rstudio:ondemand:full:11", "interactive:salloc:full:10",
		jupyter + ":ondemand:full:21", "train:no-script:full:10"}
	if !slices.Equal(got, want) {
		t.Errorf("names\n%q\nwant\n%q", got, want)
	}
	var text bytes.Buffer
	WriteNames(&text, names)
	for _, line := range []string{"SESSION ", "interactive ", "salloc/srun", "no script *", "* linked to no script",
		"next: migadvisor recommend --session ondemand/sys/dashboard/sys/rstudio\n"} {
		if !strings.Contains(text.String(), line) {
			t.Errorf("text lacks %q:\n%s", line, text.String())
		}
	}
	text.Reset()
	WriteNames(&text, []Name{{Name: "train", Kind: KindNoScript}, {Name: "interactive", Kind: KindUnnamed}})
	if !strings.HasSuffix(text.String(), "next: migadvisor recommend --session interactive\n") {
		t.Errorf("next names the newest a name tells for a session:\n%s", text.String())
	}
}

// A name with no session is answered with the names of the user's own
// sessions it may have been meant as, in words and in JSON; a name near
// none of them says where they are listed; a user with none is told how
// sessions reach a history, as before.
func TestAdviseSuggestsTheNamesOfTheUsersSessions(t *testing.T) {
	site := wulver(t)
	own := historytest.FromDump(t, site, dumpHeader+row("10", "alice", jupyter, "10", "")+row("11", "alice", jupyter, "11", "2048M")+
		row("12", "alice", "interactive", "12", ""))
	a, err := Advise(context.Background(), Request{Name: "jupyterlb", User: "alice", Site: site}, own)
	if err != nil {
		t.Fatal(err)
	}
	if !slices.Equal(a.DidYouMean, []string{jupyter}) ||
		!strings.HasSuffix(a.Why, ": did you mean "+jupyter+" (2 sessions)? 'migadvisor history --sessions' lists the names of yours") {
		t.Errorf("jupyterlb: %q, %q", a.DidYouMean, a.Why)
	}
	a, _ = Advise(context.Background(), Request{Name: "matlab", User: "alice", Site: site}, own)
	if len(a.DidYouMean) != 0 || !strings.HasSuffix(a.Why, "; your sessions took 2 other names, none like it: 'migadvisor history --sessions' lists them") {
		t.Errorf("matlab: %q, %q", a.DidYouMean, a.Why)
	}
	a, _ = Advise(context.Background(), Request{Name: "jupyterlb", User: "carol", Site: site}, own)
	if len(a.DidYouMean) != 0 || !strings.HasSuffix(a.Why, ": "+collectSessions) {
		t.Errorf("carol: %q, %q", a.DidYouMean, a.Why)
	}
}
