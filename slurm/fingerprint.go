package slurm

import (
	"crypto/sha256"
	"encoding/hex"
	"sort"
	"strings"
)

// AutoMarker ends a line that migadvisor added to a script (for instance the
// monitor wrapper); such lines are not part of the work and are left out of
// the fingerprint.
const AutoMarker = "# migadvisor:auto"

// resourceOptions are the directives that say how the work runs, not what it
// is. Changing them (another profile, more time, a new job name) keeps the
// fingerprint.
var resourceOptions = map[string]bool{
	OptGPUs: true, OptGPUsPerNode: true, OptGPUsPerTask: true, OptGPUsPerSocket: true,
	"partition": true, "qos": true, "time": true, "time-min": true,
	"mem": true, "mem-per-cpu": true, "mem-per-gpu": true,
	"cpus-per-task": true, "cpus-per-gpu": true, "mincpus": true,
	"ntasks": true, "ntasks-per-node": true, "nodes": true, "exclusive": true,
	"job-name": true, "output": true, "error": true,
	"account": true, "mail-type": true, "mail-user": true, "reservation": true,
	"constraint": true, "exclude": true, "nodelist": true, "begin": true,
	"dependency": true, "hold": true, "comment": true, "nice": true, "priority": true,
}

// Fingerprint identifies the work a script does: a hash of the #! line, the
// directives that are not resource requests, and the body from the first
// command on, with blanks normalised. Sweep variants and re-submissions with
// other resources share it; any change to the body changes it.
func (s *Script) Fingerprint() string {
	h := sha256.New()
	h.Write([]byte("migadvisor-fingerprint-v1\n"))
	if len(s.Lines) > 0 && strings.HasPrefix(s.LineText(1), "#!") {
		h.Write([]byte(normaliseBlanks(s.LineText(1)) + "\n"))
	}
	var kept []string
	for _, o := range s.Options {
		if k, ok := workDirective(o); ok {
			kept = append(kept, k)
		}
	}
	sort.Strings(kept)
	for _, k := range kept {
		h.Write([]byte(k + "\n"))
	}
	h.Write([]byte("--\n"))
	for _, ln := range s.Lines {
		if ln.Num < s.FirstCmd || s.FirstCmd == 0 {
			continue
		}
		text := normaliseBlanks(string(s.Data[ln.Start:ln.End]))
		if text == "" || strings.HasSuffix(text, AutoMarker) {
			continue
		}
		h.Write([]byte(text + "\n"))
	}
	return hex.EncodeToString(h.Sum(nil))[:16]
}

// workDirective renders a directive option that belongs to the work, or false.
func workDirective(o Option) (string, bool) {
	prefix := ""
	if o.Component > 0 {
		prefix = "hetjob:"
	}
	if resourceOptions[o.Name] {
		return "", false
	}
	if o.Name != OptGres {
		return prefix + "--" + o.Name + "=" + o.Value, true
	}
	var other []string
	for _, e := range ParseGresList(o.Value) {
		if e.Name != "gpu" {
			other = append(other, e.Raw)
		}
	}
	if len(other) == 0 {
		return "", false
	}
	return prefix + "--gres=" + strings.Join(other, ","), true
}

func normaliseBlanks(s string) string {
	return strings.Join(strings.Fields(s), " ")
}
