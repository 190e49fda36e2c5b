package telemetry

import (
	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/trace"

	"github.com/capbroker/capbroker/policy"
)

// EndSelection sets a selection's attributes on span (when it records;
// see [SelectionAttrs]), marks it failed when ranking failed and the
// selection degraded to the full set, and ends it.
func EndSelection(span trace.Span, sel *policy.Selection) {
	if span.IsRecording() && sel != nil {
		span.SetAttributes(SelectionAttrs(sel)...)
		if sel.Degraded {
			Fail(span, "degraded", "ranking failed, the full set is exposed: "+sel.Failure)
		}
	}
	span.End()
}

// SelectionAttrs describes a selection: family, the picks (names and
// count), their tokens against the full catalog's, the aspects, and
// whether it degraded. The task's text is left out.
func SelectionAttrs(sel *policy.Selection) []attribute.KeyValue {
	a := []attribute.KeyValue{
		Family.String(string(sel.Family)),
		SelectedCount.Int(len(sel.Tools)),
		Selected.StringSlice(sel.Names()),
		TokensExposed.Int(sel.Tokens.Exposed),
		TokensFull.Int(sel.Tokens.Full),
	}
	if len(sel.Aspects) > 1 {
		a = append(a, AspectCount.Int(len(sel.Aspects)))
	}
	if sel.Degraded {
		a = append(a, Degraded.Bool(true))
	}
	return a
}

// EndFind sets a find's attributes on span (k asked, names found),
// marks it failed when ranking failed, and ends it. The query's text is
// left out.
func EndFind(span trace.Span, k int, res *policy.FindResult) {
	if span.IsRecording() && res != nil {
		span.SetAttributes(FindK.Int(k), MatchCount.Int(len(res.Matches)), Matches.StringSlice(res.Names()))
		if res.Degraded {
			span.SetAttributes(Degraded.Bool(true))
			Fail(span, "degraded", "ranking failed: "+res.Failure)
		}
	}
	span.End()
}
