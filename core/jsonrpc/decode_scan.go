package jsonrpc

// The usual message is read in one pass of a strict scanner (jsonbody.Scanner) that picks the
// members out as read does with jsontext, at a fraction of the cost. Whatever the scanner does
// not settle (invalid JSON, an escaped or repeated name, an object of more than
// jsonbody.MaxScanNames members, nesting past jsonbody.MaxNesting) is read again by read, which
// words the error: the scanner decides no outcome of its own.

import (
	"github.com/go-json-experiment/json/jsontext"
)

// scan reads data as read does; ok is false when the scanner did not settle it, and then md
// holds nothing of it.
func (md *msgDecoder) scan(data []byte, owned bool) (m *Message, derr *DecodeError, ok bool) {
	s := &md.sc
	s.Reset(data)
	md.owned, md.scanned = owned, true
	m, derr, ok = md.scanMessage(data)
	md.scanned = false
	s.Release()
	md.forget()
	return m, derr, ok
}

func (md *msgDecoder) scanMessage(data []byte) (*Message, *DecodeError, bool) {
	s := &md.sc
	mark, ok := s.Open()
	if !ok {
		return nil, nil, false
	}
	m := &md.msg
	var env envelope
	var errRaw jsontext.Value
	for {
		raw, done, ok := s.NextName(mark)
		if !ok {
			return nil, nil, false
		}
		if done {
			break
		}
		name := raw[1 : len(raw)-1]
		if string(name) == "params" && s.Peek() == '{' {
			env.params, env.paramsKind = true, '{'
			if !md.scanParams(m, data) {
				return nil, nil, false
			}
			continue
		}
		from, to, ok := s.Value()
		if !ok {
			return nil, nil, false
		}
		md.member(m, &env, &errRaw, name, data[from:to])
	}
	if !s.End() {
		return nil, nil, false
	}
	m.Parsed = true
	msg, derr := env.check(md.take(), errRaw)
	return msg, derr, true
}

// scanParams is readParams for the scanner, which is at the params object.
func (md *msgDecoder) scanParams(m *Message, data []byte) bool {
	s := &md.sc
	start := s.Pos()
	mark, ok := s.Open()
	if !ok {
		return false
	}
	var args span
	for {
		raw, done, ok := s.NextName(mark)
		if !ok {
			return false
		}
		if done {
			break
		}
		name, retry := paramName(raw) // raw has no escape: the scanner leaves those to read
		m.retry = m.retry || retry
		switch {
		case name == "_meta" && s.Peek() == '{':
			if !md.scanMeta() {
				return false
			}
			continue
		case (name == "name" || name == "uri" || name == "taskId") && s.Peek() == '"':
			from, to, ok := s.Value()
			if !ok || !setTarget(m, name, data[from:to]) {
				return false
			}
			continue
		}
		from, to, ok := s.Value()
		if !ok {
			return false
		}
		if name == "arguments" {
			args = span{from, to - from}
		}
	}
	md.keepParams(m, data, start, s.Pos(), args)
	return true
}

// scanMeta is readMeta for the scanner, which is at the _meta object.
func (md *msgDecoder) scanMeta() bool {
	s := &md.sc
	mark, ok := s.Open()
	if !ok {
		return false
	}
	for {
		raw, done, ok := s.NextName(mark)
		if !ok {
			return false
		}
		if done {
			return true
		}
		key, ok := metaKey(raw)
		if !ok {
			return false
		}
		from, to, ok := s.Value()
		if !ok {
			return false
		}
		md.meta = append(md.meta, metaSpan{key, span{from, to - from}})
	}
}
