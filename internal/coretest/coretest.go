// Package coretest drives a core.Server in process for the tests of the packages built on core
// (the extensions under ext/): 2026-07-28 requests on ephemeral sessions, as a given principal,
// and checks of the answers against the official schemas.
package coretest

import (
	"bytes"
	"context"
	"encoding/json"
	"sync/atomic"
	"testing"

	jsonv2 "github.com/go-json-experiment/json"
	"github.com/go-json-experiment/json/jsontext"

	"github.com/mcpkit/mcpkit/core"
	"github.com/mcpkit/mcpkit/internal/testutil"
	"github.com/mcpkit/mcpkit/internal/transport"
)

// Wire is a message the server answered, decoded, with its bytes.
type Wire struct {
	testutil.Wire
	Raw []byte
}

func (w *Wire) String() string { return string(w.Raw) }

var ids atomic.Int64

// Request returns the text of a 2026-07-28 request of method with params (nil for none), whose
// envelope declares caps as the client's capabilities (nil for none).
func Request(id any, method string, params map[string]any, caps map[string]any) string {
	p := map[string]any{}
	for k, v := range params {
		p[k] = v
	}
	if caps == nil {
		caps = map[string]any{}
	}
	p["_meta"] = testutil.Envelope(testutil.ModernVersion, caps)
	return testutil.Request(id, method, p)
}

// Send sends a 2026-07-28 request to srv on an ephemeral session, as principal (empty for
// none), and returns the answer.
func Send(t testing.TB, srv *core.Server, principal string, caps map[string]any, method string, params map[string]any) *Wire {
	t.Helper()
	b := Request(ids.Add(1), method, params, caps)
	msg, derr := transport.Core.DecodeMessage([]byte(b))
	if derr != nil {
		t.Fatalf("decoding %s: %v", b, derr)
	}
	ss := transport.NewSession(srv, transport.SessionOptions{Ephemeral: true})
	defer ss.Close()
	ctx := core.WithPrincipal(context.Background(), principal)
	resp := transport.Core.Handle(ss, ctx, msg, nil)
	if resp == nil {
		t.Fatalf("no answer to %s", b)
	}
	raw := transport.Core.EncodeResponseMessage(resp)
	return &Wire{Wire: testutil.DecodeWire(t, raw), Raw: bytes.Clone(raw)}
}

// OK is Send for a request that must succeed; it returns the decoded result.
func OK(t testing.TB, srv *core.Server, principal string, caps map[string]any, method string, params map[string]any) map[string]any {
	t.Helper()
	w := Send(t, srv, principal, caps, method, params)
	if w.Error != nil {
		t.Fatalf("%s failed: %s", method, w)
	}
	var out map[string]any
	if err := json.Unmarshal(w.Result, &out); err != nil {
		t.Fatal(err)
	}
	return out
}

// WantError checks an error answer: its code, message and data (nil means no data; a string is
// compared as a JSON string; anything else as JSON), and the response against the 2026-07-28
// schema.
func WantError(t testing.TB, w *Wire, code int64, message string, data any) {
	t.Helper()
	if w.Error == nil {
		t.Fatalf("want error %d %q, got %s", code, message, w)
	}
	if w.Result != nil {
		t.Errorf("error response also carries a result: %s", w)
	}
	if w.Error.Code != code || w.Error.Message != message {
		t.Errorf("error = %d %q, want %d %q (%s)", w.Error.Code, w.Error.Message, code, message, w)
	}
	switch {
	case data == nil && w.Error.Data != nil:
		t.Errorf("error data = %s, want none (%s)", w.Error.Data, w)
	case data != nil:
		want, err := jsonv2.Marshal(data)
		if err != nil {
			t.Fatal(err)
		}
		if got, want := canon(t, w.Error.Data), canon(t, want); got != want {
			t.Errorf("error data = %s, want %s (%s)", got, want, w)
		}
	}
	testutil.ValidateDef(t, testutil.ModernVersion, "JSONRPCErrorResponse", w.Raw)
}

func canon(t testing.TB, v []byte) string {
	t.Helper()
	if v == nil {
		return "<absent>"
	}
	c := jsontext.Value(bytes.Clone(v))
	if err := c.Canonicalize(); err != nil {
		t.Fatalf("canonicalizing %s: %v", v, err)
	}
	return string(c)
}
