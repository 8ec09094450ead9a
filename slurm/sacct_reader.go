package slurm

import (
	"bufio"
	"bytes"
	"errors"
	"fmt"
	"io"
	"strings"
)

// LineError is a record the reader skipped.
type LineError struct {
	Line int
	Err  error
}

func (e *LineError) Error() string { return fmt.Sprintf("line %d: %v", e.Line, e.Err) }

// SacctReader reads `sacct --parsable2` output that starts with its header
// line, mapping fields by that header, so dumps with any order or subset of
// fields read alike. Steps are merged into their job; sacct prints a job's
// steps right after it, so jobs stream out with bounded memory.
type SacctReader struct {
	br      *bufio.Reader
	line    int
	delim   byte
	col     [numCols]int // index in a record, or -1
	nFields int
	nameIdx int

	held     []byte // a line read ahead and given back
	heldLine int
	heldOK   bool

	fields []string
	cur    *AcctJob
	err    error

	// curSummary is cur's AdminComment: its jobstats summary is decoded
	// once the job is read whole, beside the reading (readAhead).
	curSummary string
	ahead      readAhead

	// Skipped lists the records that could not be read, in input order:
	// the first MaxSkippedKept of them (a garbled dump of millions of lines
	// must not fill memory with errors).
	Skipped []*LineError
	// SkippedTotal counts every record that could not be read.
	SkippedTotal int
	// Lines is how many input lines have been read.
	Lines int
}

// ErrNoHeader is an empty input: not even sacct's header line.
var ErrNoHeader = errors.New("no header line: the input is empty")

// NewSacctReader reads the header line and prepares to stream jobs.
func NewSacctReader(r io.Reader) (*SacctReader, error) {
	s := &SacctReader{br: bufio.NewReaderSize(r, 256<<10)}
	header, n, err := s.readLine()
	for err == nil && len(bytes.TrimSpace(header)) == 0 {
		header, n, err = s.readLine()
	}
	if err == io.EOF {
		return nil, ErrNoHeader
	}
	if err != nil {
		return nil, err
	}
	if err := s.parseHeader(header, n); err != nil {
		return nil, err
	}
	return s, nil
}

func (s *SacctReader) parseHeader(h []byte, line int) error {
	s.delim = '|'
	if bytes.IndexByte(h, SacctDelimiter[0]) >= 0 {
		s.delim = SacctDelimiter[0]
	}
	names := strings.Split(strings.TrimRight(string(h), "\r"), string(s.delim))
	for i := range s.col {
		s.col[i] = -1
	}
	for i, name := range names {
		if c, ok := colByName[strings.ToLower(strings.TrimSpace(name))]; ok && s.col[c] < 0 {
			s.col[c] = i
		}
	}
	if s.col[colJobIDRaw] < 0 && s.col[colJobID] < 0 {
		return &LineError{Line: line, Err: errors.New("the first line is not a sacct header with JobID or JobIDRaw " +
			"(save the dump with sacct --parsable2, without --noheader)")}
	}
	s.nFields = len(names)
	s.nameIdx = s.col[colJobName]
	s.fields = make([]string, 0, s.nFields+4)
	return nil
}

// HasField reports whether the header names the field (case aside, as
// sacct takes it): a dump without Cluster leaves its jobs' cluster to be
// named by the importer. Only the fields the reader understands count.
func (s *SacctReader) HasField(name string) bool {
	c, ok := colByName[strings.ToLower(strings.TrimSpace(name))]
	return ok && s.col[c] >= 0
}

// readLine returns the next line without its newline; the slice is only valid
// until the next read.
func (s *SacctReader) readLine() ([]byte, int, error) {
	if s.heldOK {
		s.heldOK = false
		return s.held, s.heldLine, nil
	}
	line, err := s.br.ReadSlice('\n')
	if err == bufio.ErrBufferFull {
		// A very long line: gather it whole.
		buf := append([]byte(nil), line...)
		for err == bufio.ErrBufferFull {
			line, err = s.br.ReadSlice('\n')
			buf = append(buf, line...)
		}
		line = buf
	}
	if err != nil && err != io.EOF {
		return nil, 0, err
	}
	if err == io.EOF && len(line) == 0 {
		return nil, 0, io.EOF
	}
	s.line++
	s.Lines++
	line = bytes.TrimSuffix(line, []byte{'\n'})
	line = bytes.TrimSuffix(line, []byte{'\r'})
	return line, s.line, nil
}

func (s *SacctReader) unread(line []byte, n int) {
	s.held = append(s.held[:0], line...)
	s.heldLine, s.heldOK = n, true
}

