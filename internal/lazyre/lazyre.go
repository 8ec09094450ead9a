// Package lazyre is a regular expression compiled on first use, not when
// its package loads: the sbatch wrapper starts on every submission, and
// compiling patterns it never uses (the job-output scanner's, the site
// discovery's) cost it a millisecond.
package lazyre

import (
	"regexp"
	"sync"
)

// Regexp is a regexp.Regexp compiled when first used; a pattern that does
// not compile panics then, as regexp.MustCompile does at start-up.
type Regexp struct {
	once sync.Once
	src  string
	re   *regexp.Regexp
}

// New is src, to be compiled on first use.
func New(src string) *Regexp { return &Regexp{src: src} }

// Get is the compiled expression.
func (l *Regexp) Get() *regexp.Regexp {
	l.once.Do(func() { l.re = regexp.MustCompile(l.src) })
	return l.re
}

func (l *Regexp) MatchString(s string) bool            { return l.Get().MatchString(s) }
func (l *Regexp) FindString(s string) string           { return l.Get().FindString(s) }
func (l *Regexp) FindStringSubmatch(s string) []string { return l.Get().FindStringSubmatch(s) }
func (l *Regexp) FindStringIndex(s string) []int       { return l.Get().FindStringIndex(s) }
func (l *Regexp) FindAllStringSubmatch(s string, n int) [][]string {
	return l.Get().FindAllStringSubmatch(s, n)
}

func (l *Regexp) ReplaceAllString(src, repl string) string {
	return l.Get().ReplaceAllString(src, repl)
}
