package slurm

import (
	"bufio"
	"bytes"
	"errors"
	"fmt"
	"io"
	"slices"
	"strconv"
	"strings"
	"time"
)

// SacctFields are the fields migadvisor asks sacct for. JobName comes last so
// that a delimiter inside a name cannot shift the other fields.
var SacctFields = []string{
	"JobIDRaw", "JobID", "Cluster", "User", "Account", "Partition", "QOS", "State", "ExitCode",
	"Submit", "Start", "End", "ElapsedRaw", "TimelimitRaw", "NNodes", "AllocCPUS", "NTasks",
	"ReqMem", "MaxRSS", "AllocTRES", "ReqTRES", "TRESUsageInMax", "NodeList", "WorkDir", "AdminComment", "JobName",
}

// SacctDelimiter separates fields when migadvisor runs sacct itself: a control
// character that job names and paths do not contain in practice. Saved dumps
// made with plain --parsable2 use "|"; the reader takes the header's.
const SacctDelimiter = "\x1f"

// AcctJob is one job as accounting knows it, its steps merged in. Numbers that
// accounting did not give are negative (Unknown).
type AcctJob struct {
	Line     int    // input line of its first record
	Key      string // JobIDRaw of the allocation (JobID when the dump has no JobIDRaw): unique per cluster
	ID       string // JobID as users see it: 123, 123_4, 123+0
	ArrayJob string // the id sbatch printed: 123 for 123, 123_4 and 123+0

	Cluster, User, Account, Partition, QOS, Name, WorkDir, NodeList string

	State       string // COMPLETED, FAILED, CANCELLED, OUT_OF_MEMORY, TIMEOUT, RUNNING, ...
	CancelledBy string // the uid in "CANCELLED by N"
	ExitCode    int
	ExitSignal  int

	Submit, Start, End time.Time // zero when Unknown or None
	Elapsed            time.Duration
	TimeLimit          TimeLimit // unset when the partition's limit applies
	PartitionLimit     bool

	Nodes, CPUs int
	ReqMemMiB   float64 // total over the allocation
	MaxRSSMiB   float64 // max over steps of MaxRSS × NTasks
	GPUType     string  // typed GPU of AllocTRES, or of ReqTRES for a job that never ran
	GPUCount    int
	GPUMemMiB   float64 // gres/gpumem of TRESUsageInMax, max over steps
	GPUUtil     float64 // gres/gpuutil of TRESUsageInMax, max over steps
	// Jobstats is the jobstats summary in the job's AdminComment (nil: none,
	// or the site's own note); JobstatsErr why one could not be read (the
	// job is imported all the same).
	Jobstats    *Jobstats
	JobstatsErr error

	HasJobLine bool // the allocation's own line was in the input
	ReqTRES    string
	Steps      int
}

// Unknown marks a number accounting did not give.
const Unknown = -1

// Terminal reports whether the job has ended for good.
func (j *AcctJob) Terminal() bool { return TerminalState(j.State) }

// TerminalState reports whether a job in state (as sacct or squeue print it,
// "CANCELLED by N" included) has ended for good.
func TerminalState(state string) bool {
	return state != "" && !ActiveState(state)
}

// ActiveState reports whether a job in state has not ended: pending,
// running, and the like.
func ActiveState(state string) bool {
	state, _ = splitState(state)
	return slices.Contains(ActiveStates, state)
}

// ActiveStates are the states of a job that has not ended.
var ActiveStates = []string{"PENDING", "RUNNING", "SUSPENDED", "REQUEUED", "REQUEUE_HOLD", "REQUEUE_FED",
	"RESIZING", "SIGNALING", "STAGE_OUT", "CONFIGURING", "COMPLETING", "RESV_DEL_HOLD", "SPECIAL_EXIT"}

// Stub reports whether this is the placeholder record slurmdbd shows for a
// short job before the job's start record arrives (JobName "allocation", no
// ReqTRES): its real values replace it seconds later.
func (j *AcctJob) Stub() bool {
	return j.HasJobLine && j.Name == "allocation" && j.ReqTRES == ""
}

// LineError is a record the reader skipped.
type LineError struct {
	Line int
	Err  error
}

func (e *LineError) Error() string { return fmt.Sprintf("line %d: %v", e.Line, e.Err) }