// Next returns the next job, or io.EOF. Records that cannot be read are
// appended to Skipped and passed over.
func (s *SacctReader) Next() (*AcctJob, error) {
	for {
		if j := s.ahead.pop(s.err != nil); j != nil {
			return j, nil
		}
		j, summary, err := s.next()
		switch {
		case err != nil && s.ahead.empty():
			return nil, err
		case err != nil:
			// The jobs read ahead come first; the error after them.
		case summary == "" && s.ahead.empty():
			return j, nil
		default:
			s.ahead.add(j, summary)
		}
	}
}

// next reads the next job whole, and returns its AdminComment undecoded.
func (s *SacctReader) next() (*AcctJob, string, error) {
	if s.err != nil {
		return nil, "", s.err
	}
	for {
		rec, line, err := s.record()
		if err == io.EOF {
			s.err = io.EOF
			j, summary := s.cur, s.curSummary
			s.cur, s.curSummary = nil, ""
			if j == nil {
				return nil, "", io.EOF
			}
			return j, summary, nil
		}
		if err != nil {
			s.err = err
			return nil, "", err
		}
		if rec == nil {
			continue
		}
		if done, summary := s.add(rec, line); done != nil {
			return done, summary, nil
		}
	}
}

// record reads one logical record: a line, joined with the lines after it
// when a newline inside a job name split it.
func (s *SacctReader) record() ([]string, int, error) {
	raw, n, err := s.readLine()
	if err != nil {
		return nil, 0, err
	}
	if len(bytes.TrimSpace(raw)) == 0 {
		return nil, n, nil
	}
	text := string(raw)
	s.fields = splitInto(s.fields[:0], text, s.delim)
	if count := len(s.fields); count < s.nFields && count == s.nameIdx+1 {
		// The line ends inside the job name: a newline in the name split it.
		for count < s.nFields {
			next, nn, err := s.readLine()
			if err != nil {
				break
			}
			nc := bytes.Count(next, []byte{s.delim}) + 1
			if count+nc-1 > s.nFields {
				s.unread(next, nn)
				break
			}
			text += "\n" + string(next)
			count += nc - 1
		}
		s.fields = splitInto(s.fields[:0], text, s.delim)
	} else if count == s.nFields && s.nameIdx == s.nFields-1 && !s.heldOK {
		// A newline in a trailing job name leaves its rest on lines with no delimiter.
		if joined := s.trailingName(text); joined != text {
			text = joined
			s.fields = splitInto(s.fields[:0], text, s.delim)
		}
	}
	if len(s.fields) > s.nFields && s.nameIdx >= 0 {
		// The delimiter occurs in the job name: the surplus belongs to it.
		extra := len(s.fields) - s.nFields
		name := strings.Join(s.fields[s.nameIdx:s.nameIdx+extra+1], string(s.delim))
		s.fields = append(s.fields[:s.nameIdx+1], s.fields[s.nameIdx+extra+1:]...)
		s.fields[s.nameIdx] = name
	}
	if len(s.fields) != s.nFields {
		s.skip(n, fmt.Errorf("%d fields where the header has %d (a truncated or damaged record)", len(s.fields), s.nFields))
		return nil, n, nil
	}
	return s.fields, n, nil
}

// MaxSkippedKept bounds SacctReader.Skipped.
const MaxSkippedKept = 1000

func (s *SacctReader) skip(line int, err error) {
	s.SkippedTotal++
	if len(s.Skipped) < MaxSkippedKept {
		s.Skipped = append(s.Skipped, &LineError{Line: line, Err: err})
	}
}

// trailingName appends the lines that continue a record's last field.
func (s *SacctReader) trailingName(text string) string {
	for {
		peek, err := s.br.Peek(1)
		if err != nil || len(peek) == 0 || (peek[0] >= '0' && peek[0] <= '9') || peek[0] == '\n' {
			// Records start with a job id; a continuation of a name rarely does.
			return text
		}
		next, nn, err := s.readLine()
		if err != nil {
			return text
		}
		if bytes.IndexByte(next, s.delim) >= 0 {
			s.unread(next, nn)
			return text
		}
		text += "\n" + string(next)
	}
}

func splitInto(dst []string, s string, delim byte) []string {
	for {
		i := strings.IndexByte(s, delim)
		if i < 0 {
			return append(dst, s)
		}
		dst = append(dst, s[:i])
		s = s[i+1:]
	}
}

func (s *SacctReader) get(rec []string, c int) string {
	if i := s.col[c]; i >= 0 {
		return rec[i]
	}
	return ""
}
