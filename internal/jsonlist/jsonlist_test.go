package jsonlist

import (
	"encoding/json"
	"testing"
)

func TestNonNilWritesAnEmptyListNotNull(t *testing.T) {
	var none []string
	for _, c := range []struct {
		in   []string
		want string
	}{{none, "[]"}, {[]string{}, "[]"}, {[]string{"a"}, `["a"]`}} {
		got, err := json.Marshal(NonNil(c.in))
		if err != nil || string(got) != c.want {
			t.Errorf("NonNil(%#v) = %s, %v; want %s", c.in, got, err, c.want)
		}
	}
}
