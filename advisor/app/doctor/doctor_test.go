package doctor

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/migadvisor/migadvisor/advisor/app/index"
	"github.com/migadvisor/migadvisor/advisor/base/history/historytest"
	"github.com/migadvisor/migadvisor/catalog"
	"github.com/migadvisor/migadvisor/catalog/catalogtest"
)

// setup is a login node set up as the admin guide says: a system site
// file naming the published history and a mail command, a snapshot and an
// advice index published a moment ago, slurm.conf with cli_filter/lua and
// migadvisor's cli_filter.lua beside it, Slurm's sbatch on PATH.
type setup struct {
	dir, siteFile, shared, conf, prefix, slurmBin string
	env                                           map[string]string
	now                                           time.Time
}

const dump = "JobIDRaw|JobID|Cluster|User|State|ExitCode|Submit|Start|End|NNodes|AllocCPUS|ReqMem|AllocTRES|JobName|Partition\n" +
	"10|10|wulver|alice|COMPLETED|0:0|2026-11-10T09:00:00|2026-11-10T09:01:00|2026-11-10T10:01:00|1|2|8G|cpu=2,gres/gpu:a100=1,gres/gpu=1,mem=8G,node=1|train|gpu\n"

func newSetup(t *testing.T) *setup {
	t.Helper()
	dir := t.TempDir()
	s := &setup{dir: dir, siteFile: filepath.Join(dir, "etc", "site.toml"), shared: filepath.Join(dir, "shared"),
		conf: filepath.Join(dir, "slurm", "slurm.conf"), prefix: filepath.Join(dir, "opt"), slurmBin: filepath.Join(dir, "slurmbin"), now: time.Now()}
	t.Setenv("XDG_CONFIG_HOME", filepath.Join(dir, "config"))
	old := catalog.SystemSiteFile
	catalog.SystemSiteFile = s.siteFile
	t.Cleanup(func() { catalog.SystemSiteFile = old })

	st := historytest.FromDump(t, catalogtest.Wulver(t), dump)
	os.MkdirAll(s.shared, 0o755)
	os.Chmod(s.shared, 0o755)
	if _, err := index.Publish(context.Background(), st, s.shared); err != nil {
		t.Fatal(err)
	}
	mail := s.executable(t, "bin/mail")
	wulver, _ := catalog.BuiltinTOML("wulver")
	s.writeSite(t, string(wulver)+fmt.Sprintf("\n[history]\nsite_db = %q\n\n[report]\nnotify_command = [%q, \"{user}\"]\nnotify_contact = \"hpc@example.edu\"\n",
		filepath.Join(s.shared, "history.db"), mail))

	s.write(t, "slurm/slurm.conf", "ClusterName=wulver\nCliFilterPlugins=cli_filter/lua\n", 0o644)
	s.write(t, "slurm/cli_filter.lua", "-- cli_filter.lua: migadvisor's\nlocal PREFIX = [=="+"["+s.prefix+"]"+"==]\n", 0o644)
	s.executable(t, "opt/libexec/migadvisor/migadvisor-sbatch")
	s.executable(t, "slurmbin/sbatch")
	s.env = map[string]string{"SLURM_CONF": s.conf, "PATH": s.slurmBin}
	return s
}

func (s *setup) write(t *testing.T, rel, text string, mode os.FileMode) string {
	t.Helper()
	p := filepath.Join(s.dir, rel)
	os.MkdirAll(filepath.Dir(p), 0o755)
	if err := os.WriteFile(p, []byte(text), mode); err != nil {
		t.Fatal(err)
	}
	os.Chmod(p, mode)
	return p
}

func (s *setup) executable(t *testing.T, rel string) string {
	return s.write(t, rel, "#!/bin/sh\nexit 0\n", 0o755)
}

func (s *setup) writeSite(t *testing.T, text string) {
	t.Helper()
	os.MkdirAll(filepath.Dir(s.siteFile), 0o755)
	if err := os.WriteFile(s.siteFile, []byte(text), 0o644); err != nil {
		t.Fatal(err)
	}
}

func (s *setup) run() *Report {
	return Run(context.Background(), Request{Getenv: func(k string) string { return s.env[k] }, Now: s.now})
}

// statuses are the report's checks as "name:status", in order.
func statuses(r *Report) string {
	var out []string
	for _, c := range r.Checks {
		out = append(out, c.Name+":"+string(c.Status))
	}
	return strings.Join(out, " ")
}

// find is the first check of a name.
func find(r *Report, name string) Check {
	for _, c := range r.Checks {
		if c.Name == name {
			return c
		}
	}
	return Check{}
}

