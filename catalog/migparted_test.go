package catalog

import (
	"bytes"
	"fmt"
	"reflect"
	"strconv"
	"strings"
	"testing"
)

// NVIDIA/mig-parted's examples/config.yaml (commit 5aa3dd9), the form
// shared/notes/site-rules-and-mig-layouts.md describes.
const nvidiaMigPartedExample = `version: v1
mig-configs:
  all-disabled:
    - devices: all
      mig-enabled: false

  all-enabled:
    - devices: all
      mig-enabled: true
      mig-devices: {}

  all-1g.5gb:
    - devices: all
      mig-enabled: true
      mig-devices:
        "1g.5gb": 7

  all-2g.10gb:
    - devices: all
      mig-enabled: true
      mig-devices:
        "2g.10gb": 3

  all-3g.20gb:
    - devices: all
      mig-enabled: true
      mig-devices:
        "3g.20gb": 2

  all-balanced:
    - devices: all
      mig-enabled: true
      mig-devices:
        "1g.5gb": 2
        "2g.10gb": 1
        "3g.20gb": 1

  custom-config:
    - devices: [0,1,2,3]
      mig-enabled: false
    - devices: [4]
      mig-enabled: true
      mig-devices:
        "1g.5gb": 7
    - devices: [5]
      mig-enabled: true
      mig-devices:
        "2g.10gb": 3
    - devices: [6]
      mig-enabled: true
      mig-devices:
        "3g.20gb": 2
    - devices: [7]
      mig-enabled: true
      mig-devices:
        "1g.5gb": 2
        "2g.10gb": 1
        "3g.20gb": 1
`

// TestWriteMigPartedAsNVIDIAsExample: NVIDIA's example configs, written
// from layouts, read back as the same YAML structure as NVIDIA's file
// (its all-enabled, MIG on with no instances, is no layout). The YAML is
// read by a reader of the block subset both use, so that the check is on
// maps, lists and values rather than on spacing.
func TestWriteMigPartedAsNVIDIAsExample(t *testing.T) {
	m := model(t, "A100-SXM4-40GB")
	layout := func(text string) Layout {
		l, err := m.ParseLayout(text)
		if err != nil {
			t.Fatal(err)
		}
		return l
	}
	all := func(text string) []MigPartedDevices { return []MigPartedDevices{{Layout: layout(text)}} }
	seven := "1g.5gb,1g.5gb,1g.5gb,1g.5gb,1g.5gb,1g.5gb,1g.5gb"
	balanced := "1g.5gb,1g.5gb,2g.10gb,3g.20gb"
	configs := []MigPartedConfig{
		{"all-disabled", all("full")},
		{"all-1g.5gb", all(seven)},
		{"all-2g.10gb", all("2g.10gb,2g.10gb,2g.10gb")},
		{"all-3g.20gb", all("3g.20gb,3g.20gb")},
		{"all-balanced", all(balanced)},
		{"custom-config", []MigPartedDevices{
			{[]int{0, 1, 2, 3}, layout("full")},
			{[]int{4}, layout(seven)},
			{[]int{5}, layout("2g.10gb,2g.10gb,2g.10gb")},
			{[]int{6}, layout("3g.20gb,3g.20gb")},
			{[]int{7}, layout(balanced)},
		}},
	}
	var b bytes.Buffer
	if err := WriteMigParted(&b, configs); err != nil {
		t.Fatal(err)
	}
	got, err := readYAMLBlock(b.String())
	if err != nil {
		t.Fatalf("%v\n%s", err, b.String())
	}
	want, err := readYAMLBlock(nvidiaMigPartedExample)
	if err != nil {
		t.Fatal(err)
	}
	delete(want.(map[string]any)["mig-configs"].(map[string]any), "all-enabled")
	if !reflect.DeepEqual(got, want) {
		t.Errorf("written:\n%s\nreads as %v\nNVIDIA's example as %v", b.String(), got, want)
	}
}

