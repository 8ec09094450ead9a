package collect

import (
	"context"
	"fmt"
	"os"

	"github.com/migadvisor/migadvisor/advisor/app/index"
	"github.com/migadvisor/migadvisor/advisor/base/history"
	"github.com/migadvisor/migadvisor/advisor/base/history/mariadb"
)

// Publication is what a publish wrote, and from which history.
type Publication struct {
	index.Published
	// From is the history published: a file, or "site store
	// user@host:port/database".
	From string
	// Warning is said beside it: an index that advises on nothing.
	Warning string
}

// CheckPublishDir refuses a directory to publish in that is not there: a
// mistyped path is not created.
func CheckPublishDir(dir string) error {
	if info, err := os.Stat(dir); err != nil || !info.IsDir() {
		return fmt.Errorf("publish: %s is not a directory (create it, writable by the publisher only)", dir)
	}
	return nil
}

// Publish publishes the site store when there is one, else h, in dir: the
// one way collect --publish and publish write what login nodes read.
func Publish(ctx context.Context, h *history.Store, store *mariadb.Store, dir string) (Publication, error) {
	if err := CheckPublishDir(dir); err != nil {
		return Publication{}, err
	}
	var p Publication
	var err error
	if store != nil {
		p.Published, err = PublishStore(ctx, store, dir)
		p.From = "site store " + store.Where()
	} else {
		p.Published, err = index.Publish(ctx, h, dir)
		p.From = h.Path()
		err = h.Explain(err) // a damaged history, found as it is read
	}
	if err == nil && p.Scripts == 0 {
		p.Warning = "no job in the history is linked to a script yet, so the index advises on nothing: " +
			"'collect --all-users' (its --scripts) links them through slurmdbd's stored scripts"
	}
	return p, err
}

// SessionOptions say what a collect session does around its Run.
type SessionOptions struct {
	Run RunOptions
	// SiteStore is the site store's option file as given (--site-store),
	// else the site file's when AllUsers; StoreOff: none.
	SiteStore, SiteFileStore string
	AllUsers                 bool
	// Publish is the directory to publish in after the collect; "": none.
	Publish string
	// PushProgress is told the rows sent to the site store (nil: nothing).
	PushProgress func(sent, total int)
}

// SessionReport is what a collect session did.
type SessionReport struct {
	Report
	Store     *StoreReport // what went to the site store; nil: none
	Published *Publication // nil: nothing published
}

// Session is a whole collect, in its order: the publish directory and the
// site store checked before anything is imported (a typo or a store that
// is down fails at once, and the next collect imports what this one would
// have); the import, sent to the store as it commits; then the publish of
// what it committed, so that login nodes read it. A failed publish leaves
// the previous files and fails the session.
func Session(ctx context.Context, col *Collector, opt SessionOptions) (SessionReport, error) {
	var rep SessionReport
	if opt.Publish != "" {
		if err := CheckPublishDir(opt.Publish); err != nil {
			return rep, err
		}
	}
	store, err := OpenSiteStore(ctx, opt.SiteStore, opt.SiteFileStore, opt.AllUsers)
	if err != nil {
		return rep, err
	}
	if store != nil {
		defer store.Close()
		if err := KeepForStore(ctx, col.Store, store); err != nil {
			return rep, err
		}
	}
	var runErr error
	run := func() error {
		rep.Report, runErr = Run(ctx, col, opt.Run)
		// A full disk or a damaged page met in the middle of the import
		// is the history's, whatever it was importing.
		runErr = col.Store.Explain(runErr)
		return runErr
	}
	if store != nil {
		sent, err := PushWhile(ctx, col.Store, store, run, opt.PushProgress)
		if err != nil && runErr == nil {
			return rep, fmt.Errorf("%w; what this collect imported is in %s, and the next collect sends it", err, col.Store.Path())
		}
		if err != nil {
			return rep, err
		}
		rep.Store = &sent
	} else if err := run(); err != nil {
		return rep, err
	}
	if opt.Publish != "" {
		pub, err := Publish(ctx, col.Store, store, opt.Publish)
		if err != nil {
			return rep, err
		}
		rep.Published = &pub
	}
	return rep, nil
}
