package history

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/migadvisor/migadvisor/internal/atomicfile"
)

// Spool is a directory of submissions on their way into a history: the sbatch
// wrapper puts each submission there first (one small file, written whole
// and renamed into place, so a crash or a full disk never leaves half a
// record), and whoever next holds the history's write lock moves them in.
// A locked, slow or missing database thus never loses a record and never
// holds up a submission.
type Spool struct{ Dir string }

// SpoolFor is the spool of the history at dbPath: a directory beside it.
func SpoolFor(dbPath string) Spool { return Spool{Dir: dbPath + ".spool"} }

const spoolExt = ".json"

// Put writes one submission into the spool and returns its file.
func (sp Spool) Put(sub Submission) (string, error) {
	data, err := json.Marshal(sub)
	if err != nil {
		return "", err
	}
	if err := os.MkdirAll(sp.Dir, 0o700); err != nil {
		return "", fmt.Errorf("spool: %w", err)
	}
	// Names order records by time and cannot collide: one process never
	// puts two records in the same nanosecond under one pid.
	name := filepath.Join(sp.Dir, fmt.Sprintf("%d-%d%s", time.Now().UnixNano(), os.Getpid(), spoolExt))
	if err := atomicfile.Write(name, data, 0o600); err != nil {
		return "", fmt.Errorf("spool: %w", err)
	}
	return name, nil
}

// Pending lists the spooled records, oldest first.
func (sp Spool) Pending() ([]string, error) {
	entries, err := os.ReadDir(sp.Dir)
	if errors.Is(err, fs.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, fmt.Errorf("spool: %w", err)
	}
	var files []string
	for _, e := range entries {
		if e.Type().IsRegular() && strings.HasSuffix(e.Name(), spoolExt) && !strings.HasPrefix(e.Name(), ".") {
			files = append(files, filepath.Join(sp.Dir, e.Name()))
		}
	}
	return files, nil // ReadDir sorts by name: by time
}

// Read reads the spooled records, oldest first, and leaves them where
// they are: what a read of the history (OpenToRead) lists beside it. One
// that cannot be read is left out (the next drain sets it aside, and says
// so), as is one that a drain moved in meanwhile.
func (sp Spool) Read() []Submission {
	files, _ := sp.Pending()
	var subs []Submission
	for _, f := range files {
		if sub, err := readSpooled(f); err == nil {
			subs = append(subs, sub)
		}
	}
	return subs
}

// SetAside is a spooled record that a drain could not read: renamed
// *.bad (File) and kept for a person to look at, its submission not in
// the history. The command whose open set it aside says so (Store.SetAside).
type SetAside struct {
	File   string `json:"file"`   // where it is kept: the record's name with .bad added
	Reason string `json:"reason"` // why it could not be read
}

// DrainSpool moves the spooled submissions of this history into it, in one
// transaction, and removes their files once it has committed. Recording a
// submission twice changes nothing, so a drain that dies between the commit
// and the removal loses nothing either. A record that cannot be read is
// renamed *.bad and kept for a person to look at, and noted on the Store
// (SetAside), once: the next drain does not see a .bad file. It returns
// how many submissions it moved.
func (s *Store) DrainSpool(ctx context.Context) (int, error) {
	sp := SpoolFor(s.path)
	files, err := sp.Pending()
	if err != nil || len(files) == 0 {
		return 0, err
	}
	var subs []Submission
	var read []string
	for _, f := range files {
		sub, err := readSpooled(f)
		switch {
		case errors.Is(err, fs.ErrNotExist):
			continue // another process drained it
		case err != nil:
			aside := SetAside{File: f + ".bad", Reason: err.Error()}
			if rerr := os.Rename(f, aside.File); rerr != nil {
				// Still in the spool: the next open tries it, and says it, again.
				aside.File, aside.Reason = f, fmt.Sprintf("%v; and it could not be set aside: %v", err, rerr)
			}
			s.setAside = append(s.setAside, aside)
			continue
		}
		subs, read = append(subs, sub), append(read, f)
	}
	if len(subs) == 0 {
		return 0, nil
	}
	if err := s.RecordSubmissions(ctx, subs); err != nil {
		return 0, err
	}
	for _, f := range read {
		_ = os.Remove(f)
	}
	return len(subs), nil
}

// SetAside lists the spooled records this Store's drains could not read
// and set aside, for the command that opened it to say: nothing else
// tells of them.
func (s *Store) SetAside() []SetAside { return s.setAside }

// readSpooled reads a spooled record; its errors say what is wrong, not
// which file (SetAside names it).
func readSpooled(file string) (Submission, error) {
	var sub Submission
	data, err := os.ReadFile(file)
	if err != nil {
		return sub, err
	}
	if err := json.Unmarshal(data, &sub); err != nil {
		return sub, fmt.Errorf("not a record of the sbatch wrapper's: %w", err)
	}
	if sub.Fingerprint == "" || (sub.JobID == "" && sub.JobName == "") {
		return sub, errors.New("a record with no fingerprint, or with neither a job id nor a job name")
	}
	return sub, nil
}
