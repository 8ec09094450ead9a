package doctor

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"time"

	"github.com/migadvisor/migadvisor/advisor/app/index"
	"github.com/migadvisor/migadvisor/advisor/base/history"
	"github.com/migadvisor/migadvisor/catalog"
	"github.com/migadvisor/migadvisor/slurm"
)

// publishWith is the command that publishes a site-wide history, as the
// docs give it, with the migadvisor at self ("": migadvisor on PATH): run
// as root through sudo, whose secure_path has no migadvisor of its own.
func publishWith(self string) string {
	if self == "" {
		self = "migadvisor"
	}
	return "sudo env MIGADVISOR_DB=/var/lib/migadvisor/site.db " + slurm.ShellWord(self) +
		" collect --all-users --publish DIR, every 30 minutes (docs/admin/collect-and-publish.md)"
}

// checkPublished checks what publish writes and the site file names: the
// snapshot (site_db), the advice index beside it (or site_index), and the
// directories they are in.
func checkPublished(ctx context.Context, site *catalog.Site, now time.Time, maxAge time.Duration, publish string) []Check {
	h := site.History
	if h.SiteDB == "" && h.SiteIndex == "" {
		return []Check{{Name: "site_history", Status: Warning,
			Found: fmt.Sprintf("site %s names no site-wide history ([history] site_db): advice reads each user's own runs only", site.Name),
			Fix:   "publish one and name DIR/history.db as site_db in the site file: " + publish}}
	}
	var checks []Check
	if h.SiteDB != "" {
		checks = append(checks, checkSnapshot(ctx, h.SiteDB, now, publish))
	}
	checks = append(checks, checkIndex(h.SiteIndexPath(), now, maxAge, publish))
	dirs := []string{filepath.Dir(h.SiteIndexPath())}
	if h.SiteDB != "" && filepath.Dir(h.SiteDB) != dirs[0] {
		dirs = append([]string{filepath.Dir(h.SiteDB)}, dirs...)
	}
	for _, d := range dirs {
		checks = append(checks, checkPublishDir(d))
	}
	return checks
}

// checkSnapshot checks the site-wide history users read: a snapshot that
// opens, readable by every user (unless the site keeps it to itself), and
// writable by its owner alone.
func checkSnapshot(ctx context.Context, path string, now time.Time, publish string) Check {
	c := Check{Name: "site_history"}
	info, err := os.Stat(path)
	if err != nil {
		c.Status, c.Found = Problem, fmt.Sprintf("site_db %s: %v", path, plainErr(err))
		c.Fix = "publish it: " + publish
		return c
	}
	st, err := history.OpenWith(ctx, path, history.Options{ReadOnly: true})
	if err != nil {
		c.Status, c.Found = Problem, fmt.Sprintf("site_db %s does not open: %v", path, err)
		c.Fix = "publish it again with this migadvisor: " + publish
		return c
	}
	st.Close()
	perm := info.Mode().Perm()
	c.Status, c.Found = OK, fmt.Sprintf("%s, published %s, mode %04o", path, ago(info.ModTime(), now), perm)
	switch {
	case perm&0o022 != 0:
		c.Status, c.Found = Problem, c.Found+": users other than its owner may write it, and change what everyone's advice reads"
		c.Fix = "chmod 0644 " + path
	case !history.IsSnapshot(path):
		c.Status, c.Found = Warning, c.Found+": a live history, not a snapshot that publish wrote; read over a shared file system "+
			"from other hosts, it may be seen torn"
		c.Fix = "keep the live history on the collecting host's own disk and name the published snapshot: " + publish
	case perm&0o004 == 0:
		c.Status, c.Found = Warning, c.Found+": users cannot read it, so their recommend and history read their own runs only "+
			"(the wrapper still reads the advice index)"
		c.Fix = "chmod 0644 " + path + ", unless the site means to keep its users' job names and paths to itself"
	}
	return c
}

