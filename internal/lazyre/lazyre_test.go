package lazyre

import "testing"

// A pattern is compiled once, on first use, and then matches as regexp's.
func TestCompiledOnFirstUse(t *testing.T) {
	re := New(`(\d+) GiB`)
	if re.re != nil {
		t.Fatal("compiled before use")
	}
	if m := re.FindStringSubmatch("peak 12 GiB"); len(m) != 2 || m[1] != "12" {
		t.Errorf("match: %q", m)
	}
	first := re.Get()
	if re.Get() != first || !re.MatchString("3 GiB") || re.MatchString("3 MiB") {
		t.Error("compiled again, or matched wrong")
	}
}
