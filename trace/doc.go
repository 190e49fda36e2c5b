// Package trace defines the records capbroker keeps of every decision it
// makes: what a task was shown, what a model found through the escape
// hatch, which tools it called, how a phase was routed and what a plan
// named. Records are data: they are stored (see package store), listed by
// "capbroker trace" and exported as JSON Lines.
//
// # Records
//
// A [Record] is one event of a [Kind] (select, find, call, route, plan,
// resume), usually within a session. The current version ([Version] = 2)
// carries:
//
//   - selected_tools: the tools exposed after the event (the selection
//     plus everything found so far), in order;
//   - capability_reason: why those tools, in words;
//   - find_capability_calls: how many times the session has called the
//     escape hatch so far;
//   - tokens: the exposed payload's tokens against the full catalog's;
//   - latency_ns: how long the decision took;
//   - failures: anything that failed, each with its [Tier] (rank, store,
//     budget, exposure, catalog), because a failure degrades a run but
//     never stops it.
//
// # Versions
//
// Records are versioned and readers accept every version ever written:
// [Decode] upgrades an older record to the current shape, so rows stored by
// an older capbroker stay readable. Version 1 records (no "v" field, or
// "v":1) used "event", "session", "ts" (Unix seconds), "tools", "reason",
// a single "tokens" count, "latency_ms" and an "error" string; they had no
// find_capability_calls. A record newer than this reader is an error
// ([ErrNewerVersion]) for [Decode], never guessed at; the readers of many
// records ([ReadJSONL], the stores' Traces) skip such records with one
// warning for all of them and read the rest. Fields are only ever added, so a
// version-2 reader also reads version-2 records that carry fields it does
// not know.
//
// # Export
//
// [WriteJSONL] writes one record per line in the current version;
// [ReadJSONL] reads lines of any version, reporting the line of any bad
// one.
package trace