// Set up as the admin guide says, every check is ok and says what it found.
func TestDoctorAllOK(t *testing.T) {
	s := newSetup(t)
	r := s.run()
	if want := "site:ok site_history:ok advice_index:ok publish_dir:ok notify:ok submission:ok"; statuses(r) != want || !r.OK() || r.Warnings != 0 {
		t.Fatalf("statuses %s, want %s\n%+v", statuses(r), want, r.Checks)
	}
	for name, want := range map[string]string{
		"site":         "site wulver (NJIT Wulver) from " + s.siteFile + ", the system site file every user reads",
		"advice_index": filepath.Join(s.shared, "advice.idx") + ", published less than a minute ago",
		"submission":   "sbatch runs migadvisor's cli_filter: CliFilterPlugins=cli_filter/lua in " + s.conf,
	} {
		if c := find(r, name); !strings.HasPrefix(c.Found, want) || c.Fix != "" {
			t.Errorf("%s: %q (fix %q), want it to begin %q", name, c.Found, c.Fix, want)
		}
	}
	var text strings.Builder
	r.WriteText(&text)
	if !strings.HasPrefix(text.String(), "ok       site file: site wulver") || !strings.HasSuffix(text.String(), "\nall 6 checks ok\n") {
		t.Errorf("text:\n%s", text.String())
	}
}

// Each thing the admin guide says to set up, broken, is that check's
// problem, with its fix; the others stay ok.
func TestDoctorProblems(t *testing.T) {
	for _, tc := range []struct {
		name  string
		spoil func(t *testing.T, s *setup)
		check string
		found string // what the check's Found holds
		fix   string // what its Fix begins with
	}{
		{"an index users cannot read", func(t *testing.T, s *setup) { os.Chmod(filepath.Join(s.shared, "advice.idx"), 0o600) },
			"advice_index", "mode 0600: users' wrappers cannot read it", "chmod 0644 "},
		{"a stale index", func(t *testing.T, s *setup) {
			old := s.now.Add(-3 * time.Hour)
			os.Chtimes(filepath.Join(s.shared, "advice.idx"), old, old)
		}, "advice_index", "published 3h0m ago", "see why: systemctl status migadvisor-collect.timer"},
		{"no index", func(t *testing.T, s *setup) { os.Remove(filepath.Join(s.shared, "advice.idx")) },
			"advice_index", "no such file or directory: the sbatch wrappers", "publish it: "},
		{"a truncated index", func(t *testing.T, s *setup) { os.Truncate(filepath.Join(s.shared, "advice.idx"), 40) },
			"advice_index", "does not open", "publish it again"},
		{"a publish directory others write", func(t *testing.T, s *setup) { os.Chmod(s.shared, 0o777) },
			"publish_dir", "users other than its owner may replace", "chmod 0755 "},
		{"a group-writable snapshot", func(t *testing.T, s *setup) { os.Chmod(filepath.Join(s.shared, "history.db"), 0o664) },
			"site_history", "users other than its owner may write it", "chmod 0644 "},
		{"no snapshot", func(t *testing.T, s *setup) { os.Remove(filepath.Join(s.shared, "history.db")) },
			"site_history", "no such file or directory", "publish it: "},
		{"a mail command that is gone", func(t *testing.T, s *setup) { os.Remove(filepath.Join(s.dir, "bin", "mail")) },
			"notify", "which does not exist", "install the mail command"},
		{"a filter whose binary is gone", func(t *testing.T, s *setup) {
			os.Remove(filepath.Join(s.prefix, "libexec", "migadvisor", "migadvisor-sbatch"))
		}, "submission", "which is not there or not executable", "install it as docs/admin/wrapper.md says"},
		{"a filter named but not there", func(t *testing.T, s *setup) { os.Remove(filepath.Join(s.dir, "slurm", "cli_filter.lua")) },
			"submission", "names cli_filter/lua in CliFilterPlugins, but", "install it"},
		{"the repository's filter", func(t *testing.T, s *setup) {
			s.write(t, "slurm/cli_filter.lua", "local PREFIX = [==[@PREFIX@]==]\n", 0o644)
		}, "submission", "whose prefix make install never filled in", "install it"},
		{"a site file users cannot read", func(t *testing.T, s *setup) { os.Chmod(s.siteFile, 0o600) },
			"site", "mode 0600: a user's command that reads it fails", "chmod 0644 "},
		{"a site file that does not load", func(t *testing.T, s *setup) { s.writeSite(t, "version = 1\nname = \n") },
			"site", "site.toml", "correct the site file"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			s := newSetup(t)
			tc.spoil(t, s)
			r := s.run()
			c := find(r, tc.check)
			if c.Status != Problem || !strings.Contains(c.Found, tc.found) || !strings.HasPrefix(c.Fix, tc.fix) || r.OK() || r.Problems != 1 {
				t.Errorf("%s: %s %q fix %q; want a problem with %q and the fix %q\n%s", tc.check, c.Status, c.Found, c.Fix, tc.found, tc.fix, statuses(r))
			}
		})
	}
}

