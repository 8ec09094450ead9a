package catalog

import (
	"bytes"
	"errors"
	"math"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// FuzzSiteParse loads any input as a site file. It never panics; a file it
// refuses gets one line that names the file and a line that exists; a file
// it accepts has profiles whose SU rate is a finite number ≥ 0.
func FuzzSiteParse(f *testing.F) {
	files, _ := filepath.Glob("sites/*.toml")
	more, _ := filepath.Glob("../examples/sites/*.toml")
	for _, file := range append(files, more...) {
		if data, err := os.ReadFile(file); err == nil {
			f.Add(data)
		}
	}
	f.Add([]byte("version = 1\nname = \"x\"\n[[profiles]]\nname = \"1g\"\nrequest = \"--gres=gpu:a:1\"\n"))
	f.Add([]byte("version = 2\n"))
	f.Add([]byte("version = 1\n[billing]\ncpu_weight = -1\nmemory_per_cpu = \"0G\"\n"))
	f.Fuzz(func(t *testing.T, data []byte) {
		site, err := Parse("site.toml", data)
		if err != nil {
			var fe *FileError
			if !errors.As(err, &fe) {
				t.Fatalf("not a FileError: %T %v", err, err)
			}
			lines := bytes.Count(data, []byte{'\n'}) + 1
			msg := err.Error()
			if fe.File != "site.toml" || fe.Line < 0 || fe.Line > lines || !strings.HasPrefix(msg, "site.toml") || strings.Contains(msg, "\n") {
				t.Fatalf("error %q (line %d of %d)", msg, fe.Line, lines)
			}
			return
		}
		for _, name := range site.ProfileNames() {
			p, ok := site.Profile(name)
			if !ok {
				t.Fatalf("profile %q is listed but not found", name)
			}
			c, err := site.Charge(Job{Profile: p, Hours: 1})
			if err != nil {
				continue
			}
			if c.SUPerHour < 0 || math.IsNaN(c.SUPerHour) || math.IsInf(c.SUPerHour, 0) {
				t.Errorf("profile %s costs %v SU/h", name, c.SUPerHour)
			}
		}
	})
}
