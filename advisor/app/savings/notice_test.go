package savings

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/migadvisor/migadvisor/catalog"
)

func noticeReport() *Report {
	return &Report{Site: "wulver", From: november.From, Until: november.Before, Scripts: []Script{
		{User: "alice", Name: "train", Path: "/home/alice/train.sh", Fingerprint: "aa11", Jobs: 3, RanOn: []string{"full"}, Recommended: "1g.10gb",
			Request: "--gres=gpu:a100_10g:1", RanRequest: "--gres=gpu:a100:1", TimeLimit: "20:00:00", SeenMiB: 3277, NeedMiB: 3932,
			MemoryKind: "peak", MeasuredBy: "jobstats", UsableMiB: 9728, RanS: 14400, RuntimeS: 26100, RuntimeMaxS: 67000, SUSpent: 60, SUThere: 30, SUSaved: 30},
		{User: "bob", Name: "sim", Path: "sacct:wulver/7", Fingerprint: "bb22", Jobs: 1, RanOn: []string{"full"}, Recommended: "2g.20gb",
			Request: "--gres=gpu:a100_20g:1", SeenMiB: 12000, NeedMiB: 12000, MemoryKind: "peak", MeasuredBy: "monitor", UsableMiB: 19968, SUSpent: 20, SUThere: 8, SUSaved: 12},
		{User: "alice", Name: "eval", CPUs: 4, MemMiB: 16384, Jobs: 2, RanOn: []string{"3g.40gb", "full"}, Recommended: "1g.10gb", Request: "--gres=gpu:a100_10g:1",
			SeenMiB: 1700, NeedMiB: 2040, MemoryKind: "peak", MeasuredBy: "sacct", UsableMiB: 9728, SUSpent: 30, SUThere: 10, SUSaved: 20},
	}}
}

func noticeSite(t *testing.T, r catalog.Report) *catalog.Site {
	s := site(t)
	s.Report = r
	return s
}

// One message per user, naming each of their scripts with its slice, SU
// and line; each is sent once per notify_every_days, and again after.
func TestNotifyOncePerPeriod(t *testing.T) {
	dir := t.TempDir()
	ledger := filepath.Join(dir, "notices.json")
	s := noticeSite(t, catalog.Report{NotifyContact: "hpc@example.edu", NotifyEveryDays: 30})
	now := time.Date(2026, 12, 1, 9, 0, 0, 0, time.UTC)
	req := NotifyRequest{Report: noticeReport(), Site: s, Ledger: ledger, Sender: DirSender{Dir: dir, Now: now}, Now: now}
	res, err := Notify(context.Background(), req)
	if err != nil || len(res.Notices) != 2 || res.Failed != 0 || res.Told != 0 {
		t.Fatalf("%v %+v", err, res)
	}
	body, err := os.ReadFile(filepath.Join(dir, "alice-20261201-090000.txt"))
	if err != nil {
		t.Fatal(err)
	}
	text := string(body)
	for _, want := range []string{"Subject: Your GPU jobs on NJIT Wulver could use a smaller GPU slice", "Hello alice,",
		"5 GPU jobs of yours", "about 50 SU less", "/home/alice/train.sh (jobs named “train”): 3 jobs on full; 1g.10gb would do.",
		"they used at most 3.2 GiB (measured by jobstats), 3.8 GiB with a margin for the script's edits since; 1g.10gb has 9.5 GiB.",
		"Time: a run took about 04:00:00 on full; expect about 07:15:00 on 1g.10gb, at most about 18:37:00.",
		"replace --gres=gpu:a100:1 with --gres=gpu:a100_10g:1 in the script's #SBATCH lines.", "#SBATCH --time=20:00:00",
		"jobs named “eval” with 4 CPUs and 16.0 GiB of memory: 2 jobs on 3g.40gb, full", "ask for it in the script: #SBATCH --gres=gpu:a100_10g:1",
		"migadvisor recommend /home/alice/train.sh", "again for 30 days", "hpc@example.edu"} {
		if !strings.Contains(text, want) {
			t.Errorf("alice's notice lacks %q:\n%s", want, text)
		}
	}
	if bob, _ := os.ReadFile(filepath.Join(dir, "bob-20261201-090000.txt")); strings.Contains(string(bob), "sacct:") || strings.Contains(string(bob), "alice") {
		t.Errorf("bob's notice:\n%s", bob)
	}
	// A week later: everyone was told.
	req.Now = now.AddDate(0, 0, 7)
	if res, err = Notify(context.Background(), req); err != nil || len(res.Notices) != 0 || res.Told != 3 {
		t.Errorf("a week later: %v %+v", err, res)
	}
	// A new script of alice's is news; the old ones are not.
	req.Report.Scripts = append(req.Report.Scripts, Script{User: "alice", Name: "new", Fingerprint: "cc33", Jobs: 1, RanOn: []string{"full"},
		Recommended: "1g.10gb", Request: "--gres=gpu:a100_10g:1", SUSpent: 20, SUThere: 6, SUSaved: 14})
	if res, err = Notify(context.Background(), req); err != nil || len(res.Notices) != 1 || res.Told != 3 ||
		!strings.Contains(res.Notices[0].Body, "“new”") || strings.Contains(res.Notices[0].Body, "train") {
		t.Errorf("a new script: %v %+v", err, res)
	}
	// Past the period, the old ones are due again.
	req.Now = now.AddDate(0, 0, 31)
	if res, err = Notify(context.Background(), req); err != nil || len(res.Notices) != 2 {
		t.Errorf("a month later: %v %+v", err, res)
	}
}

