// Package learn turns what past sessions did into evidence for ranking:
// the words of the tasks and find_capability queries that led to a call
// of a card, within the same session, become the card's usage field
// (rank.FieldUsage, rank.Options.Usage).
//
//	usage, err := learn.Load(ctx, st, cards, nil) // from the local store
//	ix := rank.New(cards, &rank.Options{Usage: usage})
//
// # What counts
//
// A session's task (its select record) and each of its finds whose
// results included the card count for a call of the card that ran and
// returned without error: its record's detail says "outcome": "ok"
// ([Ran]), as the gateway writes it. A call checked but not run (POST
// /v1/sessions/{id}/call), refused, failed or answered with a tool error
// teaches nothing. One session teaches about at most [MaxSessionTools]
// tools and [MaxSessionPhrases] phrases of each; the sessions of one
// client (the gateway's "client" detail) count at most
// [MaxClientSessions] times for a card and phrase. A session counts once per card and
// phrase, however often it called the card; the same phrase (compared in
// lower case, spacing collapsed) asked in several sessions adds up, each
// session's evidence fading with the age of its last call (half-life
// [DefaultHalfLife]; below 1/64 it is dropped). A card keeps its
// [DefaultMaxPhrases] strongest phrases, each cut to [MaxPhraseBytes];
// rank reads at most 32 words of each. Calls of a card the catalog no
// longer has are ignored, and so are calls recorded with another digest
// (trace.Record.ToolDigest): the card changed since, and what was asked
// of it then may not fit it now. Nothing leaves the machine: the
// evidence is read from the local store only.
//
// A long-running process reads the store once ([LoadEvidence], [Collect])
// and asks the [Evidence] for the usage of each catalog it builds
// ([Evidence.Usage]): the gateway does so at start and once a day. The
// gateway's records say in their detail what its trace rows cannot: every
// tool a find returned ("matched", Found holds only those it newly
// exposed), a task that only names the gateway's sessions ("no_task": no
// phrase), how a call ended ("outcome": only ok counts) and who made it
// ("client").
//
// # Measured
//
// [EvalSplit] (capbroker eval --learn-split 0.5) replays the first half
// of a benchmark's queries as past sessions that called their gold tools
// and ranks the second half without and with what they taught. The
// usage field's weight was chosen by leave-one-dataset-out on MetaTool
// (single), BFCL, Seal-Tools and examples/tasks.jsonl; see
// rank.DefaultUsageWeight.
package learn
