package session

import (
	"strings"
	"testing"
)

// The text says what the advice rests on, a row per profile with the one
// recommended marked, the advice, the change and how a session is priced.
func TestWriteText(t *testing.T) {
	var b strings.Builder
	Judge(Request{Name: jupyter, User: "alice", Site: wulver(t)}, sessions(5, "full", monitorPeak(2.9*1024))).WriteText(&b)
	for _, want := range []string{
		"sessions named sys/dashboard/sys/jupyter of alice on wulver: 5 ended sessions, 5 with GPU memory evidence\n",
		"900     full     TIMEOUT  02:00:00  2.9 GiB (monitor)  -\n",
		"the newest asked for full with 1 CPU and 4.0 GiB of memory: 17 SU per hour held\n",
		"GPU memory need: 2.9 GiB\n",
		"*1g.10gb  low       3     needs 2.9 GiB of 9.5 GiB usable (31%)",
		"\nrecommend 1g.10gb: your last 5 sessions peaked at 2.9 GiB: 1g.10gb is enough, 3 SU/h instead of 17\n",
		"change: choose 1g.10gb in the form of sys/dashboard/sys/jupyter in place of full (it asks Slurm for --gres=gpu:a100_10g:1)\n",
		"priced: SU per hour held",
	} {
		if !strings.Contains(b.String(), want) {
			t.Errorf("no %q in:\n%s", want, b.String())
		}
	}
}

// salloc's sessions are told the option to change; nothing to change is
// no line; no session is one line.
func TestWriteTextChangesAndNothing(t *testing.T) {
	var b strings.Builder
	recs := sessions(2, "full", monitorPeak(12*1024))
	for i := range recs {
		recs[i].Name = "interactive"
	}
	Judge(Request{Name: "interactive", User: "alice", Site: wulver(t)}, recs).WriteText(&b)
	if !strings.Contains(b.String(), "change: salloc --gres=gpu:a100_20g:1 (or srun --pty --gres=gpu:a100_20g:1) in place of --gres=gpu:a100:1\n") {
		t.Errorf("salloc:\n%s", b.String())
	}
	b.Reset()
	Judge(Request{Name: jupyter, User: "alice", Site: wulver(t)}, sessions(1, "1g.10gb", monitorPeak(1024))).WriteText(&b)
	if strings.Contains(b.String(), "change:") || !strings.Contains(b.String(), "1g.10gb, what you ask for, is the smallest that fits (3 SU/h)") {
		t.Errorf("nothing to change:\n%s", b.String())
	}
	b.Reset()
	Judge(Request{Name: jupyter, User: "alice", Site: wulver(t)}, nil).WriteText(&b)
	if strings.Count(b.String(), "\n") != 1 || !strings.HasPrefix(b.String(), "sessions named sys/dashboard/sys/jupyter of alice on wulver: no recommendation: no ended session") {
		t.Errorf("no session:\n%s", b.String())
	}
}