// A dry run builds the same messages and sends and records nothing.
func TestNotifyDryRun(t *testing.T) {
	dir := t.TempDir()
	ledger := filepath.Join(dir, "notices.json")
	now := time.Now()
	req := NotifyRequest{Report: noticeReport(), Site: noticeSite(t, catalog.Report{}), Ledger: ledger, Sender: DirSender{Dir: dir, Now: now},
		DryRun: true, Now: now}
	res, err := Notify(context.Background(), req)
	if err != nil || len(res.Notices) != 2 || !strings.HasSuffix(res.Notices[0].To, ".txt") {
		t.Fatalf("%v %+v", err, res)
	}
	if entries, _ := os.ReadDir(dir); len(entries) != 0 {
		t.Errorf("a dry run wrote %v", entries)
	}
}

// The mail command gets its argument vector, {user} and {subject}
// replaced, and the message on stdin; one that fails is counted and not
// recorded, and the others still go; a user name a command could misread
// is refused.
func TestNotifyThroughACommand(t *testing.T) {
	dir := t.TempDir()
	ledger := filepath.Join(dir, "notices.json")
	rep := noticeReport()
	rep.Scripts = append(rep.Scripts, Script{User: "-rf", Name: "x", Fingerprint: "dd44", Jobs: 1, SUSaved: 11})
	tee := CommandSender{Argv: []string{"/usr/bin/tee", filepath.Join(dir, "{user}.mail")}}
	res, err := Notify(context.Background(), NotifyRequest{Report: rep, Site: noticeSite(t, catalog.Report{}), Ledger: ledger, Sender: tee, Now: time.Now()})
	if err != nil || len(res.Notices) != 3 || res.Failed != 0 || res.Refused != 1 {
		t.Fatalf("%v %+v", err, res)
	}
	mail, err := os.ReadFile(filepath.Join(dir, "alice.mail"))
	if err != nil || string(mail) != res.Notices[0].Body {
		t.Errorf("alice's mail: %v\n%s", err, mail)
	}
	if n := res.Notices[2]; n.User != "-rf" || !strings.Contains(n.Err, "not one a notice can be addressed to") {
		t.Errorf("-rf: %+v", n)
	}
	// A command that fails: nothing recorded, so the next run tries again.
	fail := CommandSender{Argv: []string{"/bin/sh", "-c", "echo mailbox full >&2; exit 3"}}
	ledger2 := filepath.Join(dir, "other.json")
	res, err = Notify(context.Background(), NotifyRequest{Report: noticeReport(), Site: noticeSite(t, catalog.Report{}), Ledger: ledger2, Sender: fail, Now: time.Now()})
	if err != nil || res.Failed != 2 || !strings.Contains(res.Notices[0].Err, "exit status 3: mailbox full") {
		t.Fatalf("%v %+v", err, res)
	}
	if led, err := readLedger(ledger2); err != nil || len(led.Sent) != 0 {
		t.Errorf("a failed notice was recorded: %v %+v", err, led)
	}
}

