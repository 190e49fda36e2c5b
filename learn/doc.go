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
// results included the card, made before the card's last call, are the
// phrases that led to the card. How the card's use ended weighs them:
//   - [Completed] (1): its last call went through, and so did the
//     session's last call: the task was done with it;
//   - [Unfinished] (0.5): its last call went through, the session's last
//     did not;
//   - [Demoted] (-1): its last call errored (error, timeout, tool_error),
//     was refused at elicitation (denied), or was abandoned: it did not go
//     through (cancelled included) and the session then called another card
//     that a find returning this one had also returned.
//
// A cancelled call otherwise teaches nothing, and so does a call that never
// reached a tool (refused by the broker, over budget, unknown). A session
// counts once per card and phrase however often it called the card; the
// same phrase (compared in lower case, spacing collapsed) asked in several
// sessions adds up, each session's weight fading with the age of its last
// call of the card (half-life [DefaultHalfLife]); a phrase whose sum falls
// below 1/64, or that no session promoted, is dropped. A card keeps its
// [DefaultMaxPhrases] strongest phrases, each cut to [MaxPhraseBytes]; rank
// reads at most 32 words of each. Calls of a card the catalog no longer has
// are ignored, and so are calls recorded with another digest
// (trace.Record.ToolDigest): the card changed since, and what was asked of
// it then may not fit it now. Nothing leaves the machine: the evidence is
// read from the local store only.
//
// # How much it weighs
//
// Rank weighs what a card learnt by how much there is
// ([rank.CardEvidence], the sum of its phrases' weights): the usage
// field's weight for a card with evidence e is its full weight times
// e/(e+k) ([rank.DefaultUsageEvidence]), zero without evidence, so a
// catalog used often learns much and a new one loses nothing; and the
// past phrase most like a query raises its card by the same share
// ([rank.DefaultPrecedent]).
//
// A long-running process reads the store once ([LoadEvidence], [Collect])
// and asks the [Evidence] for the usage of each catalog it builds
// ([Evidence.Usage]): the gateway does so at start and once a day. The
// gateway's records say in their detail what its trace rows cannot: every
// tool a find returned ("matched", Found holds only those it newly
// exposed), a task that only names the gateway's sessions ("no_task": no
// phrase) and how a call ended ("outcome", see above).
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
