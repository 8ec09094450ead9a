// Package jsonlist keeps the lists of a command's --json output lists:
// encoding/json writes a nil slice as null, which a reader iterating the
// field must then check for.
package jsonlist

// NonNil is s, or an empty list where s is nil: [] in JSON, never null.
func NonNil[T any](s []T) []T {
	if s == nil {
		return []T{}
	}
	return s
}