// A ledger written by another version is refused, naming it.
func TestLedgerOfAnotherVersion(t *testing.T) {
	ledger := filepath.Join(t.TempDir(), "notices.json")
	os.WriteFile(ledger, []byte(`{"version": 9, "sent": {}}`), 0o600)
	_, err := Notify(context.Background(), NotifyRequest{Report: noticeReport(), Site: noticeSite(t, catalog.Report{}), Ledger: ledger,
		Sender: DirSender{Dir: t.TempDir()}, Now: time.Now()})
	if err == nil || !strings.Contains(err.Error(), ledger+": notice ledger format version 9 is not supported") {
		t.Errorf("%v", err)
	}
}

// A mail command that hangs, with a child of its own, is stopped whole at
// its timeout and said so; the run goes on.
func TestNotifyCommandThatHangs(t *testing.T) {
	hang := CommandSender{Argv: []string{"/bin/sh", "-c", "sleep 30 & sleep 30"}, Timeout: 300 * time.Millisecond}
	start := time.Now()
	res, err := Notify(context.Background(), NotifyRequest{Report: noticeReport(), Site: noticeSite(t, catalog.Report{}),
		Ledger: filepath.Join(t.TempDir(), "notices.json"), Sender: hang, Now: time.Now()})
	if err != nil || res.Failed != 2 || !strings.Contains(res.Notices[0].Err, "/bin/sh did not finish within 300ms: stopped") {
		t.Fatalf("%v %+v", err, res)
	}
	if d := time.Since(start); d > 10*time.Second {
		t.Errorf("two hung commands took %s", d)
	}
}

// A ledger that cannot be written stops the run before the first notice,
// which it would otherwise send again next time.
func TestNotifyNeedsAWritableLedger(t *testing.T) {
	dir := t.TempDir()
	mail := filepath.Join(dir, "mail")
	os.Mkdir(mail, 0o700)
	tee := CommandSender{Argv: []string{"/usr/bin/tee", filepath.Join(mail, "{user}")}}
	_, err := Notify(context.Background(), NotifyRequest{Report: noticeReport(), Site: noticeSite(t, catalog.Report{}),
		Ledger: filepath.Join(dir, "missing", "notices.json"), Sender: tee, Now: time.Now()})
	if err == nil || !strings.Contains(err.Error(), "notice ledger") {
		t.Errorf("%v", err)
	}
	if entries, _ := os.ReadDir(mail); len(entries) != 0 {
		t.Errorf("sent before the ledger was found unwritable: %v", entries)
	}
}

