package jsonrpc

// The members of params._meta: a decoded message holds them in the order sent, their values
// pointing into its params, and a few of them in the allocation of the message itself.

import (
	"encoding/json"
	"iter"

	"github.com/go-json-experiment/json/jsontext"
)

// metaMember is one member of params._meta.
type metaMember struct {
	key   string
	value json.RawMessage
}

// Meta returns the value of a member of params._meta as sent (a JSON value pointing into
// Params), or nil when there is none, on a message DecodeMessage read (Parsed); a message made
// otherwise has none. (The decoder refuses a key sent twice.)
func (m *Message) Meta(key string) json.RawMessage {
	for i := range m.meta {
		if m.meta[i].key == key {
			return m.meta[i].value
		}
	}
	return nil
}

// MetaMembers returns the members of params._meta, in the order sent, on a message
// DecodeMessage read (Parsed); a message made otherwise has none. Up to four members are
// allocated together with the message.
func (m *Message) MetaMembers() iter.Seq2[string, json.RawMessage] {
	return func(yield func(string, json.RawMessage) bool) {
		for _, mm := range m.meta {
			if !yield(mm.key, mm.value) {
				return
			}
		}
	}
}

// metaSpan is one member of params._meta: its key and where its value sits.
type metaSpan struct {
	key string
	at  span
}

// messageMeta is a message allocated together with the members of its params._meta, when it
// has a few: the envelope of a 2026-07-28 request has three or four.
type messageMeta struct {
	msg  Message
	meta [4]metaMember
}

// take moves the message read (md.msg) to the heap, with the values of its _meta members
// (md.meta, a message whose params start at paramsAt) in the same allocation when there are
// few of them.
func (md *msgDecoder) take() *Message {
	var m *Message
	var meta []metaMember
	switch n := len(md.meta); {
	case n == 0:
		m = new(Message)
	case n <= len(messageMeta{}.meta):
		mm := new(messageMeta)
		m, meta = &mm.msg, mm.meta[:0:n]
	default:
		m, meta = new(Message), make([]metaMember, 0, n)
	}
	*m = md.msg
	for _, ms := range md.meta {
		off := ms.at.off - md.paramsAt
		meta = append(meta, metaMember{ms.key, m.Params[off : off+ms.at.n : off+ms.at.n]})
	}
	m.meta = meta
	return m
}

// readMeta reads the members of params._meta when it is an object into md.meta; done is false
// when the value was left unread (it is not an object).
func (md *msgDecoder) readMeta(d *jsontext.Decoder) (done bool, err error) {
	if d.PeekKind() != '{' {
		return false, nil
	}
	if _, err := d.ReadToken(); err != nil {
		return false, err
	}
	for d.PeekKind() == '"' {
		k, err := d.ReadValue()
		if err != nil {
			return false, err
		}
		key, ok := metaKey(k)
		if !ok {
			return false, errParse
		}
		v, err := d.ReadValue()
		if err != nil {
			return false, err
		}
		md.meta = append(md.meta, metaSpan{key, valueSpan(d, v)})
	}
	_, err = d.ReadToken()
	return true, err
}

// knownMetaKeys are the _meta keys requests usually carry (core names them when it is
// initialized): they are not allocated again per request.
var knownMetaKeys []string

// metaKey returns the text of a quoted _meta key, shared for the well-known ones.
func metaKey(raw jsontext.Value) (string, bool) {
	inner := raw[1 : len(raw)-1]
	for _, k := range knownMetaKeys {
		if string(inner) == k {
			return k, true
		}
	}
	return unquoteString(raw)
}
