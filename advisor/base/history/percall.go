package history

import "context"

// PerCall is a history opened for each record or read and closed after it:
// a probe never holds it open across a wait of hours, and a command opens
// it only when a step needs it.
type PerCall struct {
	Write func(ctx context.Context) (*Store, error) // opens it to record in
	Read  func(ctx context.Context) (*Store, error) // opens it to read
}

// with runs fn on the store open gives, closing it after.
func with[T any](ctx context.Context, open func(context.Context) (*Store, error), fn func(*Store) (T, error)) (T, error) {
	st, err := open(ctx)
	if err != nil {
		var zero T
		return zero, err
	}
	defer st.Close()
	return fn(st)
}

// RecordSweep records sw.
func (h PerCall) RecordSweep(ctx context.Context, sw Sweep) error {
	_, err := with(ctx, h.Write, func(st *Store) (any, error) { return nil, st.RecordSweep(ctx, sw) })
	return err
}

// RecordSubmissions records subs.
func (h PerCall) RecordSubmissions(ctx context.Context, subs []Submission) error {
	_, err := with(ctx, h.Write, func(st *Store) (any, error) { return nil, st.RecordSubmissions(ctx, subs) })
	return err
}

// Tracked lists the tracked jobs f selects.
func (h PerCall) Tracked(ctx context.Context, f TrackedFilter) ([]Tracked, error) {
	return with(ctx, h.Read, func(st *Store) ([]Tracked, error) { return st.Tracked(ctx, f) })
}

// History lists the jobs f selects.
func (h PerCall) History(ctx context.Context, f HistoryFilter) ([]JobRecord, error) {
	return with(ctx, h.Read, func(st *Store) ([]JobRecord, error) { return st.History(ctx, f) })
}