// Before the site file sets notices up, a dry run goes through nothing and
// says what is missing; a real run refuses.
func TestNewDeliveryBeforeSetup(t *testing.T) {
	now := time.Date(2026, 12, 1, 9, 0, 0, 0, time.UTC)
	d, err := NewDelivery(noticeSite(t, catalog.Report{}), "", true, now)
	if err != nil || d.Files || len(d.Unset) != 2 || !strings.Contains(d.Unset[0], "no notify_command") || !strings.Contains(d.Unset[1], "no notify_contact") {
		t.Fatalf("dry run, nothing set: %v %+v", err, d)
	}
	res, err := Notify(context.Background(), NotifyRequest{Report: noticeReport(), Site: noticeSite(t, catalog.Report{}), Ledger: filepath.Join(t.TempDir(), "n.json"),
		Sender: d.Sender, DryRun: true, Now: now, Unset: d.Unset})
	if err != nil || len(res.Notices) != 2 || res.Notices[0].To != "nowhere yet (no notify_command)" || len(res.Unset) != 2 {
		t.Errorf("dry run through nothing: %v %+v", err, res)
	}
	if _, err := NewDelivery(noticeSite(t, catalog.Report{}), "", false, now); err == nil {
		t.Error("a real run without notify_command was let through")
	}
	missing := filepath.Join(t.TempDir(), "missing")
	if d, err := NewDelivery(noticeSite(t, catalog.Report{NotifyContact: "hpc@example.edu"}), missing, true, now); err != nil || !d.Files || len(d.Unset) != 1 {
		t.Errorf("dry run, --notify-dir not there: %v %+v", err, d)
	}
	if _, err := NewDelivery(noticeSite(t, catalog.Report{}), missing, false, now); err == nil {
		t.Error("a real run into a missing --notify-dir was let through")
	}
	d, err = NewDelivery(noticeSite(t, catalog.Report{NotifyCommand: []string{"cat"}, NotifyContact: "hpc@example.edu"}), "", false, now)
	if _, ok := d.Sender.(CommandSender); err != nil || !ok || len(d.Unset) != 0 {
		t.Errorf("set up: %v %+v", err, d)
	}
}

// The command a notice would run is checked before anything is sent: one
// that is not there, not executable or not on PATH is said by a dry run
// (not configured yet) and refused by a real run, which would fail every
// notice.
func TestNewDeliveryChecksTheCommand(t *testing.T) {
	now := time.Date(2026, 12, 1, 9, 0, 0, 0, time.UTC)
	dir := t.TempDir()
	plain := filepath.Join(dir, "mail.txt")
	os.WriteFile(plain, nil, 0o644)
	t.Setenv("PATH", dir)
	for _, c := range []struct{ command, want string }{
		{"/usr/bin/no-such-mail", "/usr/bin/no-such-mail, which does not exist: install a mail command (mailutils, bsd-mailx or s-nail) or name one that is installed"},
		{plain, plain + ", which is not executable (-rw-r--r--)"},
		{dir, dir + ", which is a directory, not a command"},
		{"mailx", "mailx, which is not on PATH (" + dir + "): install a mail command (mailutils, bsd-mailx or s-nail) or name one that is installed"},
	} {
		site := noticeSite(t, catalog.Report{NotifyCommand: []string{c.command, "{user}"}, NotifyContact: "hpc@example.edu"})
		d, err := NewDelivery(site, "", true, now)
		want := "site wulver's notify_command runs " + c.want
		if err != nil || len(d.Unset) != 1 || d.Unset[0] != want+", so --notify would send nothing" {
			t.Errorf("dry run, %s: %v %q", c.command, err, d.Unset)
		}
		if _, err := NewDelivery(site, "", false, now); err == nil || err.Error() != "--notify: "+want+"; nothing was sent" {
			t.Errorf("real run, %s: %v", c.command, err)
		}
	}
}

