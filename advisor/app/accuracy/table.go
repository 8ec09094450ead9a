package accuracy

import (
	"encoding/csv"
	"errors"
	"fmt"
	"io"
	"math"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"unicode"

	"github.com/migadvisor/migadvisor/advisor/base/runmodel"
	"github.com/migadvisor/migadvisor/catalog"
)

// ReadCases reads a CSV of measured times on the profiles of site, in one
// of two layouts, told apart by the header (case aside):
//
//   - long: a column naming the job (case, job, workload, benchmark or
//     name), one naming the profile (profile, gpu profile, mig profile,
//     slice or gpu) and a column of values; one case per job (named
//     "<job> <column's header>" where there are several columns).
//   - wide, as Wulver publishes its tables: the profile column (else the
//     first) and a case in each column of times, named "<file's base
//     name> <column's header>"; a table without one makes each column of
//     rates a case instead. Other columns (SMs, memory, SU...) are ignored.
//
// A column of times has time, seconds, walltime, runtime or latency in its
// header, or a unit in parentheses, (s), (min) or (h): minutes and hours
// become seconds. A column of rates (TFLOPs, throughput, samples/s, ns/day)
// is read as times of one fixed amount of work, 1/rate: only ratios matter.
// A profile is a site's profile named in the label ("1g.10gb", "MIG
// 1g.10gb"), the whole GPU ("full", "whole", "no MIG"), or what
// catalog.Site.ProfileForLabel reads ("A100_10gb MIG"). A cell left blank or
// marked OOM, N/A or "-" was not measured. A case measured on one profile
// alone is dropped: the protocols need two. file names the table in cases
// and errors; every error names its line.
func ReadCases(file string, r io.Reader, site *catalog.Site) ([]Case, error) {
	t := &table{file: file, site: site, csv: csv.NewReader(r)}
	t.csv.FieldsPerRecord = -1
	header, line, err := t.next()
	if err != nil {
		return nil, err
	}
	if header == nil {
		return nil, fmt.Errorf("%s: the table is empty", file)
	}
	if err := t.layout(header, line); err != nil {
		return nil, err
	}
	return t.read(line)
}

// table is a CSV being read into cases.
type table struct {
	file string
	site *catalog.Site
	csv  *csv.Reader

	job     int      // the job column, -1 in the wide layout
	profile int      // the profile column
	values  []column // the columns read
	base    string   // the file's base name, which names the wide layout's cases
}

// column is a column of times or rates.
type column struct {
	index  int
	header string
	rate   bool    // a rate: the time is 1/value
	scale  float64 // seconds per unit of a time
}

// next is the next record that is not blank, with its line; nil at the end.
func (t *table) next() ([]string, int, error) {
	for {
		rec, err := t.csv.Read()
		if errors.Is(err, io.EOF) {
			return nil, 0, nil
		}
		var perr *csv.ParseError
		if errors.As(err, &perr) {
			return nil, 0, fmt.Errorf("%s:%d: %v", t.file, perr.Line, perr.Err)
		}
		if err != nil {
			return nil, 0, fmt.Errorf("%s: %w", t.file, err)
		}
		line, _ := t.csv.FieldPos(0)
		if slices.ContainsFunc(rec, func(c string) bool { return strings.TrimSpace(c) != "" }) {
			return rec, line, nil
		}
	}
}

// Header words, lower case.
var (
	jobHeaders     = []string{"case", "job", "workload", "benchmark", "name"}
	profileHeaders = []string{"profile", "gpu profile", "mig profile", "slice", "mig slice", "gpu"}
	timeWords      = []string{"time", "seconds", "walltime", "runtime", "latency"}
	rateWords      = []string{"tflops", "gflops", "throughput", "per second", "ns/day", "tau/day"}
	// a rate per second: samples/s, it/s, tokens/sec, but not ms/step
	perSecond = regexp.MustCompile(`/s(ec(ond)?)?\b`)
	// a unit of time in parentheses or brackets: (s), [min], (h)
	timeUnit = regexp.MustCompile(`(^|\s)[(\[]\s*(s|secs?|seconds?|ms|min|mins|minutes?|h|hrs?|hours?)\s*[)\]]`)
)

// seconds per unit of the time units a header may name
var unitSeconds = map[string]float64{
	"s": 1, "sec": 1, "secs": 1, "second": 1, "seconds": 1, "ms": 1e-3,
	"min": 60, "mins": 60, "minute": 60, "minutes": 60,
	"h": 3600, "hr": 3600, "hrs": 3600, "hour": 3600, "hours": 3600,
}

func normHeader(h string) string {
	return strings.Join(strings.Fields(strings.ToLower(strings.TrimPrefix(h, "\ufeff"))), " ")
}

