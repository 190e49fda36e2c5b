// Package capbroker is the front door of the capability broker: it holds a
// catalog of capability cards and decides which few each task sees.
//
// # The broker
//
// A [Broker] is built once from cards (from tool files, plugins, skills and
// MCP servers) and then answers, concurrently and deterministically:
//
//   - [Broker.Select]: the tools a task should see, ranked, bounded,
//     explained and never empty, with find_capability always exposed;
//   - [Broker.Find]: capabilities for a query, the escape hatch a model
//     calls mid-run;
//   - [Broker.Render]: the exposed tools in a provider's format.
//
// Example:
//
//	b, err := capbroker.New(ctx, &capbroker.Options{Cards: cards})
//	if err != nil { ... }
//	sel := b.Select(ctx, "fix the failing test in parser.go", nil)
//	for _, p := range sel.Tools {
//		fmt.Println(p.Name, p.Confidence, p.Reason)
//	}
//
// The stages it orchestrates live in their own packages: card (cards and
// the catalog), rank (BM25F ranking with explanations), policy (selection
// rules: floor, bound, thresholds, budget, degrade) and payload (provider
// formats and token counts).
package capbroker
