package memory

import "testing"

func TestNeedCellSaysWhatTheEvidenceProves(t *testing.T) {
	mib := func(v float64) *float64 { return &v }
	for _, c := range []struct {
		name          string
		need, ceiling *float64
		oomBound      bool
		want          string
	}{
		{"nothing known", nil, nil, false, "-"},
		{"a measured need", mib(5 * 1024), nil, false, "5.0G"},
		{"an out-of-memory's bound", mib(9558), nil, true, "≥9.3G"},
		{"a ceiling alone", nil, mib(60 * 1024), false, "≤60.0G"},
		{"between a bound and a ceiling", mib(9558), mib(60 * 1024), true, "9.3-60.0G"},
		{"a need under a ceiling is the need", mib(512), mib(60 * 1024), false, "512M"},
	} {
		if got := NeedCell(c.need, c.ceiling, c.oomBound); got != c.want {
			t.Errorf("%s: %q, want %q", c.name, got, c.want)
		}
	}
}

func TestShortMiB(t *testing.T) {
	for mib, want := range map[float64]string{0.5: "0.5M", 9.94: "9.9M", 10: "10M", 1023: "1023M", 1024: "1.0G", 81920: "80.0G"} {
		if got := ShortMiB(&mib); got != want {
			t.Errorf("ShortMiB(%v) = %q, want %q", mib, got, want)
		}
	}
}

func TestNeedWordsSaysWhatTheEvidenceProves(t *testing.T) {
	mib := func(v float64) *float64 { return &v }
	for _, c := range []struct {
		name          string
		need, ceiling *float64
		oomBound      bool
		want          string
	}{
		{"nothing known", nil, nil, false, ""},
		{"a measured need", mib(2.9 * 1024), nil, false, "2.9 GiB"},
		{"an out-of-memory's bound", mib(9558), nil, true, "≥ 9.3 GiB"},
		{"a ceiling alone", nil, mib(2.9 * 1024), false, "≤ 2.9 GiB"},
		{"between a bound and a ceiling", mib(9558), mib(60 * 1024), true, "9.3 GiB to 60.0 GiB"},
		{"a ceiling under the bound bounds nothing", mib(9558), mib(6 * 1024), true, "≥ 9.3 GiB"},
		{"a need under a ceiling is the need", mib(512), mib(60 * 1024), false, "512 MiB"},
	} {
		if got := NeedWords(c.need, c.ceiling, c.oomBound); got != c.want {
			t.Errorf("%s: %q, want %q", c.name, got, c.want)
		}
	}
}
