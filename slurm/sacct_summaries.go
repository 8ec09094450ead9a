package slurm

import (
	"errors"
	"slices"
)

// A jobstats summary costs the reader four times what the rest of its
// job does (gzip, then JSON): read one at a time, they held back an import
// that writes on another core. From a job with a summary on, the reader
// reads ahead, and the summaries of each chunk of jobs are decoded in a
// goroutine of their own while it reads the next; Next returns the jobs
// in their order once theirs are decoded.

// The read-ahead's bounds: chunkJobs jobs a chunk, chunksDecoding chunks
// decoded at once (and one more being read).
const (
	chunkJobs      = 128
	chunksDecoding = 2
)

// readAhead is the jobs read ahead, in chunks, in input order; the last
// chunk may still be open (being read).
type readAhead struct {
	chunks   []*summaryChunk
	decoders chan *jobstatsDecoder // each keeps one gzip reader for the summaries it decodes
}

// summaryChunk is jobs read ahead and their AdminComments; done closes once
// the summaries are decoded (nil: the chunk is still open).
type summaryChunk struct {
	jobs      []*AcctJob
	summaries []string
	done      chan struct{}
}

func (a *readAhead) empty() bool { return len(a.chunks) == 0 }

// add appends a job to the open chunk, and starts decoding the chunk once
// it is full.
func (a *readAhead) add(j *AcctJob, summary string) {
	if a.empty() || a.chunks[len(a.chunks)-1].done != nil {
		a.chunks = append(a.chunks, &summaryChunk{})
	}
	c := a.chunks[len(a.chunks)-1]
	c.jobs, c.summaries = append(c.jobs, j), append(c.summaries, summary)
	if len(c.jobs) == chunkJobs {
		a.decode(c)
	}
}

// pop returns the first job read ahead once its summary is decoded; nil
// when there is none, or while it is not decoded and more may be read
// meanwhile. Once the input has ended (ended) it waits for it.
func (a *readAhead) pop(ended bool) *AcctJob {
	for !a.empty() {
		c := a.chunks[0]
		if c.done == nil {
			if !ended {
				return nil // read on into it
			}
			a.decode(c)
		}
		if ended || a.decoding() >= chunksDecoding {
			<-c.done
		} else {
			select {
			case <-c.done:
			default:
				return nil
			}
		}
		if len(c.jobs) > 0 {
			j := c.jobs[0]
			c.jobs = c.jobs[1:]
			return j
		}
		a.chunks = a.chunks[1:]
	}
	return nil
}

// decoding counts the chunks whose decoding has started.
func (a *readAhead) decoding() int {
	n := 0
	for _, c := range a.chunks {
		if c.done != nil {
			n++
		}
	}
	return n
}

// decode closes the chunk and decodes its summaries in a goroutine of
// their own, with a decoder no other one is using.
func (a *readAhead) decode(c *summaryChunk) {
	c.done = make(chan struct{})
	if !slices.ContainsFunc(c.summaries, func(s string) bool { return s != "" }) {
		close(c.done)
		return
	}
	if a.decoders == nil {
		a.decoders = make(chan *jobstatsDecoder, chunksDecoding+1)
	}
	var d *jobstatsDecoder
	select {
	case d = <-a.decoders:
	default:
		d = &jobstatsDecoder{}
	}
	go func() {
		decodeSummaries(d, c.jobs, c.summaries)
		select {
		case a.decoders <- d:
		default:
		}
		close(c.done)
	}()
}

// decodeSummaries decodes each job's summary (its AdminComment) with d: a
// field that is not a summary (a site's own note) is none.
func decodeSummaries(d *jobstatsDecoder, jobs []*AcctJob, summaries []string) {
	for i, j := range jobs {
		if summaries[i] == "" {
			continue
		}
		j.Jobstats, j.JobstatsErr = d.decode(summaries[i])
		if errors.Is(j.JobstatsErr, ErrNotJobstats) {
			j.JobstatsErr = nil
		}
	}
}
