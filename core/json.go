package core

import (
	"github.com/go-json-experiment/json"
	"github.com/go-json-experiment/json/jsontext"
)

// marshal encodes v with the kit's JSON settings: map members sorted, so the same value always
// encodes to the same bytes.
func marshal(v any) ([]byte, error) { return json.Marshal(v, json.Deterministic(true)) }

// unmarshal decodes strictly: member names match exactly and duplicates are rejected.
func unmarshal(data []byte, v any) error { return json.Unmarshal(data, v) }

// marshalWith encodes v (a struct that encodes as a non-empty object) and adds one member that v
// left out, placed first.
func marshalWith(v any, key, raw string) ([]byte, error) {
	b, err := marshal(v)
	if err != nil || len(b) < 2 {
		return b, err
	}
	out := make([]byte, 0, len(b)+len(key)+len(raw)+4)
	out = append(out, '{', '"')
	out = append(out, key...)
	out = append(out, '"', ':')
	out = append(out, raw...)
	if len(b) > 2 {
		out = append(out, ',')
	}
	return append(out, b[1:]...), nil
}

// rawObject reports whether v is a JSON object value.
func rawObject(v []byte) bool { return len(v) > 0 && jsontext.Value(v).Kind() == '{' }
