// Package replay runs recorded sessions (trace records, from the session
// store or a JSONL export) against today's catalog, ranker and config,
// so that a user's own sessions become the regression test of a change.
//
// For each session it asks what today's broker would have given: the
// tools exposed up front for the session's task (select), and what each
// of its find_capability queries would find. Each call the session made
// is then either exposed up front, found (by one of the session's finds
// made before it), lost (neither) or gone (no longer in the catalog); a
// find is needed no more (what it led to calling is exposed up front),
// found, lost, or led to no call. The token cost is that of the tools
// exposed at the end, recorded and today.
//
//	sessions := replay.Sessions(recs)
//	rep, err := replay.Run(ctx, exposer, sessions)
//
// [Queries] turns the same sessions into benchmark queries (the task, and
// the tools it called as gold), so eval scores a user's traces too.
package replay