// What a site may leave unset, or set up in a way it may mean, is a
// warning with its fix; warnings alone are no problem.
func TestDoctorWarnings(t *testing.T) {
	for _, tc := range []struct {
		name   string
		change func(t *testing.T, s *setup)
		check  string
		found  string
	}{
		{"no site file", func(t *testing.T, s *setup) { os.Remove(s.siteFile) },
			"site", "no site file (none at "},
		{"no site history", func(t *testing.T, s *setup) {
			wulver, _ := catalog.BuiltinTOML("wulver")
			s.writeSite(t, string(wulver))
		}, "site_history", "names no site-wide history"},
		{"a private snapshot", func(t *testing.T, s *setup) { os.Chmod(filepath.Join(s.shared, "history.db"), 0o600) },
			"site_history", "users cannot read it, so their recommend and history read their own runs only"},
		{"no notify_command", func(t *testing.T, s *setup) {
			wulver, _ := catalog.BuiltinTOML("wulver")
			s.writeSite(t, string(wulver)+fmt.Sprintf("\n[history]\nsite_db = %q\n", filepath.Join(s.shared, "history.db")))
		}, "notify", "names no notify_command"},
		{"the shim and the filter", func(t *testing.T, s *setup) {
			shim, err := os.ReadFile("../../../scripts/sbatch")
			if err != nil {
				t.Fatal(err)
			}
			s.write(t, "shim/sbatch", string(shim), 0o755)
			s.write(t, "shim/migadvisor-sbatch", "#!/bin/sh\n", 0o755)
			s.env["PATH"] = filepath.Join(s.dir, "shim") + ":" + s.slurmBin
		}, "submission", "and sbatch on PATH is migadvisor's shim"},
		{"neither the filter nor the shim", func(t *testing.T, s *setup) {
			s.write(t, "slurm/slurm.conf", "ClusterName=wulver\n", 0o644)
		}, "submission", "an sbatch from this shell gets no advice: " + "SLURM_CONF names no CliFilterPlugins"},
		{"disabled", func(t *testing.T, s *setup) { s.env["MIGADVISOR_DISABLE"] = "1" },
			"submission", "MIGADVISOR_DISABLE=1 in this environment"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			s := newSetup(t)
			tc.change(t, s)
			r := s.run()
			c := find(r, tc.check)
			want := strings.ReplaceAll(tc.found, "SLURM_CONF", s.conf)
			if c.Status != Warning || !strings.Contains(c.Found, want) || c.Fix == "" || !r.OK() {
				t.Errorf("%s: %s %q fix %q; want a warning with %q\n%s", tc.check, c.Status, c.Found, c.Fix, want, statuses(r))
			}
		})
	}
}

// The shim alone, first on PATH with the wrapper's binary beside it and
// Slurm's sbatch after it, is how a submission gets advice: ok.
func TestDoctorShimAlone(t *testing.T) {
	s := newSetup(t)
	s.write(t, "slurm/slurm.conf", "ClusterName=wulver\n", 0o644)
	shim, _ := os.ReadFile("../../../scripts/sbatch")
	s.write(t, "shim/sbatch", string(shim), 0o755)
	s.write(t, "shim/migadvisor-sbatch", "#!/bin/sh\n", 0o755)
	s.env["PATH"] = filepath.Join(s.dir, "shim") + ":" + s.slurmBin
	c := find(s.run(), "submission")
	want := fmt.Sprintf("sbatch on PATH is migadvisor's shim (%s), running %s beside Slurm's sbatch (%s)",
		filepath.Join(s.dir, "shim", "sbatch"), filepath.Join(s.dir, "shim", "migadvisor-sbatch"), filepath.Join(s.slurmBin, "sbatch"))
	if c.Status != OK || c.Found != want {
		t.Errorf("submission: %s %q, want ok %q", c.Status, c.Found, want)
	}
	os.Remove(filepath.Join(s.slurmBin, "sbatch"))
	if c := find(s.run(), "submission"); c.Status != Problem || !strings.Contains(c.Found, "no sbatch on PATH other than migadvisor itself") {
		t.Errorf("no Slurm sbatch behind the shim: %s %q", c.Status, c.Found)
	}
}

// A publish fix is the command as the README's admin block types it: root's,
// through sudo (whose secure_path has no migadvisor), with the migadvisor
// that ran doctor, quoted as a shell word.
func TestDoctorPublishFixIsTheAdminsCommand(t *testing.T) {
	s := newSetup(t)
	os.Remove(filepath.Join(s.shared, "advice.idx"))
	for self, want := range map[string]string{
		"/opt/migadvisor/bin/migadvisor": "publish it: sudo env MIGADVISOR_DB=/var/lib/migadvisor/site.db /opt/migadvisor/bin/migadvisor collect --all-users --publish DIR",
		"/opt/my tools/migadvisor":       "publish it: sudo env MIGADVISOR_DB=/var/lib/migadvisor/site.db '/opt/my tools/migadvisor' collect --all-users --publish DIR",
		"":                               "publish it: sudo env MIGADVISOR_DB=/var/lib/migadvisor/site.db migadvisor collect --all-users --publish DIR",
	} {
		r := Run(context.Background(), Request{Getenv: func(k string) string { return s.env[k] }, Now: s.now, Self: self})
		if c := find(r, "advice_index"); !strings.HasPrefix(c.Fix, want) {
			t.Errorf("Self %q: fix %q, want it to begin %q", self, c.Fix, want)
		}
	}
}
