package report

import (
	"strings"
	"unicode"
)

// What users named (a workload tag, a metric, the software and device a
// job printed) goes into the pages as text, never as Markdown or HTML of
// its own: a "]" would end a link, "<b>" would be live HTML.

// markdownEscapes are the characters that would be markup in running text,
// written so that CommonMark and Python-Markdown (MkDocs) both show them:
// a backslash escape where both take one, an HTML entity where not.
var markdownEscapes = map[rune]string{
	'\\': `\\`, '`': "\\`", '*': `\*`, '_': `\_`, '[': `\[`, ']': `\]`, '#': `\#`,
	'<': "&lt;", '>': "&gt;", '&': "&amp;",
	'\n': " ", '\r': " ", // a line break would end a heading or a list item
}

// markdownText is s as text in Markdown: a heading, a link's text, a list
// item, a table cell. An underscore inside a word (A100_10gb) is no
// emphasis to either, and is left as the published tables have it.
func markdownText(s string) string {
	var b strings.Builder
	runes := []rune(s)
	for i, r := range runes {
		esc, ok := markdownEscapes[r]
		if r == '_' && i > 0 && i+1 < len(runes) && isWordRune(runes[i-1]) && isWordRune(runes[i+1]) {
			ok = false
		}
		if r == '\r' && i+1 < len(runes) && runes[i+1] == '\n' {
			continue // one space for a CRLF
		}
		if !ok {
			b.WriteRune(r)
			continue
		}
		b.WriteString(esc)
	}
	return b.String()
}

func isWordRune(r rune) bool { return unicode.IsLetter(r) || unicode.IsDigit(r) }

// codeSpan is s as inline code: between backticks one more than the
// longest run of them in s, padded where s starts or ends with one, as
// CommonMark reads a code span; a line break is a space.
func codeSpan(s string) string {
	s = strings.NewReplacer("\r\n", " ", "\n", " ", "\r", " ").Replace(s)
	longest, run := 0, 0
	for _, r := range s {
		if r != '`' {
			run = 0
			continue
		}
		run++
		longest = max(longest, run)
	}
	fence := strings.Repeat("`", longest+1)
	if strings.HasPrefix(s, "`") || strings.HasSuffix(s, "`") {
		s = " " + s + " "
	}
	return fence + s + fence
}
