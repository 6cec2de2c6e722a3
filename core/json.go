package core

import (
	"bytes"
	"sync"

	"github.com/go-json-experiment/json"
	"github.com/go-json-experiment/json/jsontext"
)

// deterministic sorts map members, so the same value always encodes to the same bytes.
var deterministic = json.Deterministic(true)

// marshal encodes v with the kit's JSON settings: map members sorted, so the same value always
// encodes to the same bytes.
func marshal(v any) ([]byte, error) { return json.Marshal(v, deterministic) }

// jsonBuffer lets appendJSON encode straight into a caller's slice.
type jsonBuffer struct{ b bytes.Buffer }

var jsonBuffers = sync.Pool{New: func() any { return new(jsonBuffer) }}

// appendJSON appends the encoding of v (as marshal makes it) to dst. Pass a pointer where the
// value is a struct or a slice: it spares the encoder a copy.
func appendJSON(dst []byte, v any) ([]byte, error) {
	jb := jsonBuffers.Get().(*jsonBuffer)
	jb.b = *bytes.NewBuffer(dst)
	err := json.MarshalWrite(&jb.b, v, deterministic)
	out := jb.b.Bytes()
	jb.b = bytes.Buffer{} // the pool keeps no caller's bytes
	jsonBuffers.Put(jb)
	if err != nil {
		return dst, err
	}
	return out, nil
}

// scratch buffers hold an encoding until it is copied into the message that carries it.
var scratchBuffers = sync.Pool{New: func() any { b := make([]byte, 0, 512); return &b }}

func getScratch() *[]byte { return scratchBuffers.Get().(*[]byte) }

func putScratch(b *[]byte) {
	if cap(*b) > 64<<10 {
		return // a rare large result: not kept
	}
	*b = (*b)[:0]
	scratchBuffers.Put(b)
}

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
