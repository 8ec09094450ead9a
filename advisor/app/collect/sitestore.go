package collect

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"

	"github.com/migadvisor/migadvisor/advisor/app/index"
	"github.com/migadvisor/migadvisor/advisor/base/history"
	"github.com/migadvisor/migadvisor/advisor/base/history/mariadb"
)

// StoreOff is the --site-store value that collects and publishes without
// the site's store.
const StoreOff = "off"

// OpenSiteStore connects to the site history in MariaDB/MySQL: the option
// file flag names (--site-store), else, when byDefault (collect
// --all-users, publish), the site file's; none (nil) when flag is StoreOff
// or there is no file. A file this user may not read is the admins': the
// error says how to go on without it.
func OpenSiteStore(ctx context.Context, flag, siteFile string, byDefault bool) (*mariadb.Store, error) {
	optionFile := flag
	if optionFile == "" && byDefault {
		optionFile = siteFile
	}
	if optionFile == "" || strings.EqualFold(optionFile, StoreOff) {
		return nil, nil
	}
	opt, err := mariadb.ReadOptionFile(optionFile)
	if errors.Is(err, fs.ErrPermission) {
		return nil, fmt.Errorf("%w (the site's store is its admins': --site-store %s keeps to your own history)", err, StoreOff)
	}
	if err != nil {
		return nil, err
	}
	return mariadb.Open(ctx, opt)
}

// StoreReport is what a collect sent to the site store.
type StoreReport struct {
	Store   string `json:"store"`   // user@host:port/database
	Changes int    `json:"changes"` // rows written or deleted
}

// KeepForStore turns on the history's outbox for the store before a
// collect writes to it, so that every row it writes is sent; turned on
// for the first time (or for another store), the whole history waits to be
// sent.
func KeepForStore(ctx context.Context, h *history.Store, store *mariadb.Store) error {
	_, err := h.KeepOutbox(ctx, store.ID())
	return err
}

// PushWhile runs collect (a Run into h) and sends to the store what it
// writes as it commits, then the rest: the import and the store's writes
// overlap. collect's error comes first; a push that fails leaves what it
// did not send in the outbox, for the next collect.
func PushWhile(ctx context.Context, h *history.Store, store *mariadb.Store, collect func() error, progress func(sent, total int)) (StoreReport, error) {
	n, err := store.PushWhile(ctx, h, collect, progress)
	return StoreReport{Store: store.Where(), Changes: n}, err
}

// PublishStore publishes the site store in dir as a history is published
// (index.Publish): the store is copied into a new history in a temporary
// directory of this host, which is published, then removed.
func PublishStore(ctx context.Context, store *mariadb.Store, dir string) (index.Published, error) {
	h, done, err := CopyStore(ctx, store)
	if err != nil {
		return index.Published{}, fmt.Errorf("publish the site store: %w", err)
	}
	defer done()
	return index.Publish(ctx, h, dir)
}

// CopyStore copies the site store into a new history in a temporary
// directory of this host, for a command that reads a history (publish,
// report); done closes and removes it.
func CopyStore(ctx context.Context, store *mariadb.Store) (h *history.Store, done func(), err error) {
	tmp, err := os.MkdirTemp("", "migadvisor-store-")
	if err != nil {
		return nil, nil, err
	}
	if h, err = history.Open(ctx, filepath.Join(tmp, "history.db")); err != nil {
		os.RemoveAll(tmp)
		return nil, nil, err
	}
	done = func() {
		h.Close()
		os.RemoveAll(tmp)
	}
	if _, err := store.CopyInto(ctx, h); err != nil {
		done()
		return nil, nil, err
	}
	return h, done, nil
}
