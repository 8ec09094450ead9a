package catalog

import (
	"strconv"
	"strings"

	"github.com/migadvisor/migadvisor/internal/lazyre"
)

// keyPos is where a key is set in a TOML file.
type keyPos struct {
	table string // dotted table path, "" at the top level
	index int    // element of an array of tables ([[table]]), else 0
	key   string
	line  int
}

// locateKeys finds the line of every "key = value" in a TOML document. The
// decoder does not expose positions, and a user must be told which line of
// their site file is wrong.
func locateKeys(data []byte) []keyPos {
	var out []keyPos
	table, index := "", 0
	counts := map[string]int{}
	depth := 0 // open brackets of a multi-line value
	for i, raw := range strings.Split(string(data), "\n") {
		line := strings.TrimSpace(stripComment(raw))
		if depth > 0 {
			depth += bracketBalance(line)
			continue
		}
		switch {
		case line == "":
		case strings.HasPrefix(line, "[["):
			table = cleanKey(strings.Trim(line, "[] "))
			index = counts[table]
			counts[table]++
		case strings.HasPrefix(line, "["):
			table = cleanKey(strings.Trim(line, "[] "))
			if parent, _, ok := strings.Cut(table, "."); ok && counts[parent] > 0 {
				index = counts[parent] - 1
			} else {
				index = 0
			}
		default:
			key, value, ok := strings.Cut(line, "=")
			if !ok {
				continue
			}
			out = append(out, keyPos{table: table, index: index, key: cleanKey(key), line: i + 1})
			depth = bracketBalance(value)
		}
	}
	return out
}

// lineOf returns the line of key in the index-th element of table, or of the
// table's header when the key is not written there, or 0.
func lineOf(positions []keyPos, table string, index int, key string) int {
	for _, p := range positions {
		if p.table == table && p.index == index && p.key == key {
			return p.line
		}
	}
	for _, p := range positions {
		if p.table == table && p.index == index {
			return p.line
		}
	}
	return 0
}

var quotedPart = lazyre.New(`"([^"]*)"|'([^']*)'`)

func cleanKey(k string) string {
	k = quotedPart.ReplaceAllString(strings.TrimSpace(k), "$1$2")
	parts := strings.Split(k, ".")
	for i := range parts {
		parts[i] = strings.TrimSpace(parts[i])
	}
	return strings.Join(parts, ".")
}

func stripComment(s string) string {
	var quote byte
	for i := 0; i < len(s); i++ {
		c := s[i]
		switch {
		case quote != 0 && c == '\\' && quote == '"':
			i++
		case quote != 0 && c == quote:
			quote = 0
		case quote == 0 && (c == '"' || c == '\''):
			quote = c
		case quote == 0 && c == '#':
			return s[:i]
		}
	}
	return s
}

func bracketBalance(s string) int {
	n := 0
	var quote byte
	for i := 0; i < len(s); i++ {
		c := s[i]
		switch {
		case quote != 0 && c == quote:
			quote = 0
		case quote != 0:
		case c == '"' || c == '\'':
			quote = c
		case c == '[' || c == '{':
			n++
		case c == ']' || c == '}':
			n--
		}
	}
	return n
}

var tomlLine = lazyre.New(`line (\d+)`)

// lineFromDecodeError digs the line number out of a decoder error.
func lineFromDecodeError(msg string) int {
	if m := tomlLine.FindStringSubmatch(msg); m != nil {
		n, _ := strconv.Atoi(m[1])
		return n
	}
	return 0
}
