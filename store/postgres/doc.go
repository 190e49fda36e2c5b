// Package postgres stores capbroker sessions and traces in PostgreSQL
// (github.com/jackc/pgx/v5), so several capbroker instances can share
// sessions: a run started by one instance can be resumed, or have tools
// found for it, by another.
//
// # Sharing
//
// Session writes are optimistic: an update names the version it read and
// fails with store.ErrConflict if another instance wrote first; the
// session package then re-reads and re-applies its change. Every write is
// one transaction that also holds its trace records.
//
// Trace IDs come from an identity column: increasing in insert order per
// connection, but two instances' concurrent appends may commit out of ID
// order, so a reader paging with AfterID while others write can see a
// lower ID appear later.
//
// # Fleet
//
// [Store.Notify] and [Store.Listen] carry messages between the replicas
// of a fleet (LISTEN/NOTIFY; Listen calls its listening function at each
// (re)connection, for the listener to read what it missed). The
// mcp_events and mcp_event_streams tables (PostgreSQL only) keep the
// server-sent events of MCP streams, numbered per stream, for resumption
// on another replica (store.MCPEvents).
//
// # Schema
//
// Tables live in the connection's search_path, or in [Options.Schema]
// (created if missing). A schema_version table records the migrations
// applied; [Open] applies the missing ones under an advisory lock, so
// instances starting together migrate once.
//
// Importing the package registers it with store.Open as "postgres", for
// data source names starting with postgres:// or postgresql://.
package postgres
