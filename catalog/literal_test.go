package catalog

import (
	"fmt"
	"reflect"
	"slices"
	"strconv"
	"strings"
)

// goLiteral writes v as Go source for package catalog: the generated files'
// values. Pointers become ptr(...) calls, zero fields are left out, and an
// unexported field that is set is a mistake (it cannot be written).
func goLiteral(v reflect.Value) string {
	t := v.Type()
	name := strings.ReplaceAll(t.String(), "catalog.", "")
	switch v.Kind() {
	case reflect.Pointer:
		if v.IsNil() {
			return "nil"
		}
		return "ptr(" + typed(v.Elem()) + ")"
	case reflect.Struct:
		var fields []string
		for i := range t.NumField() {
			f := v.Field(i)
			if f.IsZero() {
				continue
			}
			if !t.Field(i).IsExported() {
				panic(fmt.Sprintf("%s.%s is set but unexported", name, t.Field(i).Name))
			}
			fields = append(fields, t.Field(i).Name+": "+goLiteral(f))
		}
		return name + "{" + strings.Join(fields, ", ") + "}"
	case reflect.Slice:
		if v.IsNil() {
			return "nil"
		}
		var elems []string
		for i := range v.Len() {
			elems = append(elems, goLiteral(v.Index(i)))
		}
		return name + "{" + strings.Join(elems, ", ") + "}"
	case reflect.Map:
		keys := v.MapKeys()
		slices.SortFunc(keys, func(a, b reflect.Value) int { return strings.Compare(fmt.Sprint(a), fmt.Sprint(b)) })
		var elems []string
		for _, k := range keys {
			elems = append(elems, goLiteral(k)+": "+goLiteral(v.MapIndex(k)))
		}
		return name + "{" + strings.Join(elems, ", ") + "}"
	}
	return typed(v)
}

// typed is a basic value as an expression of its own type: Size(81920),
// float64(16), "x", true.
func typed(v reflect.Value) string {
	var lit string
	switch v.Kind() {
	case reflect.String:
		lit = strconv.Quote(v.String())
	case reflect.Bool:
		lit = strconv.FormatBool(v.Bool())
	case reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64:
		lit = strconv.FormatInt(v.Int(), 10)
	case reflect.Float32, reflect.Float64:
		lit = strconv.FormatFloat(v.Float(), 'g', -1, 64)
	default:
		return goLiteral(v)
	}
	name := strings.ReplaceAll(v.Type().String(), "catalog.", "")
	if name == "string" || name == "bool" || name == "int" {
		return lit
	}
	return name + "(" + lit + ")"
}