// valueColumn reads a header as a column of times or rates.
func valueColumn(index int, header string) (column, bool) {
	h := normHeader(header)
	c := column{index: index, header: strings.TrimSpace(strings.TrimPrefix(header, "\ufeff")), scale: 1}
	if perSecond.MatchString(h) || slices.ContainsFunc(rateWords, func(w string) bool { return strings.Contains(h, w) }) {
		c.rate = true
		return c, true
	}
	unit := timeUnit.FindStringSubmatch(h)
	if unit == nil && !slices.ContainsFunc(timeWords, func(w string) bool { return strings.Contains(h, w) }) {
		return column{}, false
	}
	if unit != nil {
		c.scale = unitSeconds[unit[2]]
	} else {
		for _, w := range strings.FieldsFunc(h, func(r rune) bool { return !unicode.IsLetter(r) }) {
			if s, ok := unitSeconds[w]; ok && w != "s" && w != "h" {
				c.scale = s
			}
		}
	}
	return c, true
}

// layout reads the header: which columns name the job and the profile, and
// which hold the values.
func (t *table) layout(header []string, line int) error {
	t.job, t.profile = -1, -1
	for i, h := range header {
		h = normHeader(h)
		switch {
		case t.job < 0 && (slices.Contains(jobHeaders, h) || slices.Contains(jobHeaders, strings.TrimSuffix(h, " name"))):
			t.job = i
		case t.profile < 0 && slices.Contains(profileHeaders, h):
			t.profile = i
		}
	}
	if t.job < 0 || t.profile < 0 { // the wide layout: the profile column, else the first
		t.job = -1
		t.profile = max(t.profile, 0)
		t.base = strings.TrimSuffix(filepath.Base(t.file), filepath.Ext(t.file))
	}
	var times, rates []column
	for i, h := range header {
		if i == t.job || i == t.profile {
			continue
		}
		if c, ok := valueColumn(i, h); ok && c.rate {
			rates = append(rates, c)
		} else if ok {
			times = append(times, c)
		}
	}
	t.values = times
	if len(times) == 0 {
		t.values = rates
	}
	if len(t.values) == 0 {
		return fmt.Errorf("%s:%d: no column of times (a header with time, seconds, walltime, runtime or latency, or a unit such as (s), (min) or (h)) or of rates (TFLOPs, throughput, samples/s, ns/day)", t.file, line)
	}
	return nil
}

// notMeasured are the cells that say a run gave no time.
var notMeasured = []string{"", "oom", "n/a", "na", "-", "—", "–", "failed", "error", "x"}

// read reads the rows under the header into cases, in the order they
// first appear.
func (t *table) read(headerLine int) ([]Case, error) {
	var cases []Case
	index := map[string]int{}   // case name → its index in cases
	seen := map[[2]string]int{} // case and profile → the line measuring it
	rows := 0
	for {
		rec, line, err := t.next()
		if err != nil {
			return nil, err
		}
		if rec == nil {
			break
		}
		rows++
		cell := func(i int) string {
			if i < len(rec) {
				return strings.TrimSpace(rec[i])
			}
			return ""
		}
		job := t.base
		if t.job >= 0 {
			if job = cell(t.job); job == "" {
				return nil, fmt.Errorf("%s:%d: the row names no job (column %d is empty)", t.file, line, t.job+1)
			}
		}
		label := cell(t.profile)
		p, ok := t.site.ProfileForLabel(label)
		if !ok {
			return nil, fmt.Errorf("%s:%d: %q names no one profile of site %s (its profiles: %s; measured on another GPU? give --gpu MODEL)",
				t.file, line, label, t.site.Name, strings.Join(t.site.ProfileNames(), ", "))
		}
		for _, c := range t.values {
			text := cell(c.index)
			if slices.Contains(notMeasured, strings.ToLower(text)) {
				continue
			}
			v, err := strconv.ParseFloat(text, 64)
			switch {
			case err != nil:
				return nil, fmt.Errorf("%s:%d: %q under %q is not a number", t.file, line, text, c.header)
			case !(v > 0) || math.IsInf(v, 0):
				return nil, fmt.Errorf("%s:%d: %s under %q is not a positive number", t.file, line, text, c.header)
			case v < 1e-30 || v > 1e30: // their ratios would overflow the scores
				return nil, fmt.Errorf("%s:%d: %s under %q is beyond any time or rate this reads (1e-30 to 1e30)", t.file, line, text, c.header)
			}
			name := job
			if t.job < 0 || len(t.values) > 1 {
				name = strings.TrimSpace(job + " " + c.header)
			}
			if first, dup := seen[[2]string{name, p.Name}]; dup {
				return nil, fmt.Errorf("%s:%d: %s is measured twice on %s (line %d too)", t.file, line, name, p.Name, first)
			}
			seen[[2]string{name, p.Name}] = line
			i, ok := index[name]
			if !ok {
				i, index[name] = len(cases), len(cases)
				cases = append(cases, Case{Name: name, Benchmark: job})
			}
			seconds := v * c.scale
			if c.rate {
				seconds = 1 / v
			}
			cases[i].Points = append(cases[i].Points, runmodel.Point{Profile: p.Name, Shares: t.site.Shares(p), Seconds: seconds})
		}
	}
	if rows == 0 {
		return nil, fmt.Errorf("%s:%d: the table has a header but no rows under it", t.file, headerLine)
	}
	return slices.DeleteFunc(cases, func(c Case) bool { return len(c.Points) < 2 }), nil
}
