package savings

import (
	"encoding/json"
	"fmt"
	"os"
	"syscall"
	"time"

	"github.com/migadvisor/migadvisor/internal/versioned"
)

// lockLedger holds an exclusive lock on the ledger (its .lock file) until
// unlock, so that two notifying reports never tell a user twice. A dry run
// reads the ledger without it.
func lockLedger(path string, dryRun bool) (unlock func(), err error) {
	if dryRun {
		return func() {}, nil
	}
	f, err := os.OpenFile(path+".lock", os.O_RDWR|os.O_CREATE, 0o600)
	if err != nil {
		return nil, fmt.Errorf("lock the notice ledger: %w", err)
	}
	if err := syscall.Flock(int(f.Fd()), syscall.LOCK_EX); err != nil {
		f.Close()
		return nil, fmt.Errorf("lock the notice ledger %s: %w", path, err)
	}
	return func() { f.Close() }, nil // closing releases it
}

func decodeLedger(path string, data []byte, led *ledger) error {
	return versioned.DecodeJSON(path, data, "notice ledger", ledgerVersion, led)
}

func encodeLedger(l *ledger) ([]byte, error) {
	data, err := json.MarshalIndent(l, "", "  ")
	if err != nil {
		return nil, err
	}
	return append(data, '\n'), nil
}

// forget drops what was sent longer ago than every: it no longer holds
// a notice back.
func (l *ledger) forget(now time.Time, every time.Duration) {
	for k, at := range l.Sent {
		if now.Sub(at) >= every {
			delete(l.Sent, k)
		}
	}
}