// TestWriteMigPartedLayouts: every layout of a model, one config each, is
// read back with its profiles' counts.
func TestWriteMigPartedLayouts(t *testing.T) {
	m := model(t, "H100-80GB")
	var configs []MigPartedConfig
	for i, l := range m.Layouts() {
		configs = append(configs, MigPartedConfig{fmt.Sprintf("h100-%d", i), []MigPartedDevices{{Layout: l}}})
	}
	var b bytes.Buffer
	if err := WriteMigParted(&b, configs); err != nil {
		t.Fatal(err)
	}
	doc, err := readYAMLBlock(b.String())
	if err != nil {
		t.Fatal(err)
	}
	read := doc.(map[string]any)["mig-configs"].(map[string]any)
	if len(read) != len(configs) {
		t.Fatalf("%d configs read, %d written", len(read), len(configs))
	}
	for _, c := range configs {
		entry := read[c.Name].([]any)[0].(map[string]any)
		counts := map[string]any{}
		for name, n := range c.Devices[0].Layout.Counts() {
			counts[name] = strconv.Itoa(n)
		}
		if entry["devices"] != "all" || entry["mig-enabled"] != "true" || !reflect.DeepEqual(entry["mig-devices"], counts) {
			t.Errorf("%s (%s) read as %v", c.Name, c.Devices[0].Layout, entry)
		}
	}
}

func TestWriteMigPartedRefuses(t *testing.T) {
	l := Layout{{"1g.10gb", 0}}
	for _, tc := range []struct {
		configs []MigPartedConfig
		want    string
	}{
		{[]MigPartedConfig{{"a b", []MigPartedDevices{{Layout: l}}}}, `mig-parted config "a b": a name is letters`},
		{[]MigPartedConfig{{"-x", []MigPartedDevices{{Layout: l}}}}, `"-x": a name is letters`},
		{[]MigPartedConfig{{"x", []MigPartedDevices{{Layout: l}}}, {"x", []MigPartedDevices{{Layout: l}}}}, `"x": named twice`},
		{[]MigPartedConfig{{"x", nil}}, `"x": no devices`},
		{[]MigPartedConfig{{"x", []MigPartedDevices{{Layout: l}, {Devices: []int{1}}}}}, "an entry for all devices must be its only one"},
		{[]MigPartedConfig{{"x", []MigPartedDevices{{[]int{0, 1}, l}, {[]int{1}, nil}}}}, "device 1 is negative or named twice"},
		{[]MigPartedConfig{{"x", []MigPartedDevices{{[]int{-1}, l}}}}, "device -1 is negative"},
		{[]MigPartedConfig{{"x", []MigPartedDevices{{Layout: Layout{{"", 0}}}}}}, "an instance without a profile"},
	} {
		var b bytes.Buffer
		err := WriteMigParted(&b, tc.configs)
		if err == nil || !strings.Contains(err.Error(), tc.want) || b.Len() != 0 {
			t.Errorf("%v: error %v, want %q and nothing written (%d bytes)", tc.configs, err, tc.want, b.Len())
		}
	}
}

