// Package store persists sessions and traces. It defines the [Store]
// interface that sessions, the CLI, the HTTP API and the MCP gateway
// consume; the implementations live in subpackages, one per database:
//
//   - store/sqlite: an embedded SQLite file (modernc.org/sqlite, pure Go,
//     WAL). The default: nothing to install or run.
//   - store/postgres: PostgreSQL (pgx), for several capbroker instances
//     sharing sessions.
//
// Both pass the same conformance suite (package store/storetest), and
// both are the same code where they can be: [SQL] implements the session
// and trace methods once, with "?" placeholders, over a [DB] — a write
// transaction, a query, a one-row query — that each adapts from its
// driver (database/sql for SQLite, pgx for PostgreSQL, which numbers the
// placeholders with [Rebind] and sends trace inserts in one batch). What
// stays in each subpackage is how it opens and migrates its database.
//
// # Opening a store
//
// Implementations register themselves by name when imported, the way
// database/sql drivers do, and [Open] picks one from the data source
// name: "postgres://..." or "postgresql://..." opens PostgreSQL, anything
// else (a path, "file:...", "sqlite:PATH") opens SQLite:
//
//	import (
//		"github.com/capbroker/capbroker/store"
//		_ "github.com/capbroker/capbroker/store/postgres"
//		_ "github.com/capbroker/capbroker/store/sqlite"
//	)
//
//	st, err := store.Open(ctx, "/home/me/.local/share/capbroker/capbroker.db")
//	if err != nil { ... }
//	defer st.Close()
//
// # Sessions and versions
//
// A stored [Session] carries a Version that every write bumps. Writers
// update with the version they read ([Store.UpdateSession]); if another
// writer got there first the update fails with [ErrConflict] and the
// writer re-reads and re-applies its change. That is what lets several
// processes share sessions without losing a found tool.
//
// A session write can carry trace records; they are stored in the same
// transaction, so a crash keeps both or neither.
//
// # MCP sessions of a fleet
//
// Both stores also implement [MCPSessions]: the MCP sessions of gateway
// replicas sharing the database (the mcp_sessions table: each session's
// ID, name, identity, the gateway's state as JSON, an anonymous session's
// exposed tools, and when it was last in use), so any replica serves any
// request of any session. Exposed tools only grow ([MCPSessions.AddMCPExposed]
// re-reads and retries like [Store.UpdateSession]); sessions idle past
// the gateway's timeout are expired ([MCPSessions.ExpireMCPSessions]).
//
// # Shared state
//
// Both stores implement [Shared]: what a fleet shares beyond its
// sessions (the shared_state table: items keyed by kind and name, each
// write numbered by one sequence, so a reader that missed notifications
// reads what came after the last number it saw; a write older than the
// stored item, or a weak one over an existing item, changes nothing), and
// the fleet's token buckets ([Shared.TakeTokens]). The PostgreSQL store
// also keeps the server-sent events of MCP streams ([MCPEvents]), so a
// stream resumes on another replica.
//
// # Schema
//
// Each implementation keeps a schema_version table and applies its
// numbered migrations in order when opened, inside a transaction, so a
// database written by an older capbroker is upgraded in place. A database
// newer than the code is refused with [ErrSchemaTooNew] rather than
// misread.
package store
