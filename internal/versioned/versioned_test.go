package versioned

import (
	"strings"
	"testing"
)

func TestDecodeJSONChecksTheVersionFirst(t *testing.T) {
	type doc struct {
		Version int    `json:"version"`
		Name    string `json:"name"`
	}
	cases := []struct{ data, err string }{
		{`{"version": 2, "name": "x"}`, ""},
		{`{"version": 3, "name": 7}`, "f.json: sweep format version 3 is not supported (this migadvisor reads version 2)"},
		{`{"name": "x"}`, "f.json: not a sweep file: it has no version"},
		{`{not json`, "f.json: not a sweep file: "},
		{`{"version": 2, "name": 7}`, "f.json: not a sweep file: "},
	}
	for _, c := range cases {
		var d doc
		err := DecodeJSON("f.json", []byte(c.data), "sweep", 2, &d)
		switch {
		case c.err == "" && (err != nil || d.Name != "x"):
			t.Errorf("%s: %v %+v", c.data, err, d)
		case c.err != "" && (err == nil || !strings.HasPrefix(err.Error(), c.err)):
			t.Errorf("%s: got %v, want %q", c.data, err, c.err)
		}
	}
}
