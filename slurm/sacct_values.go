package slurm

import (
	"fmt"
	"strconv"
	"strings"
	"time"
)

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
