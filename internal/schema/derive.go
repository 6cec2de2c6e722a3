package schema

import (
	"encoding/json"
	"reflect"

	jsonv2 "github.com/go-json-experiment/json"
	"github.com/google/jsonschema-go/jsonschema"
)

// For derives a JSON Schema (2020-12) for T. A pointer type gets the schema of the type it
// points to: the kit never sends or accepts null for it.
func For[T any]() (json.RawMessage, error) { return ForType(reflect.TypeFor[T]()) }

// ForType is For for a type known at run time.
func ForType(t reflect.Type) (json.RawMessage, error) {
	for t.Kind() == reflect.Pointer {
		t = t.Elem()
	}
	sch, err := jsonschema.ForType(t, nil)
	if err != nil {
		return nil, err
	}
	if sch.Type == "" && len(sch.Types) == 0 {
		sch.Type = "object"
	}
	if sch.Type == "object" && sch.Properties == nil {
		sch.Properties = map[string]*jsonschema.Schema{}
	}
	b, err := jsonv2.Marshal(sch, jsonv2.Deterministic(true))
	if err != nil {
		return nil, err
	}
	return json.RawMessage(b), nil
}