// checkIndex checks the advice index the wrappers and the cli_filter read
// on every submission: there, readable by this build, fresh, readable by
// every user and writable by its owner alone.
func checkIndex(path string, now time.Time, maxAge time.Duration, publish string) Check {
	c := Check{Name: "advice_index"}
	info, err := os.Stat(path)
	if err != nil {
		c.Status = Problem
		c.Found = fmt.Sprintf("%s: %v: the sbatch wrappers and the cli_filter have no site advice, and say so on each submission", path, plainErr(err))
		c.Fix = "publish it: " + publish
		return c
	}
	r, err := index.Open(path)
	if err != nil {
		c.Status, c.Found = Problem, fmt.Sprintf("%s does not open: %v", path, err)
		c.Fix = "publish it again with this migadvisor: " + publish
		return c
	}
	r.Close()
	perm := info.Mode().Perm()
	c.Status, c.Found = OK, fmt.Sprintf("%s, published %s, mode %04o", path, ago(info.ModTime(), now), perm)
	switch {
	case perm&0o004 == 0:
		c.Status, c.Found = Problem, c.Found+": users' wrappers cannot read it"
		c.Fix = "chmod 0644 " + path
	case perm&0o022 != 0:
		c.Status, c.Found = Problem, c.Found+": users other than its owner may write it, and change the advice everyone gets"
		c.Fix = "chmod 0644 " + path
	case now.Sub(info.ModTime()) > maxAge:
		c.Status, c.Found = Problem, c.Found+fmt.Sprintf(": older than %s, so the collect that publishes it has stopped", span(maxAge))
		c.Fix = "see why: systemctl status migadvisor-collect.timer and journalctl -u migadvisor-collect (or root's crontab); " + publish
	}
	return c
}

// checkPublishDir checks a directory publish writes into: every user must
// reach the files, and no one but its owner (the collecting host's root)
// replace them.
func checkPublishDir(dir string) Check {
	c := Check{Name: "publish_dir"}
	info, err := os.Stat(dir)
	if err != nil {
		c.Status, c.Found, c.Fix = Problem, fmt.Sprintf("%s: %v", dir, plainErr(err)), "install -d -m 0755 "+dir+", then publish into it"
		return c
	}
	perm := info.Mode().Perm()
	c.Status, c.Found = OK, fmt.Sprintf("%s, mode %04o: every user reads it, its owner alone writes it", dir, perm)
	switch {
	case perm&0o022 != 0:
		c.Status, c.Found = Problem, fmt.Sprintf("%s is mode %04o: users other than its owner may replace the history and the advice every user reads", dir, perm)
		c.Fix = "chmod 0755 " + dir + " (only the collecting host writes it)"
	case perm&0o005 != 0o005:
		c.Status, c.Found = Problem, fmt.Sprintf("%s is mode %04o: users cannot reach the files in it", dir, perm)
		c.Fix = "chmod 0755 " + dir
	}
	return c
}

// checkSiteStore checks the option file of a site history in MariaDB,
// where the site file names one: there, and readable by its owner alone
// (collect refuses it otherwise: it holds the password).
func checkSiteStore(site *catalog.Site) (Check, bool) {
	path := site.History.SiteStore
	if path == "" {
		return Check{}, false
	}
	c := Check{Name: "site_store"}
	info, err := os.Stat(path)
	switch {
	case errors.Is(err, fs.ErrPermission):
		c.Status, c.Found = OK, fmt.Sprintf("%s, which this user cannot read (it is the collecting admin's)", path)
	case err != nil:
		c.Status, c.Found = Problem, fmt.Sprintf("site_store %s: %v", path, plainErr(err))
		c.Fix = "write the MySQL option file, mode 0600 (docs/admin/site-store.md)"
	case info.Mode().Perm()&0o077 != 0:
		c.Status, c.Found = Problem, fmt.Sprintf("%s is mode %04o: it holds the database's password, and collect refuses a file others may read", path, info.Mode().Perm())
		c.Fix = "chmod 0600 " + path
	default:
		c.Status, c.Found = OK, fmt.Sprintf("%s, mode %04o", path, info.Mode().Perm())
	}
	return c, true
}

// ago says when t was, from now: "42m ago (2026-11-21 09:50)".
func ago(t, now time.Time) string {
	d := now.Sub(t).Round(time.Minute)
	when := t.Local().Format("2006-01-02 15:04")
	if d < time.Minute {
		return "less than a minute ago (" + when + ")"
	}
	return span(d) + " ago (" + when + ")"
}

// span is a duration in days, hours and minutes, as people say it: 3d4h,
// 2h5m, 42m.
func span(d time.Duration) string {
	days, hours, mins := int(d/(24*time.Hour)), int(d%(24*time.Hour)/time.Hour), int(d%time.Hour/time.Minute)
	switch {
	case days > 0:
		return fmt.Sprintf("%dd%dh", days, hours)
	case hours > 0:
		return fmt.Sprintf("%dh%dm", hours, mins)
	}
	return fmt.Sprintf("%dm", mins)
}

// plainErr is a file error without its operation and path, which the
// sentence names already: "no such file or directory".
func plainErr(err error) error {
	var pe *fs.PathError
	if errors.As(err, &pe) {
		return pe.Err
	}
	return err
}
