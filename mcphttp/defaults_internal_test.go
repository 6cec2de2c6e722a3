package mcphttp

import (
	"fmt"
	"net/http"
	"reflect"
	"testing"
	"time"

	"github.com/mcpkit/mcpkit/core"
	"github.com/mcpkit/mcpkit/internal/testutil"
	"github.com/mcpkit/mcpkit/session"
)

// Each documented default of the package's options, observed on what the constructors build
// (and the body limits through the handlers themselves).
func TestOptionsDefaults(t *testing.T) {
	s := core.NewServer(core.Implementation{Name: "d", Version: "1"}, core.Options{})
	var zero Options
	h := New(s, zero)
	defer h.Close()
	ep, l := h.Endpoint(), h.Listeners()
	legacySSE, modernSSE := zero.sse()

	var eo EndpointOptions
	store := session.NewMemory(session.MemoryOptions{})
	defer store.Close()
	eo.Store = store
	bare := NewEndpoint(s, eo)
	var mo ModernOptions
	modern := NewModern(s, mo)
	var lo ListenersOptions
	listeners := NewListeners(s, lo)
	defer listeners.Close()
	var ro ResumabilityOptions
	ro.Enabled = true
	res := newResumer(ro)
	mem, _ := res.store.(*session.MemoryEventStore)
	var so HTTPServerOptions
	srv := NewHTTPServer("127.0.0.1:0", http.NotFoundHandler(), so)

	testutil.CheckDefaults(t, []testutil.Default{
		{Option: "Options.MaxRequestBytes", Given: zero.MaxRequestBytes, Got: testutil.BodyCap(t, h, 4<<20), Doc: 4 << 20},
		{Option: "Options.BodyReadTimeout", Given: zero.BodyReadTimeout, Got: testutil.BodyReadBound(t, h), Doc: 30 * time.Second},
		{Option: "Options.Store", Given: zero.Store, Got: fmt.Sprintf("%T", h.Store()), Doc: "*session.Memory"},
		{Option: "Options.MaxSessionsPerCaller", Given: zero.MaxSessionsPerCaller, Got: ep.callers.max, Doc: 1000},
		// Zero reaches the SSE layers, whose zero is their documented 30 s (tested in middleware);
		// the 2026-07-28 streams have no keepalive comments.
		{Option: "Options.KeepAlive", Given: zero.KeepAlive, Got: []time.Duration{legacySSE.KeepAlive, modernSSE.KeepAlive}, Doc: []time.Duration{0, -1}},
		{Option: "Options.WriteTimeout", Given: zero.WriteTimeout, Got: []time.Duration{legacySSE.WriteTimeout, modernSSE.WriteTimeout}, Doc: []time.Duration{0, 0}},
		{Option: "Options.Resumability", Given: zero.Resumability, Got: ep.res == nil, Doc: true},
		{Option: "Options.DisableListen", Given: zero.DisableListen, Got: l != nil, Doc: true},
		{Option: "Options.Listen.MaxStreams", Given: zero.Listen.MaxStreams, Got: l.reg.Max(), Doc: 1000},
		{Option: "Options.Listen.KeepAlive", Given: zero.Listen.KeepAlive, Got: l.keepAlive, Doc: 15 * time.Second},
		{Option: "Options.Listen.MaxStreamsPerCaller", Given: zero.Listen.MaxStreamsPerCaller, Got: l.callers.max, Doc: 100},

		{Option: "EndpointOptions.MaxSessionsPerCaller", Given: eo.MaxSessionsPerCaller, Got: bare.callers.max, Doc: 1000},

		{Option: "ModernOptions.MaxNotifications", Given: mo.MaxNotifications, Got: modern.opts.MaxNotifications, Doc: 1000},

		{Option: "ListenersOptions.MaxStreams", Given: lo.MaxStreams, Got: listeners.reg.Max(), Doc: 1000},
		{Option: "ListenersOptions.KeepAlive", Given: lo.KeepAlive, Got: listeners.keepAlive, Doc: 15 * time.Second},
		{Option: "ListenersOptions.WriteTimeout", Given: lo.WriteTimeout, Got: listeners.writeTimeout, Doc: 30 * time.Second},
		{Option: "ListenersOptions.MaxStreamsPerCaller", Given: lo.MaxStreamsPerCaller, Got: listeners.callers.max, Doc: 100},

		{Option: "ResumabilityOptions.RetryInterval", Given: ro.RetryInterval, Got: res.retry, Doc: time.Second},
		{Option: "ResumabilityOptions.Store", Given: ro.Store, Got: mem != nil, Doc: true},
		// Zero bounds reach the store, whose zero is its documented default (tested in session).
		{Option: "ResumabilityOptions.MaxEvents", Given: ro.MaxEvents, Got: reflect.DeepEqual(mem, session.NewMemoryEventStore(session.MemoryEventStoreOptions{})), Doc: true},
		{Option: "ResumabilityOptions.MaxBytes", Given: ro.MaxBytes, Got: reflect.DeepEqual(mem, session.NewMemoryEventStore(session.MemoryEventStoreOptions{})), Doc: true},
		{Option: "ResumabilityOptions.MaxStreams", Given: ro.MaxStreams, Got: res.maxStreams, Doc: 64},
		{Option: "ResumabilityOptions.MaxCallsPerCaller", Given: ro.MaxCallsPerCaller, Got: res.callers.max, Doc: 256},

		{Option: "HTTPServerOptions.ReadHeaderTimeout", Given: so.ReadHeaderTimeout, Got: srv.ReadHeaderTimeout, Doc: 10 * time.Second},
		{Option: "HTTPServerOptions.IdleTimeout", Given: so.IdleTimeout, Got: srv.IdleTimeout, Doc: 2 * time.Minute},
		{Option: "HTTPServerOptions.MaxHeaderBytes", Given: so.MaxHeaderBytes, Got: srv.MaxHeaderBytes, Doc: 64 << 10},
	})
}

// Negative values of options where negative means nothing are refused at construction.
func TestResumabilityRefusesNegatives(t *testing.T) {
	for want, build := range map[string]func(){
		"ResumabilityOptions.RetryInterval": func() { newResumer(ResumabilityOptions{Enabled: true, RetryInterval: -time.Second}) },
		"ResumabilityOptions.MaxStreams":    func() { newResumer(ResumabilityOptions{Enabled: true, MaxStreams: -1}) },
		"ResumabilityOptions.MaxEvents":     func() { newResumer(ResumabilityOptions{Enabled: true, MaxEvents: -1}) },
		"ResumabilityOptions.MaxBytes":      func() { newResumer(ResumabilityOptions{Enabled: true, MaxBytes: -1}) },
	} {
		t.Run(want, func(t *testing.T) { testutil.WantPanic(t, want, build) })
	}
}
