package monitor

import (
	"bytes"
	"strings"
	"testing"
	"time"
)

func TestParseArgs(t *testing.T) {
	env := func(m map[string]string) func(string) (string, bool) {
		return func(k string) (string, bool) { v, ok := m[k]; return v, ok }
	}
	cases := []struct {
		args          []string
		env           map[string]string
		interval, out string
		cmd, err      string
		help          bool
	}{
		{args: []string{"--", "python", "-u", "t.py"}, cmd: "python -u t.py"},
		{args: []string{"python", "--interval", "1s"}, cmd: "python --interval 1s"}, // CMD's own flags
		{args: []string{"--interval", "1s", "--out=x.json", "--", "a"}, interval: "1s", out: "x.json", cmd: "a"},
		{args: []string{"--interval=2s", "a"}, env: map[string]string{"MIGADVISOR_MONITOR_INTERVAL": "5s", "MIGADVISOR_MONITOR_OUT": "e.json"}, interval: "2s", out: "e.json", cmd: "a"},
		{args: []string{"--help"}, help: true},
		{args: []string{"--bogus", "a"}, err: "unknown flag --bogus (put the command after --)"},
		{args: []string{"--intrval", "1s", "a"}, err: "unknown flag --intrval (did you mean --interval?)"},
		{args: []string{"--ot=x.json", "a"}, err: "unknown flag --ot=x.json (did you mean --out?)"},
		{args: []string{"--out"}, err: "--out needs a value"},
		{args: []string{"--"}, err: "needs a command"},
		{args: nil, err: "needs a command"},
	}
	for _, c := range cases {
		f, cmd, err := parseArgs(c.args, env(c.env))
		if c.err != "" {
			if err == nil || !strings.Contains(err.Error(), c.err) {
				t.Errorf("%q: err %v, want %q", c.args, err, c.err)
			}
			continue
		}
		if err != nil || f.interval != c.interval || f.out != c.out || strings.Join(cmd, " ") != c.cmd || f.help != c.help {
			t.Errorf("%q: %+v %q %v", c.args, f, cmd, err)
		}
	}
}

func TestParseIntervalFailsOpen(t *testing.T) {
	var w bytes.Buffer
	for text, want := range map[string]time.Duration{"": DefaultInterval, "2s": 2 * time.Second, "soon": DefaultInterval, "1ms": minInterval} {
		w.Reset()
		if got := parseInterval(text, &w); got != want {
			t.Errorf("%q: %v, want %v", text, got, want)
		}
		if (want != 2*time.Second && text != "") != (w.Len() > 0) {
			t.Errorf("%q: warning %q", text, w.String())
		}
	}
}
