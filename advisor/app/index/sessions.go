package index

import (
	"context"
	"encoding/json"
	"fmt"

	"github.com/migadvisor/migadvisor/advisor/base/history"
	"github.com/migadvisor/migadvisor/advisor/base/session"
)

// SessionScan is how many of a history's newest GPU jobs a user's index
// reads for their sessions: a bound on what a refresh reads and holds, far
// past the newest session.DefaultLast of any name a user opens sessions of.
const SessionScan = 5_000

// sessionKey is the entry of user's sessions named name: a user's own
// index only (see the package's comment).
func sessionKey(user, name string) Key { return KeyOf("session", user+"\x00"+name) }

// sessionEntries are the entries of the sessions in the history, one per
// user and job name: what session.Keep keeps of them, read from the newest
// SessionScan jobs with a GPU.
func sessionEntries(ctx context.Context, st *history.Store) (map[Key][]byte, error) {
	recs, err := st.History(ctx, history.HistoryFilter{GPU: true, Limit: SessionScan})
	if err != nil {
		return nil, fmt.Errorf("read the sessions: %w", err)
	}
	named := map[history.UserJobName][]history.JobRecord{} // each newest first, as read
	for _, r := range recs {
		n := history.UserJobName{User: r.User, Name: r.Name}
		named[n] = append(named[n], r)
	}
	entries := map[Key][]byte{}
	for n, recs := range named {
		kept, ok := session.Keep(recs)
		if !ok {
			continue
		}
		data, err := json.Marshal(kept)
		if err != nil {
			return nil, err
		}
		entries[sessionKey(n.User, n.Name)] = data
	}
	return entries, nil
}

// Sessions are user's sessions named name that the index keeps; false
// when it keeps none (a site's index, or one written before version 2,
// never does).
func (r *Reader) Sessions(user, name string) (session.Kept, bool, error) {
	data, ok, err := r.Get(sessionKey(user, name))
	if err != nil || !ok {
		return session.Kept{}, false, err
	}
	var k session.Kept
	if err := json.Unmarshal(data, &k); err != nil {
		return session.Kept{}, false, fmt.Errorf("%w: %s: the sessions named %s: %v", ErrNotIndex, r.path, name, err)
	}
	return k, len(k.Sessions) > 0, nil
}
