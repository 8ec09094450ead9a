package slurm

import (
	"bufio"
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"strings"
)

// batchScriptHeader starts each script in `sacct --batch-script` output,
// followed by a line of dashes.
const batchScriptHeader = "Batch Script for "

// ErrNoBatchScriptHeader is output of `sacct --batch-script` with no
// "Batch Script for" header in it: not what that option prints (a sacct
// that ignored it printed its usual table), so no job's script can be
// told from it.
var ErrNoBatchScriptHeader = errors.New("no \"Batch Script for\" header in its output (a Slurm before 21.08 does not know the option)")

// ParseBatchScripts reads `sacct --batch-script -j ...` output: each job id
// with the script slurmdbd stored for it. Jobs it has none for (a site
// without AccountingStoreFlags=job_script, a job not started) print "NONE"
// and are left out. Output with no header at all is ErrNoBatchScriptHeader:
// read as "no stored scripts", it would pass for a site that keeps none.
func ParseBatchScripts(r io.Reader) (map[string][]byte, error) {
	scripts, _, err := ParseBatchScriptsShown(r)
	return scripts, err
}

// ParseBatchScriptsShown is ParseBatchScripts, with the jobs sacct printed
// a header for, a script or "NONE". A job asked for and not among them is
// one slurmdbd did not show: it shows another user's job only to root,
// SlurmUser, Slurm's operators and administrators and the coordinators of
// its account, and none it no longer holds (purged, or no such job).
func ParseBatchScriptsShown(r io.Reader) (scripts map[string][]byte, shown map[string]bool, err error) {
	scripts, shown = map[string][]byte{}, map[string]bool{}
	err = ScanBatchScripts(r, func(id string, script []byte) error {
		shown[id] = true
		if script != nil {
			scripts[id] = script
		}
		return nil
	})
	if err != nil {
		return nil, nil, err
	}
	return scripts, shown, nil
}

// ScanBatchScripts reads `sacct --batch-script` output as it streams, a
// script at a time, as ParseBatchScriptsShown reads it: fn hears each job
// id the output has a header for, with its script (nil for "NONE"). A
// saved file of a site's month is read without holding it all.
func ScanBatchScripts(r io.Reader, fn func(id string, script []byte) error) error {
	br := bufio.NewReaderSize(r, 64<<10)
	var pushed *string // a line read ahead of the one being read
	next := func() (string, bool, error) {
		if pushed != nil {
			line := *pushed
			pushed = nil
			return line, true, nil
		}
		line, err := br.ReadString('\n')
		if err == io.EOF {
			return line, line != "", nil
		}
		return line, err == nil, err
	}
	var id string
	var text strings.Builder
	headers, content := 0, false
	flush := func() error {
		if headers == 0 {
			return nil
		}
		// sacct adds a newline after each script.
		body := strings.TrimSuffix(text.String(), "\n")
		text.Reset()
		var script []byte
		if strings.TrimSpace(body) != "NONE" && body != "" {
			script = []byte(body)
		}
		return fn(id, script)
	}
	for {
		line, ok, err := next()
		if err != nil {
			return err
		}
		if !ok {
			break
		}
		if strings.TrimSpace(line) != "" {
			content = true
		}
		// A header is its line followed by a line of dashes; a script's
		// own "Batch Script for" line without them is part of the script.
		if strings.HasPrefix(line, batchScriptHeader) {
			after, more, err := next()
			if err != nil {
				return err
			}
			if more && isDashes(strings.TrimSpace(after)) {
				if err := flush(); err != nil {
					return err
				}
				id = strings.TrimSpace(strings.TrimPrefix(line, batchScriptHeader))
				headers++
				continue
			}
			if more {
				pushed = &after
			}
		}
		if headers > 0 {
			text.WriteString(line)
		}
	}
	if headers == 0 && content {
		return ErrNoBatchScriptHeader
	}
	return flush()
}

func isDashes(s string) bool {
	return len(s) >= 10 && strings.Trim(s, "-") == ""
}

// batchScriptChunk bounds the job ids of one sacct call.
const batchScriptChunk = 200

// BatchScripts asks slurmdbd for the scripts of jobs (by JobIDRaw), in
// chunks. Needs AccountingStoreFlags=job_script; other users' scripts need
// root or an operator. An error says that the scripts could not be read,
// which is not that there are none: callers say it.
func (c *Client) BatchScripts(ctx context.Context, ids []string) (map[string][]byte, error) {
	scripts, _, err := c.BatchScriptsShown(ctx, ids)
	return scripts, err
}

// BatchScriptsShown is BatchScripts, with the jobs sacct showed
// (ParseBatchScriptsShown): those it did not are neither a script nor
// known to have none.
func (c *Client) BatchScriptsShown(ctx context.Context, ids []string) (map[string][]byte, map[string]bool, error) {
	all, shown := map[string][]byte{}, map[string]bool{}
	for start := 0; start < len(ids); start += batchScriptChunk {
		chunk := ids[start:min(start+batchScriptChunk, len(ids))]
		out, err := c.run(ctx, "", "sacct", "--batch-script", "-j", strings.Join(chunk, ","))
		if err != nil {
			return all, shown, fmt.Errorf("sacct --batch-script: %w", err)
		}
		scripts, seen, err := ParseBatchScriptsShown(bytes.NewReader(out))
		if err != nil {
			return all, shown, fmt.Errorf("sacct --batch-script: %w", err)
		}
		for id, s := range scripts {
			all[id] = s
		}
		for id := range seen {
			shown[id] = true
		}
	}
	return all, shown, nil
}

// BatchJobs reports, of jobs (by JobIDRaw), which ran a batch script: those
// accounting has a "batch" step of (sbatch makes one; an allocation of
// salloc or srun has none, and so never a stored script). The ids are
// asked in chunks: sacct --jobs with every step, JobIDRaw alone.
func (c *Client) BatchJobs(ctx context.Context, ids []string) (map[string]bool, error) {
	batch := map[string]bool{}
	for start := 0; start < len(ids); start += batchScriptChunk {
		chunk := ids[start:min(start+batchScriptChunk, len(ids))]
		out, err := c.run(ctx, "", "sacct", "--noheader", "--parsable2", "--allusers", "--format=JobIDRaw",
			"--jobs="+strings.Join(chunk, ","))
		if err != nil {
			return batch, fmt.Errorf("sacct --format=JobIDRaw: %w", err)
		}
		for k := range ParseBatchSteps(out) {
			batch[k] = true
		}
	}
	return batch, nil
}

// ParseBatchSteps reads `sacct --format=JobIDRaw` output with steps: the
// jobs with a batch step ("123.batch" is job 123's), by JobIDRaw. Other
// lines (the allocation's, its other steps', a header) say nothing.
func ParseBatchSteps(out []byte) map[string]bool {
	batch := map[string]bool{}
	for _, line := range strings.Split(string(out), "\n") {
		field, _, _ := strings.Cut(strings.TrimSpace(line), "|")
		if job, ok := strings.CutSuffix(field, ".batch"); ok && job != "" {
			batch[job] = true
		}
	}
	return batch
}
