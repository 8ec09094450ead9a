package slurm

import (
	"errors"
	"fmt"
	"strconv"
	"strings"
	"time"
)

// add merges a record into the job being built; it returns the previous job,
// and its AdminComment, when this record starts a new one.
func (s *SacctReader) add(rec []string, line int) (*AcctJob, string) {
	rawID := s.get(rec, colJobIDRaw)
	id := s.get(rec, colJobID)
	key := rawID
	if key == "" {
		key = id
	}
	key, _, isStep := strings.Cut(key, ".")
	if key == "" {
		s.skip(line, errors.New("empty JobID"))
		return nil, ""
	}
	var done *AcctJob
	var summary string
	if s.cur != nil && s.cur.Key != key {
		done, s.cur = s.cur, nil
		summary, s.curSummary = s.curSummary, ""
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
			s.cur, s.curSummary = nil, ""
		}
	}
	return done, summary
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
		s.curSummary = c // decoded once the job is read whole (readAhead)
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
