package catalog

import "testing"

func TestFileErrorWithoutItsFile(t *testing.T) {
	for _, c := range []struct {
		err  FileError
		want string
	}{
		{FileError{File: "site.toml", Line: 3, Msg: "bad"}, "site.toml:3: bad"},
		{FileError{File: "site.toml", Msg: "bad"}, "site.toml: bad"},
		{FileError{Line: 3, Msg: "bad"}, "line 3: bad"},
		{FileError{Msg: `GPU type "nosuch" is not a profile of site wulver`}, `GPU type "nosuch" is not a profile of site wulver`},
	} {
		if got := c.err.Error(); got != c.want {
			t.Errorf("Error() = %q, want %q", got, c.want)
		}
	}
}
