package collect

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"

	"github.com/migadvisor/migadvisor/advisor/base/history"
	"github.com/migadvisor/migadvisor/catalog"
)

// SiteHistory is the site history opened for a report to read, and its
// names.
type SiteHistory struct {
	Store *history.Store
	// From names it for the admin: "the site store user@host:port/database",
	// or the file. Public names it on a page anyone may read: no store user
	// or host.
	From, Public string
	close        func()
}

// Close closes the history, and removes a copy of the site store.
func (h SiteHistory) Close() { h.close() }

// OpenSiteHistory opens what a site report reads: the site store that flag
// (--site-store), else the site file, names, copied into a history on this
// host (a report's many reads are local); else the history at db,
// read-only. No history at db is an error that says where the site's is.
func OpenSiteHistory(ctx context.Context, flag string, site *catalog.Site, db string) (SiteHistory, error) {
	store, err := OpenSiteStore(ctx, flag, site.History.SiteStore, true)
	if err != nil {
		return SiteHistory{}, err
	}
	if store != nil {
		defer store.Close()
		h, done, err := CopyStore(ctx, store)
		if err != nil {
			return SiteHistory{}, fmt.Errorf("read the site store %s: %w", store.Where(), err)
		}
		return SiteHistory{Store: h, From: "the site store " + store.Where(), Public: "the site store", close: done}, nil
	}
	if _, err := os.Stat(db); errors.Is(err, fs.ErrNotExist) {
		return SiteHistory{}, noSiteHistory(db, site)
	}
	h, err := history.OpenWith(ctx, db, history.Options{ReadOnly: true})
	if err != nil {
		return SiteHistory{}, err
	}
	return SiteHistory{Store: h, From: db, Public: db, close: func() { h.Close() }}, nil
}

// noSiteHistory says where the site history is, when db is not.
func noSiteHistory(db string, site *catalog.Site) error {
	msg := fmt.Sprintf("no history at %s: report and plan read the site history that 'collect --all-users' fills; name it with --db or MIGADVISOR_DB", db)
	if site.History.SiteDB != "" {
		msg += fmt.Sprintf(" (the site's published one: --db %s)", site.History.SiteDB)
	}
	return errors.New(msg)
}

// PublishSiteHistory publishes in dir the site store that flag
// (--site-store), else the site file, names; else the history at db,
// read-only.
func PublishSiteHistory(ctx context.Context, flag string, site *catalog.Site, db, dir string) (Publication, error) {
	store, err := OpenSiteStore(ctx, flag, site.History.SiteStore, true)
	if err != nil {
		return Publication{}, err
	}
	if store != nil {
		defer store.Close()
		return Publish(ctx, nil, store, dir)
	}
	h, err := history.OpenWith(ctx, db, history.Options{ReadOnly: true})
	if err != nil {
		return Publication{}, err
	}
	defer h.Close()
	return Publish(ctx, h, nil, dir)
}
