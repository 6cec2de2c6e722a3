package otelconv

import (
	"reflect"

	"go.opentelemetry.io/otel"
	"go.opentelemetry.io/otel/metric"
	metricnoop "go.opentelemetry.io/otel/metric/noop"
	"go.opentelemetry.io/otel/trace"
	tracenoop "go.opentelemetry.io/otel/trace/noop"
)

// The global providers as the otel package hands them out before a program sets its own: they
// forward to the one set later, and until then record nothing. Nil when a provider was already
// set before this package was initialized.
var (
	defaultTracerProvider = globalDefault(otel.GetTracerProvider())
	defaultMeterProvider  = globalDefault(otel.GetMeterProvider())
)

// globalDefault returns p when it is otel's delegating global provider, else nil.
func globalDefault[P any](p P) any {
	t := reflect.TypeOf(p)
	if t == nil || t.Kind() != reflect.Pointer || t.Elem().PkgPath() != "go.opentelemetry.io/otel/internal/global" {
		return nil
	}
	return p
}

// IsGlobalTracerProvider reports whether tp is otel's delegating global tracer provider (the
// one otel.GetTracerProvider returns before a program sets its own).
func IsGlobalTracerProvider(tp trace.TracerProvider) bool {
	return defaultTracerProvider != nil && any(tp) == defaultTracerProvider
}

// IsGlobalMeterProvider is IsGlobalTracerProvider for meter providers.
func IsGlobalMeterProvider(mp metric.MeterProvider) bool {
	return defaultMeterProvider != nil && any(mp) == defaultMeterProvider
}

// TracingOff reports whether spans started through tp are recorded by nobody at this moment: tp
// is a no-op provider (trace/noop), or it is the global provider and the program has not set one
// yet, or set a no-op one. It allocates nothing.
func TracingOff(tp trace.TracerProvider) bool {
	if _, off := tp.(tracenoop.TracerProvider); off {
		return true
	}
	if tp == nil || !IsGlobalTracerProvider(tp) {
		return false
	}
	return GlobalTracerUnset()
}

// GlobalTracerUnset reports whether the global tracer provider is still otel's default (or a
// no-op provider was set).
func GlobalTracerUnset() bool {
	cur := otel.GetTracerProvider()
	if _, off := cur.(tracenoop.TracerProvider); off {
		return true
	}
	return any(cur) == defaultTracerProvider
}

// GlobalMeterUnset is GlobalTracerUnset for the meter provider.
func GlobalMeterUnset() bool {
	cur := otel.GetMeterProvider()
	if _, off := cur.(metricnoop.MeterProvider); off {
		return true
	}
	return any(cur) == defaultMeterProvider
}
