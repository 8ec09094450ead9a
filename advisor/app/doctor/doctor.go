// Package doctor checks a site's setup as an admin checks it after an
// install, from the host it runs on: the site file in force and where it
// came from; the site-wide history and the advice index that publish
// writes (there, loadable, fresh, readable by every user, writable by no
// one else); the notices of report --notify; and what a submission from
// this shell goes through (the cli_filter that slurm.conf names, or the
// sbatch shim first on PATH). Each check says what it found and, where
// something is wrong, the fix. A problem fails users or the admins as it
// is; a warning is something not set up, which a site may mean.
package doctor

import (
	"context"
	"fmt"
	"io"
	"time"

	"github.com/migadvisor/migadvisor/catalog"
	"github.com/migadvisor/migadvisor/internal/textutil"
)

// Status is how a check came out.
type Status string

// The statuses, from the worst.
const (
	Problem Status = "problem" // it fails users or the admins as it is
	Warning Status = "warning" // not set up, or set up in a way a site may mean
	OK      Status = "ok"
)

// Check is one thing checked.
type Check struct {
	Name   string `json:"check"` // site, site_history, advice_index, publish_dir, site_store, notify, submission
	Status Status `json:"status"`
	Found  string `json:"found"`         // what it found, a sentence
	Fix    string `json:"fix,omitempty"` // what to do about it, where it is not ok
}

// Report is every check, in order.
type Report struct {
	Checks   []Check `json:"checks"`
	Problems int     `json:"problems"`
	Warnings int     `json:"warnings"`
}

// DefaultMaxAge is how old the published advice index may be: the docs'
// timer publishes every 30 minutes, so two hours is three runs missed.
const DefaultMaxAge = 2 * time.Hour

// Request says what to check with.
type Request struct {
	// Site is --site or MIGADVISOR_SITE as given; "": the lookup's.
	Site string
	// Getenv reads the environment a submission from this shell has:
	// SLURM_CONF, PATH, MIGADVISOR_BIN, MIGADVISOR_SBATCH, MIGADVISOR_DISABLE.
	Getenv func(string) string
	Now    time.Time
	// MaxAge is how old the published advice index may be; 0: DefaultMaxAge.
	MaxAge time.Duration
	// Self is the migadvisor the fixes name (this one); "": migadvisor.
	Self string
}

// Run checks the setup.
func Run(ctx context.Context, req Request) *Report {
	if req.MaxAge <= 0 {
		req.MaxAge = DefaultMaxAge
	}
	r := &Report{}
	site, c := checkSite(req.Site)
	r.add(c)
	if site != nil {
		for _, c := range checkPublished(ctx, site, req.Now, req.MaxAge, publishWith(req.Self)) {
			r.add(c)
		}
		if c, ok := checkSiteStore(site); ok {
			r.add(c)
		}
		for _, c := range checkNotify(site, req.Now) {
			r.add(c)
		}
	}
	r.add(checkSubmission(req.Getenv))
	return r
}

func (r *Report) add(c Check) {
	r.Checks = append(r.Checks, c)
	switch c.Status {
	case Problem:
		r.Problems++
	case Warning:
		r.Warnings++
	}
}

// OK reports whether nothing checked is a problem (warnings allowed).
func (r *Report) OK() bool { return r.Problems == 0 }

// names are the checks as the text says them.
var names = map[string]string{"site": "site file", "site_history": "site history", "advice_index": "advice index",
	"publish_dir": "publish directory", "site_store": "site store", "notify": "notices", "submission": "submission"}

// WriteText writes each check on a line (its status, what, what it found),
// the fix indented under it, and the count.
func (r *Report) WriteText(w io.Writer) {
	for _, c := range r.Checks {
		fmt.Fprintf(w, "%-7s  %s: %s\n", c.Status, names[c.Name], c.Found)
		if c.Fix != "" {
			fmt.Fprintf(w, "         fix: %s\n", c.Fix)
		}
	}
	switch {
	case r.Problems == 0 && r.Warnings == 0:
		fmt.Fprintf(w, "\nall %d checks ok\n", len(r.Checks))
	default:
		fmt.Fprintf(w, "\n%s, %s of %d checks\n", textutil.Plural(r.Problems, "problem"), textutil.Plural(r.Warnings, "warning"), len(r.Checks))
	}
}

// checkSite loads the site in force and says where it came from; nil
// where it does not load.
func checkSite(choice string) (*catalog.Site, Check) {
	site, o, err := catalog.Locate(choice)
	c := Check{Name: "site"}
	switch {
	case err != nil:
		c.Status, c.Found = Problem, err.Error()
		c.Fix = "correct the site file (the error names the line); 'migadvisor catalog --site FILE' checks it before you install it"
		if o.File == "" && o.Named {
			c.Fix = "name a built-in site (" + joined(catalog.BuiltinNames()) + ") or a site file in --site or MIGADVISOR_SITE"
		}
		return nil, c
	case o.Default:
		c.Status = Warning
		c.Found = fmt.Sprintf("no site file (none at %s): the built-in site %s (%s) is in force", catalog.SystemSiteFile, site.Name, site.Called())
		c.Fix = fmt.Sprintf("on another cluster than %s, write one ('migadvisor catalog discover > site.toml' on a GPU node, or 'migadvisor catalog export') "+
			"and install it as %s, mode 0644 (docs/admin/site-file.md)", site.Called(), catalog.SystemSiteFile)
		return site, c
	case o.Named && o.File == "":
		c.Status, c.Found = OK, fmt.Sprintf("the built-in site %s (%s), named by --site or MIGADVISOR_SITE", site.Name, site.Called())
		return site, c
	}
	c.Status, c.Found = OK, fmt.Sprintf("site %s (%s) from %s", site.Name, site.Called(), o.File)
	switch {
	case o.Named:
		c.Found += ", named by --site or MIGADVISOR_SITE"
	case o.File == catalog.SystemSiteFile:
		c.Found += ", the system site file every user reads"
	default:
		c.Status, c.Found = Warning, c.Found+", your own site file, which users do not read"
		c.Fix = fmt.Sprintf("install it as %s for everyone, mode 0644", catalog.SystemSiteFile)
		if len(o.Unread) > 0 {
			c.Found += fmt.Sprintf(" (it shadows %s, which they do)", joined(o.Unread))
			c.Fix = fmt.Sprintf("check what users get with MIGADVISOR_SITE=%s migadvisor doctor", o.Unread[0])
		}
	}
	if perm, ok := modeOf(o.File); ok && perm&0o004 == 0 {
		c.Status = Problem
		c.Found += fmt.Sprintf("; it is mode %04o: a user's command that reads it fails", perm)
		c.Fix = "chmod 0644 " + o.File
	}
	return site, c
}

func joined(s []string) string { return textutil.JoinAnd(s) }
