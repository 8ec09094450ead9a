package progress

import (
	"io"
	"os"
	"strings"
	"testing"
)

// Off a terminal nothing is drawn: a file or a pipe gets the data alone.
func TestQuietOffATerminal(t *testing.T) {
	f, err := os.Create(t.TempDir() + "/stderr")
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	var b strings.Builder
	for _, c := range []struct {
		name string
		w    io.Writer
	}{{"a file", f}, {"a buffer", &b}} {
		if OnTerminal(c.w) {
			t.Errorf("%s is taken for a terminal", c.name)
		}
		if Steps(c.w, "judging") != nil {
			t.Errorf("%s: Steps draws a bar", c.name)
		}
		add, finish := Count(c.w, "importing")
		if add != nil {
			t.Errorf("%s: Count draws a count", c.name)
		}
		finish()
	}
	if info, _ := f.Stat(); info.Size() != 0 || b.Len() != 0 {
		t.Errorf("written off a terminal: %d bytes to the file, %q", info.Size(), b.String())
	}
}

// The bar moves as jobs end: the count is drawn with each look at the
// queue, not one look late (it sat at 0/4 until the end).
func TestQueueMovesAsJobsEnd(t *testing.T) {
	var b strings.Builder
	q := NewQueue(&b)
	for _, c := range []struct {
		state QueueState
		want  []string
	}{
		{QueueState{Total: 4, Done: 1, Pending: 1, Running: 2}, []string{"1/4", "1 pending, 2 running"}},
		{QueueState{Total: 4, Done: 3, Running: 1}, []string{"3/4", "0 pending, 1 running"}},
	} {
		b.Reset()
		q.Show(c.state)
		for _, want := range c.want {
			if !strings.Contains(b.String(), want) {
				t.Errorf("%+v: %q lacks %q", c.state, b.String(), want)
			}
		}
	}
	if q.bar == nil {
		t.Fatal("the bar went before every job ended")
	}
}

// Once every job is done the bar is taken off, and the next wait (a
// probe's next rung) draws a new one from its own count.
func TestQueueFinishesWhenEveryJobIsDone(t *testing.T) {
	var b strings.Builder
	q := NewQueue(&b)
	q.Show(QueueState{Total: 2, Done: 2})
	if q.bar != nil {
		t.Fatal("the bar stays once every job is done")
	}
	q.Finish() // again: nothing to take off
	b.Reset()
	q.Show(QueueState{Total: 3, Done: 1, Running: 2})
	if !strings.Contains(b.String(), "1/3") {
		t.Errorf("the next wait's bar: %q", b.String())
	}
	var none *Queue
	none.Finish()
}
