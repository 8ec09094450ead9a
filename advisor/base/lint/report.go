package lint

import (
	"fmt"
	"io"
)

// Report is a script's findings at a site, as 'migadvisor lint' prints them.
type Report struct {
	File     string    `json:"file"`
	Site     string    `json:"site"`
	Findings []Finding `json:"findings"` // never nil: [] in JSON
}

// WriteText writes one FILE:LINE: SEVERITY: CODE: MESSAGE line per finding.
// A clean script is silent, so scripts can test the output; on a terminal
// (tty) it says so instead.
func (r Report) WriteText(w io.Writer, tty bool) error {
	for _, f := range r.Findings {
		if _, err := fmt.Fprintf(w, "%s:%d: %s: %s: %s\n", r.File, f.Line, f.Severity, f.Code, f.Message); err != nil {
			return err
		}
	}
	if len(r.Findings) == 0 && tty {
		_, err := fmt.Fprintf(w, "%s: no findings (site %s)\n", r.File, r.Site)
		return err
	}
	return nil
}

// Where is the finding prefixed by where it is: FILE:LINE: MESSAGE, FILE:
// MESSAGE for a figure no line gave (a flag's), or warning: MESSAGE without
// a file.
func (f Finding) Where(file string) string {
	switch {
	case file == "":
		return "warning: " + f.Message
	case f.Line == 0:
		return fmt.Sprintf("%s: %s", file, f.Message)
	}
	return fmt.Sprintf("%s:%d: %s", file, f.Line, f.Message)
}
