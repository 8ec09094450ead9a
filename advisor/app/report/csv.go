package report

import (
	"bytes"
	"encoding/csv"
	"strings"
)

// CSV is the report's table as the site's docs read it: RFC 4180, the header
// first, "\n" line ends, a cell quoted only when it must be (a comma, a
// quote, a line break, or a leading space).
func (rep *Report) CSV() ([]byte, error) {
	rows, err := rep.Table()
	if err != nil {
		return nil, err
	}
	var b bytes.Buffer
	w := csv.NewWriter(&b)
	if err := w.WriteAll(rows); err != nil {
		return nil, err
	}
	return b.Bytes(), nil
}

// MarkdownTable renders rows (the header first) as a pipe table, as pandas'
// to_markdown does for the docs: the label column left-aligned, the rest
// right-aligned, an empty cell shown as NA.
func MarkdownTable(rows [][]string) string {
	if len(rows) == 0 {
		return ""
	}
	width := make([]int, len(rows[0]))
	cells := make([][]string, len(rows))
	for i, row := range rows {
		cells[i] = make([]string, len(width))
		for j := range width {
			c := "NA"
			if j < len(row) && row[j] != "" {
				c = strings.ReplaceAll(row[j], "|", `\|`)
			}
			cells[i][j] = c
			width[j] = max(width[j], len([]rune(c)), 3)
		}
	}
	var b strings.Builder
	line := func(row []string) {
		for j, c := range row {
			pad := strings.Repeat(" ", width[j]-len([]rune(c)))
			if j == 0 {
				b.WriteString("| " + c + pad + " ")
			} else {
				b.WriteString("| " + pad + c + " ")
			}
		}
		b.WriteString("|\n")
	}
	line(cells[0])
	for j := range width {
		if j == 0 {
			b.WriteString("|:" + strings.Repeat("-", width[j]+1))
		} else {
			b.WriteString("|" + strings.Repeat("-", width[j]+1) + ":")
		}
	}
	b.WriteString("|\n")
	for _, row := range cells[1:] {
		line(row)
	}
	return b.String()
}
