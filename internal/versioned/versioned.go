// Package versioned reads the JSON files migadvisor writes with a "version"
// field (a sweep's sweep.json, the monitor's summary): the version is
// checked before anything else is trusted, so a file from a newer or older
// migadvisor is refused in one sentence instead of misread.
package versioned

import (
	"encoding/json"
	"fmt"
)

// DecodeJSON reads data (the file at path) into v when its "version" is
// want; what names the format in errors ("sweep", "monitor summary").
func DecodeJSON(path string, data []byte, what string, want int, v any) error {
	var head struct {
		Version *int `json:"version"`
	}
	if err := json.Unmarshal(data, &head); err != nil {
		return fmt.Errorf("%s: not a %s file: %w", path, what, err)
	}
	switch {
	case head.Version == nil:
		return fmt.Errorf("%s: not a %s file: it has no version", path, what)
	case *head.Version != want:
		return fmt.Errorf("%s: %s format version %d is not supported (this migadvisor reads version %d)", path, what, *head.Version, want)
	}
	if err := json.Unmarshal(data, v); err != nil {
		return fmt.Errorf("%s: not a %s file: %w", path, what, err)
	}
	return nil
}
