package slurm

import (
	"bufio"
	"bytes"
	"context"
	"io"
	"strings"
)

// batchScriptHeader starts each script in `sacct --batch-script` output,
// followed by a line of dashes.
const batchScriptHeader = "Batch Script for "

// ParseBatchScripts reads `sacct --batch-script -j ...` output: each job id
// with the script slurmdbd stored for it. Jobs it has none for (a site
// without AccountingStoreFlags=job_script, a job not started) print "NONE"
// and are left out.
func ParseBatchScripts(r io.Reader) (map[string][]byte, error) {
	scripts := map[string][]byte{}
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 64<<10), 16<<20)
	var id string
	var body bytes.Buffer
	flush := func() {
		text := strings.TrimSuffix(body.String(), "\n") // sacct adds a blank line after each
		if id != "" && strings.TrimSpace(text) != "NONE" && text != "" {
			scripts[id] = []byte(text)
		}
		body.Reset()
	}
	var lines []string // a header's line waits for the dashes that confirm it
	for sc.Scan() {
		lines = append(lines, sc.Text())
		n := len(lines)
		if n >= 2 && strings.HasPrefix(lines[n-2], batchScriptHeader) && isDashes(lines[n-1]) {
			for _, l := range lines[:n-2] {
				body.WriteString(l + "\n")
			}
			flush()
			id = strings.TrimSpace(strings.TrimPrefix(lines[n-2], batchScriptHeader))
			lines = lines[:0]
		} else if n >= 2 {
			body.WriteString(lines[0] + "\n")
			lines = lines[1:]
		}
	}
	for _, l := range lines {
		body.WriteString(l + "\n")
	}
	flush()
	return scripts, sc.Err()
}

func isDashes(s string) bool {
	return len(s) >= 10 && strings.Trim(s, "-") == ""
}

// batchScriptChunk bounds the job ids of one sacct call.
const batchScriptChunk = 200

// BatchScripts asks slurmdbd for the scripts of jobs (by JobIDRaw), in
// chunks. Needs AccountingStoreFlags=job_script; other users' scripts need
// root or an operator.
func (c *Client) BatchScripts(ctx context.Context, ids []string) (map[string][]byte, error) {
	all := map[string][]byte{}
	for start := 0; start < len(ids); start += batchScriptChunk {
		chunk := ids[start:min(start+batchScriptChunk, len(ids))]
		out, err := c.run(ctx, "", "sacct", "--batch-script", "-j", strings.Join(chunk, ","))
		if err != nil {
			return all, err
		}
		scripts, err := ParseBatchScripts(bytes.NewReader(out))
		if err != nil {
			return all, err
		}
		for id, s := range scripts {
			all[id] = s
		}
	}
	return all, nil
}