// A user with scripts to measure alone is told the measurements, each
// with its command, and no recommend command: there is no listed script
// to run it on, and an empty line where one would be says nothing.
func TestMeasureOnlyNoticeEndsWithItsMeasurements(t *testing.T) {
	dir := t.TempDir()
	now := time.Date(2026, 12, 1, 9, 0, 0, 0, time.UTC)
	rep := &Report{Site: "wulver", From: november.From, Until: november.Before, ToMeasure: []Measure{
		{User: "uv123", Name: "run_md", Profile: "2g.20gb", Jobs: 5, RanOn: []string{"3g.40gb"}, SUPossible: 164, Why: "no GPU memory evidence yet",
			Command: "migadvisor recommend --probe --profiles 2g.20gb JOB.sh", Unknown: UnknownFit}}}
	res, err := Notify(context.Background(), NotifyRequest{Report: rep, Site: noticeSite(t, catalog.Report{NotifyEveryDays: 30}),
		Ledger: filepath.Join(dir, "notices.json"), Sender: DirSender{Dir: dir, Now: now}, DryRun: true, Now: now})
	if err != nil || len(res.Notices) != 1 {
		t.Fatalf("%v %+v", err, res)
	}
	body := res.Notices[0].Body
	if strings.Contains(body, "run recommend") {
		t.Errorf("a notice of measurements alone suggests a recommend command:\n%s", body)
	}
	for _, line := range strings.Split(body, "\n") {
		if line != "" && strings.TrimSpace(line) == "" {
			t.Errorf("a blank line of spaces in the notice:\n%q", body)
		}
	}
	want := "  To find out: migadvisor recommend --probe --profiles 2g.20gb JOB.sh\n\nThis note was written by migadvisor"
	if !strings.Contains(body, want) {
		t.Errorf("the notice does not go from its measurement to its signature:\n%s", body)
	}
}

// A script listed and worth measuring too, told of both, is one script
// left out the next time, not two.
func TestNotifyCountsAScriptToldOfOnce(t *testing.T) {
	dir := t.TempDir()
	now := time.Date(2026, 12, 1, 9, 0, 0, 0, time.UTC)
	rep := noticeReport()
	rep.Scripts[0].group = "alice train"
	rep.ToMeasure = []Measure{{User: "alice", Name: "train", Script: "/home/alice/train.sh", Profile: "2g.20gb", Jobs: 3, RanOn: []string{"full"},
		SUPossible: 20, Why: "no GPU memory evidence yet", Command: "migadvisor recommend --probe --profiles 2g.20gb /home/alice/train.sh",
		Unknown: UnknownFit, group: "alice train"}}
	req := NotifyRequest{Report: rep, Site: noticeSite(t, catalog.Report{NotifyEveryDays: 30}), Ledger: filepath.Join(dir, "notices.json"),
		Sender: DirSender{Dir: dir, Now: now}, Now: now}
	if res, err := Notify(context.Background(), req); err != nil || len(res.Notices) != 2 || res.Told != 0 {
		t.Fatalf("%v %+v", err, res)
	}
	req.Now = now.AddDate(0, 0, 7)
	if res, err := Notify(context.Background(), req); err != nil || len(res.Notices) != 0 || res.Told != 3 {
		t.Errorf("a week later: %v, %d notices, %d scripts left out; want alice's two and bob's one", err, len(res.Notices), res.Told)
	}
}

// A notice's saving is the sum of its scripts' savings rounded once, as
// the report's per-user row rounds it: 142.4 and 125.4 SU are 268 SU in
// both, not the 142 and 125 listed added up.
func TestNoticeRoundsItsSavingOnce(t *testing.T) {
	s := noticeSite(t, catalog.Report{NotifyEveryDays: 30})
	scripts := []Script{
		{User: "cd456", Name: "md-prod", Fingerprint: "ee55", Jobs: 5, RanOn: []string{"full"}, Recommended: "2g.20gb", SUSpent: 343, SUThere: 200, SUSaved: 142, saved: 142.4},
		{User: "cd456", Name: "jupyter", Session: true, Jobs: 5, RanOn: []string{"full"}, Recommended: "1g.10gb", SUSpent: 179, SUThere: 53.8, SUSaved: 125, saved: 125.4},
	}
	n := compose(&Report{Site: "wulver", From: november.From, Until: november.Before}, s, s.Report, "cd456", scripts)
	if !strings.Contains(n.Body, "about 268 SU less") {
		t.Errorf("the notice's saving is not the user's row's, 268 SU:\n%s", n.Body)
	}
}