// sacct columns the reader understands.
const (
	colJobIDRaw = iota
	colJobID
	colCluster
	colUser
	colAccount
	colPartition
	colQOS
	colState
	colExitCode
	colSubmit
	colStart
	colEnd
	colElapsedRaw
	colElapsed
	colTimelimitRaw
	colTimelimit
	colNNodes
	colAllocCPUS
	colNCPUS
	colNTasks
	colReqMem
	colMaxRSS
	colAllocTRES
	colReqTRES
	colTRESUsageInMax
	colNodeList
	colWorkDir
	colAdminComment
	colJobName
	numCols
)

var colByName = map[string]int{
	"jobidraw": colJobIDRaw, "jobid": colJobID, "cluster": colCluster, "user": colUser,
	"account": colAccount, "partition": colPartition, "qos": colQOS, "state": colState,
	"exitcode": colExitCode, "submit": colSubmit, "start": colStart, "end": colEnd,
	"elapsedraw": colElapsedRaw, "elapsed": colElapsed, "timelimitraw": colTimelimitRaw,
	"timelimit": colTimelimit, "nnodes": colNNodes, "alloccpus": colAllocCPUS, "ncpus": colNCPUS,
	"ntasks": colNTasks, "reqmem": colReqMem, "maxrss": colMaxRSS, "alloctres": colAllocTRES,
	"reqtres": colReqTRES, "tresusageinmax": colTRESUsageInMax, "nodelist": colNodeList,
	"workdir": colWorkDir, "admincomment": colAdminComment, "jobname": colJobName,
}

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

	jobstats jobstatsDecoder // one gzip reader for every summary of the stream

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
	if s.err != nil {
		return nil, s.err
	}
	for {
		rec, line, err := s.record()
		if err == io.EOF {
			s.err = io.EOF
			j := s.cur
			s.cur = nil
			if j == nil {
				return nil, io.EOF
			}
			return j, nil
		}
		if err != nil {
			s.err = err
			return nil, err
		}
		if rec == nil {
			continue
		}
		if done := s.add(rec, line); done != nil {
			return done, nil
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

// add merges a record into the job being built; it returns the previous job
// when this record starts a new one.
func (s *SacctReader) add(rec []string, line int) *AcctJob {
	rawID := s.get(rec, colJobIDRaw)
	id := s.get(rec, colJobID)
	key := rawID
	if key == "" {
		key = id
	}
	key, _, isStep := strings.Cut(key, ".")
	if key == "" {
		s.skip(line, errors.New("empty JobID"))
		return nil
	}
	var done *AcctJob
	if s.cur != nil && s.cur.Key != key {
		done, s.cur = s.cur, nil
	}
	if s.cur == nil {
		s.cur = &AcctJob{Line: line, Key: key, ExitCode: Unknown, ExitSignal: Unknown, Nodes: Unknown, CPUs: Unknown,
			ReqMemMiB: Unknown, MaxRSSMiB: Unknown, GPUMemMiB: Unknown, GPUUtil: Unknown, Elapsed: Unknown}
	}
	var err error
	if isStep {
		err = s.addStep(s.cur, rec)
		if !s.cur.HasJobLine && s.cur.ID == "" {
			// Steps without their job line (a filtered dump): still name the job.
			id, _, _ := strings.Cut(s.get(rec, colJobID), ".")
			if id == "" {
				id = key
			}
			s.cur.ID, s.cur.ArrayJob = id, arrayJobOf(id)
		}
	} else {
		err = s.addJob(s.cur, rec, id)
	}
	if err != nil {
		// The whole record is skipped: a half-read line is worse than none.
		s.skip(line, err)
		if isStep {
			s.cur.Steps--
		} else {
			s.cur.HasJobLine = false
		}
		if !s.cur.HasJobLine && s.cur.Steps == 0 {
			s.cur = nil
		}
	}
	return done
}

func (s *SacctReader) addJob(j *AcctJob, rec []string, id string) error {
	if id == "" {
		id = j.Key
	}
	var err error
	fail := func(field string, e error) {
		if err == nil && e != nil {
			err = fmt.Errorf("%s: %w", field, e)
		}
	}
	j.HasJobLine = true
	j.ID = id
	j.ArrayJob = arrayJobOf(id)
	j.Cluster = s.get(rec, colCluster)
	j.User = s.get(rec, colUser)
	j.Account = s.get(rec, colAccount)
	j.Partition = s.get(rec, colPartition)
	j.QOS = s.get(rec, colQOS)
	j.Name = s.get(rec, colJobName)
	j.WorkDir = s.get(rec, colWorkDir)
	j.NodeList = s.get(rec, colNodeList)
	if c := s.get(rec, colAdminComment); c != "" {
		j.Jobstats, j.JobstatsErr = s.jobstats.decode(c)
		if errors.Is(j.JobstatsErr, ErrNotJobstats) {
			j.JobstatsErr = nil
		}
	}
	j.State, j.CancelledBy = splitState(s.get(rec, colState))
	j.ExitCode, j.ExitSignal, err = parseExitCode(s.get(rec, colExitCode))
	if err != nil {
		err = fmt.Errorf("ExitCode: %w", err)
	}
	var e error
	j.Submit, e = parseSacctTime(s.get(rec, colSubmit))
	fail("Submit", e)
	j.Start, e = parseSacctTime(s.get(rec, colStart))
	fail("Start", e)
	j.End, e = parseSacctTime(s.get(rec, colEnd))
	fail("End", e)
	j.Elapsed, e = s.elapsed(rec, j.Start, j.End)
	fail("Elapsed", e)
	j.TimeLimit, j.PartitionLimit, e = s.timeLimit(rec)
	fail("Timelimit", e)
	j.Nodes, e = parseCount(s.get(rec, colNNodes))
	fail("NNodes", e)
	cpus := s.get(rec, colAllocCPUS)
	if cpus == "" || cpus == "0" {
		cpus = s.get(rec, colNCPUS)
	}
	j.CPUs, e = parseCount(cpus)
	fail("AllocCPUS", e)
	alloc := s.get(rec, colAllocTRES)
	j.ReqTRES = s.get(rec, colReqTRES)
	// A dump without AllocCPUS or NNodes: the TRES lists hold the same
	// counts (the request's, for a job that never started).
	if j.CPUs == Unknown {
		j.CPUs = tresCount("cpu", alloc, j.ReqTRES)
	}
	if j.Nodes == Unknown {
		j.Nodes = tresCount("node", alloc, j.ReqTRES)
	}
	j.ReqMemMiB, e = parseReqMem(s.get(rec, colReqMem), j.CPUs, j.Nodes)
	fail("ReqMem", e)
	if j.ReqMemMiB < 0 {
		// ReqMem missing or unreadable: the allocation's memory TRES is the same figure.
		j.ReqMemMiB = tresMemMiB(alloc, j.ReqTRES)
	}
	j.GPUType, j.GPUCount = tresGPU(alloc)
	if j.GPUType == "" {
		// A job that never started has no AllocTRES; its request says what it wanted.
		if t, n := tresGPU(j.ReqTRES); t != "" || j.GPUCount == 0 {
			j.GPUType, j.GPUCount = t, n
		}
	}
	return err
}

func (s *SacctReader) addStep(j *AcctJob, rec []string) error {
	j.Steps++
	tasks, err := parseCount(s.get(rec, colNTasks))
	if err != nil {
		return fmt.Errorf("NTasks: %w", err)
	}
	if tasks < 1 {
		tasks = 1
	}
	rss, err := parseSacctMemMiB(s.get(rec, colMaxRSS))
	if err != nil {
		return fmt.Errorf("MaxRSS: %w", err)
	}
	if rss >= 0 && rss*float64(tasks) > j.MaxRSSMiB {
		j.MaxRSSMiB = rss * float64(tasks)
	}
	usage := s.get(rec, colTRESUsageInMax)
	if !strings.Contains(usage, "gres/gpu") {
		return nil
	}
	if v, ok := tresValue(usage, "gres/gpumem"); ok {
		if mib, err := parseSacctMemMiB(v); err == nil && mib > j.GPUMemMiB {
			j.GPUMemMiB = mib
		}
	}
	if v, ok := tresValue(usage, "gres/gpuutil"); ok {
		if u, err := strconv.ParseFloat(v, 64); err == nil && u > j.GPUUtil {
			j.GPUUtil = u
		}
	}
	return nil
}

// elapsed is the job's run time: ElapsedRaw, else Elapsed, else, in a
// dump with neither column (jobstats asks sacct for Start and End alone),
// End − Start of a job that has both.
func (s *SacctReader) elapsed(rec []string, start, end time.Time) (time.Duration, error) {
	if s.col[colElapsedRaw] < 0 && s.col[colElapsed] < 0 {
		if start.IsZero() || end.IsZero() || end.Before(start) {
			return Unknown, nil
		}
		return end.Sub(start).Truncate(time.Second), nil
	}
	if v := s.get(rec, colElapsedRaw); v != "" {
		n, err := strconv.ParseInt(v, 10, 64)
		if err != nil || n < 0 {
			return Unknown, fmt.Errorf("%q is not a number of seconds", v)
		}
		return time.Duration(n) * time.Second, nil
	}
	v := s.get(rec, colElapsed)
	if v == "" || v == "INVALID" {
		return Unknown, nil
	}
	d, err := parseClock(v)
	if err != nil {
		return Unknown, err
	}
	return d, nil
}

func (s *SacctReader) timeLimit(rec []string) (TimeLimit, bool, error) {
	raw, ok := s.get(rec, colTimelimitRaw), true
	if s.col[colTimelimitRaw] < 0 {
		raw, ok = s.get(rec, colTimelimit), false
	}
	switch raw {
	case "", "INVALID":
		return TimeLimit{}, false, nil
	case "UNLIMITED", "INFINITE":
		return TimeLimit{Unlimited: true}, false, nil
	case "Partition_Limit":
		return TimeLimit{}, true, nil
	}
	if ok {
		min, err := strconv.ParseInt(raw, 10, 64)
		if err != nil || min < 0 {
			return TimeLimit{}, false, fmt.Errorf("%q is not a number of minutes", raw)
		}
		if min == 0 {
			return TimeLimit{Unlimited: true}, false, nil
		}
		return TimeLimit{Duration: time.Duration(min) * time.Minute}, false, nil
	}
	d, err := parseClock(raw)
	if err != nil {
		return TimeLimit{}, false, err
	}
	return TimeLimit{Duration: d}, false, nil
}

// parseClock reads sacct's [D-]HH:MM:SS, MM:SS and MM:SS.mmm durations.
func parseClock(v string) (time.Duration, error) {
	if i := strings.IndexByte(v, '.'); i >= 0 {
		v = v[:i]
	}
	t, err := ParseTimeLimit(v)
	if err != nil {
		return 0, err
	}
	return t.Duration, nil
}

// arrayJobOf is the id sbatch printed for a job: 123 for 123_4, 123_[1-5%2] and 123+0.
func arrayJobOf(id string) string {
	if i := strings.IndexAny(id, "_+."); i >= 0 {
		return id[:i]
	}
	return id
}

// splitState separates "CANCELLED by 1234" into the state and the uid.
func splitState(v string) (state, by string) {
	state, by, _ = strings.Cut(strings.TrimSpace(v), " by ")
	return state, by
}

func parseExitCode(v string) (code, signal int, err error) {
	if v == "" {
		return Unknown, Unknown, nil
	}
	c, sg, ok := strings.Cut(v, ":")
	code, err1 := strconv.Atoi(c)
	signal, err2 := 0, error(nil)
	if ok {
		signal, err2 = strconv.Atoi(sg)
	}
	if err1 != nil || err2 != nil || code < 0 || signal < 0 {
		return Unknown, Unknown, fmt.Errorf("%q is not code:signal", v)
	}
	return code, signal, nil
}

func parseCount(v string) (int, error) {
	if v == "" {
		return Unknown, nil
	}
	n, err := strconv.Atoi(v)
	if err != nil || n < 0 {
		return Unknown, fmt.Errorf("%q is not a count", v)
	}
	return n, nil
}

// parseSacctTime reads sacct's ISO local times (SLURM_TIME_FORMAT=standard)
// and epoch seconds (SLURM_TIME_FORMAT=%s); Unknown and None are the zero time.
func parseSacctTime(v string) (time.Time, error) {
	switch v {
	case "", "Unknown", "None", "N/A", "0":
		return time.Time{}, nil
	}
	t, err := parseTimeValue(v)
	if err == nil && (t.Unix() <= 0 || t.Year() > 9999) {
		// Not from sacct, and a history, its JSON and its waits could not hold it.
		return time.Time{}, fmt.Errorf("%q is not a time between 1970 and 9999", v)
	}
	return t, err
}

func parseTimeValue(v string) (time.Time, error) {
	if v[0] >= '0' && v[0] <= '9' && !strings.ContainsAny(v, "-:T") {
		n, err := strconv.ParseInt(v, 10, 64)
		if err != nil || n > 1<<40 {
			return time.Time{}, fmt.Errorf("%q is not a time", v)
		}
		return time.Unix(n, 0), nil
	}
	if t, ok := parseISO(v); ok {
		return t, nil
	}
	t, err := time.ParseInLocation("2006-01-02T15:04:05", v, time.Local)
	if err != nil {
		return time.Time{}, fmt.Errorf("%q is not a time (want YYYY-MM-DDTHH:MM:SS)", v)
	}
	return t, nil
}

func parseISO(v string) (time.Time, bool) {
	if len(v) != 19 || v[4] != '-' || v[7] != '-' || v[10] != 'T' || v[13] != ':' || v[16] != ':' {
		return time.Time{}, false
	}
	num := func(s string) int {
		n := 0
		for i := 0; i < len(s); i++ {
			c := s[i]
			if c < '0' || c > '9' {
				return -1
			}
			n = n*10 + int(c-'0')
		}
		return n
	}
	y, mo, d, h, mi, sec := num(v[0:4]), num(v[5:7]), num(v[8:10]), num(v[11:13]), num(v[14:16]), num(v[17:19])
	if y < 0 || mo < 1 || mo > 12 || d < 1 || d > 31 || h < 0 || h > 23 || mi < 0 || mi > 59 || sec < 0 || sec > 60 {
		return time.Time{}, false
	}
	return time.Date(y, time.Month(mo), d, h, mi, sec, 0, time.Local), true
}

var memUnits = map[byte]float64{
	'K': 1.0 / 1024, 'M': 1, 'G': 1024, 'T': 1024 * 1024, 'P': 1024 * 1024 * 1024, 'E': 1024 * 1024 * 1024 * 1024,
}

// parseSacctMemMiB reads sacct sizes: 205380K, 1.50T, 300M, 0, and bytes
// without a unit (MaxRSS under --noconvert); empty is Unknown.
func parseSacctMemMiB(v string) (float64, error) {
	return parseSize(v, 1.0/(1024*1024))
}

// parseSize reads a number with an optional K..E unit; bare numbers are
// multiplied by bare (in MiB per unit).
func parseSize(v string, bare float64) (float64, error) {
	if v == "" {
		return Unknown, nil
	}
	mult := bare
	if m, ok := memUnits[v[len(v)-1]]; ok {
		mult, v = m, v[:len(v)-1]
	}
	f, err := strconv.ParseFloat(v, 64)
	if err != nil || f < 0 {
		return Unknown, fmt.Errorf("%q is not a size", v)
	}
	return f * mult, nil
}

// parseReqMem reads ReqMem: a total in current Slurm ("300M"), per CPU or per
// node with the old c/n suffixes ("4000Mc", "16000Mn"), megabytes without a
// unit; the stub record's "16?" is Unknown.
func parseReqMem(v string, cpus, nodes int) (float64, error) {
	if v == "" || strings.HasSuffix(v, "?") {
		return Unknown, nil
	}
	per := v[len(v)-1]
	if per == 'c' || per == 'n' {
		v = v[:len(v)-1]
	}
	mib, err := parseSize(v, 1) // a bare ReqMem is megabytes
	if err != nil || mib < 0 {
		return Unknown, err
	}
	switch {
	case per == 'c' && cpus > 0:
		mib *= float64(cpus)
	case per == 'n' && nodes > 0:
		mib *= float64(nodes)
	}
	return mib, nil
}

// tresValue finds key's value in a TRES list such as "cpu=1,mem=300M,gres/gpu=1".
func tresValue(list, key string) (string, bool) {
	for list != "" {
		var item string
		item, list, _ = strings.Cut(list, ",")
		if k, v, ok := strings.Cut(item, "="); ok && k == key {
			return v, true
		}
	}
	return "", false
}

// tresCount is the count of key (cpu, node) in the first TRES list that
// has it, else Unknown.
func tresCount(key string, lists ...string) int {
	for _, l := range lists {
		if v, ok := tresValue(l, key); ok {
			if n, err := strconv.Atoi(v); err == nil && n > 0 {
				return n
			}
		}
	}
	return Unknown
}

func tresMemMiB(lists ...string) float64 {
	for _, l := range lists {
		if v, ok := tresValue(l, "mem"); ok {
			if mib, err := parseSize(v, 1); err == nil && mib >= 0 { // a bare TRES mem is megabytes
				return mib
			}
		}
	}
	return Unknown
}

// tresGPU finds the typed GPU entry (gres/gpu:a100_10g=1) in a TRES list, in
// any position; an untyped gres/gpu=N alone gives the count and no type.
func tresGPU(list string) (typ string, count int) {
	count = 0
	for list != "" {
		var item string
		item, list, _ = strings.Cut(list, ",")
		k, v, ok := strings.Cut(item, "=")
		if !ok || !strings.HasPrefix(k, "gres/gpu") {
			continue
		}
		n, err := strconv.Atoi(v)
		if err != nil {
			continue
		}
		if t, typed := strings.CutPrefix(k, "gres/gpu:"); typed {
			if typ == "" {
				typ, count = t, n
			}
		} else if k == "gres/gpu" && typ == "" {
			count = n
		}
	}
	return typ, count
}
