package sacctgen

import "testing"

// A field left out takes its values with it, a job name holding the
// delimiter whole.
func TestWithoutAndOnlyFields(t *testing.T) {
	dump := "JobIDRaw|State|JobName\n1|COMPLETED|a|b\n"
	if got, want := WithoutFields(dump, "State"), "JobIDRaw|JobName\n1|a|b\n"; got != want {
		t.Errorf("WithoutFields: %q, want %q", got, want)
	}
	if got, want := OnlyFields(dump, "JobName", "JobIDRaw"), "JobIDRaw|JobName\n1|a|b\n"; got != want {
		t.Errorf("OnlyFields: %q, want %q", got, want)
	}
}