// readYAMLBlock reads the YAML that mig-parted configs are written in:
// block maps and lists by indentation, "- " items whose first key sits on
// the dash's line, and scalars: plain, double-quoted, [a,b] and {}. Every
// scalar is its text. It refuses what it does not know, a key twice and
// an indentation that does not nest.
func readYAMLBlock(text string) (any, error) {
	type line struct {
		indent int
		text   string
	}
	var lines []line
	for _, l := range strings.Split(text, "\n") {
		content := strings.TrimLeft(l, " ")
		if strings.TrimSpace(content) == "" {
			continue
		}
		if strings.ContainsRune(l, '\t') || strings.HasPrefix(content, "#") {
			return nil, fmt.Errorf("line %q: tabs and comments are not read here", l)
		}
		lines = append(lines, line{len(l) - len(content), strings.TrimRight(content, " ")})
	}
	var block func(ls []line) (any, error)
	scalar := func(s string) (any, error) {
		switch {
		case s == "{}":
			return map[string]any{}, nil
		case strings.HasPrefix(s, "["):
			inner, ok := strings.CutSuffix(strings.TrimPrefix(s, "["), "]")
			if !ok {
				return nil, fmt.Errorf("unclosed list %q", s)
			}
			var items []any
			for _, f := range strings.Split(inner, ",") {
				items = append(items, strings.TrimSpace(f))
			}
			return items, nil
		case strings.HasPrefix(s, `"`):
			return strconv.Unquote(s)
		case strings.ContainsAny(s, `{}[]"'&*!|>%@`+"`"):
			return nil, fmt.Errorf("scalar %q is not read here", s)
		}
		return s, nil
	}
	// children are the lines after ls[0] indented deeper than it.
	children := func(ls []line) []line {
		n := 1
		for n < len(ls) && ls[n].indent > ls[0].indent {
			n++
		}
		return ls[1:n]
	}
	block = func(ls []line) (any, error) {
		indent := ls[0].indent
		if strings.HasPrefix(ls[0].text, "- ") {
			var list []any
			for len(ls) > 0 {
				if ls[0].indent != indent || !strings.HasPrefix(ls[0].text, "- ") {
					return nil, fmt.Errorf("line %q: not an item of the list at indentation %d", ls[0].text, indent)
				}
				kids := children(ls)
				// The item is a map whose first key sits after the dash.
				item := append([]line{{indent + 2, strings.TrimPrefix(ls[0].text, "- ")}}, kids...)
				v, err := block(item)
				if err != nil {
					return nil, err
				}
				list = append(list, v)
				ls = ls[1+len(kids):]
			}
			return list, nil
		}
		m := map[string]any{}
		for len(ls) > 0 {
			if ls[0].indent != indent {
				return nil, fmt.Errorf("line %q: indentation %d in a map at %d", ls[0].text, ls[0].indent, indent)
			}
			key, rest, ok := strings.Cut(ls[0].text, ":")
			if !ok || (rest != "" && !strings.HasPrefix(rest, " ")) {
				return nil, fmt.Errorf("line %q: no key", ls[0].text)
			}
			k, err := scalar(key)
			if err != nil {
				return nil, err
			}
			ks, _ := k.(string)
			if _, dup := m[ks]; dup || ks == "" {
				return nil, fmt.Errorf("key %q empty or twice", key)
			}
			kids := children(ls)
			switch rest = strings.TrimSpace(rest); {
			case rest != "" && len(kids) > 0:
				return nil, fmt.Errorf("key %q has a value and a block", key)
			case rest != "":
				m[ks], err = scalar(rest)
			case len(kids) == 0:
				return nil, fmt.Errorf("key %q has no value", key)
			default:
				m[ks], err = block(kids)
			}
			if err != nil {
				return nil, err
			}
			ls = ls[1+len(kids):]
		}
		return m, nil
	}
	if len(lines) == 0 || lines[0].indent != 0 {
		return nil, fmt.Errorf("no document at indentation 0")
	}
	return block(lines)
}

// The reader itself: a list of maps, nested maps, and what it refuses.
func TestReadYAMLBlock(t *testing.T) {
	doc, err := readYAMLBlock("a: 1\nb:\n  - c: [1, 2]\n    d: \"x\"\n  - e: {}\n")
	want := map[string]any{"a": "1", "b": []any{
		map[string]any{"c": []any{"1", "2"}, "d": "x"},
		map[string]any{"e": map[string]any{}},
	}}
	if err != nil || !reflect.DeepEqual(doc, want) {
		t.Errorf("%v, %v", doc, err)
	}
	for _, bad := range []string{"a: 1\na: 2\n", "a:\n", "a: 1\n  b: 2\n", "a:\n  - b: 1\n  c: 2\n", "a: &x\n", " a: 1\n", "a: [1\n"} {
		if doc, err := readYAMLBlock(bad); err == nil {
			t.Errorf("%q read as %v", bad, doc)
		}
	}
}
