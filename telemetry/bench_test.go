package telemetry_test

import (
	"context"
	"testing"

	"go.opentelemetry.io/otel"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	"go.opentelemetry.io/otel/sdk/trace/tracetest"
	"go.opentelemetry.io/otel/trace/noop"

	capbroker "github.com/capbroker/capbroker"
	"github.com/capbroker/capbroker/examples"
	"github.com/capbroker/capbroker/telemetry"
)

const task = "review the diff of the last git commit and fix the bug"

// BenchmarkSelect measures what tracing costs a selection on the example
// catalog: Broker.Select (span started, ended with the selection's
// attributes) against the selector it wraps (no span), with tracing off,
// and on with an in-memory exporter.
func BenchmarkSelect(b *testing.B) {
	cards, err := examples.Cards()
	if err != nil {
		b.Fatal(err)
	}
	br, err := capbroker.New(context.Background(), &capbroker.Options{Cards: cards})
	if err != nil {
		b.Fatal(err)
	}
	ctx := context.Background()
	b.Run("untraced", func(b *testing.B) {
		sel := br.Selector()
		for b.Loop() {
			sel.Select(ctx, task, nil)
		}
	})
	b.Run("off", func(b *testing.B) {
		for b.Loop() {
			br.Select(ctx, task, nil)
		}
	})
	b.Run("on", func(b *testing.B) {
		tp := sdktrace.NewTracerProvider(sdktrace.WithSyncer(tracetest.NewNoopExporter()))
		otel.SetTracerProvider(tp)
		defer otel.SetTracerProvider(noop.NewTracerProvider())
		for b.Loop() {
			br.Select(ctx, task, nil)
		}
	})
}

// BenchmarkSpanOff is the whole cost of a span with tracing off.
func BenchmarkSpanOff(b *testing.B) {
	ctx := context.Background()
	for b.Loop() {
		_, span := telemetry.Start(ctx, telemetry.SpanSelect)
		telemetry.EndSelection(span, nil)
	}
}
