package core

import (
	"errors"
	"reflect"
	"strconv"
	"strings"

	jsonv2 "github.com/go-json-experiment/json"
)

// decodeProblem describes why arguments did not decode, naming the argument (and the path inside
// it when it is nested) and what it must be, without Go type names: `argument "a" must be an
// integer from -128 to 127`.
func decodeProblem(err error) string {
	var se *jsonv2.SemanticError
	if !errors.As(err, &se) || se.JSONPointer == "" {
		return "the arguments do not match the input schema"
	}
	ptr := string(se.JSONPointer)
	first, _, nested := strings.Cut(strings.TrimPrefix(ptr, "/"), "/")
	first = strings.NewReplacer("~1", "/", "~0", "~").Replace(first)
	subject := "argument " + strconv.Quote(first)
	if nested {
		subject += " at " + ptr
	}
	want := expected(se.GoType)
	if want == "" {
		return "unexpected value for " + subject
	}
	return subject + " must be " + want
}

// expected says in words what a JSON value decoded into t must be, "" when it cannot.
func expected(t reflect.Type) string {
	if t == nil {
		return ""
	}
	for t.Kind() == reflect.Pointer {
		t = t.Elem()
	}
	switch t.Kind() {
	case reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64:
		limit := uint64(1) << (t.Bits() - 1)
		return "an integer from -" + strconv.FormatUint(limit, 10) + " to " + strconv.FormatUint(limit-1, 10)
	case reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64, reflect.Uintptr:
		return "an integer from 0 to " + strconv.FormatUint(^uint64(0)>>(64-t.Bits()), 10)
	case reflect.Float32, reflect.Float64:
		return "a number"
	case reflect.String:
		return "a string"
	case reflect.Bool:
		return "true or false"
	case reflect.Slice, reflect.Array:
		return "an array"
	case reflect.Map, reflect.Struct:
		return "an object"
	}
	return ""
}
