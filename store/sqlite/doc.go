// Package sqlite stores capbroker sessions and traces in an embedded
// SQLite database (modernc.org/sqlite: pure Go, no cgo). It is the
// default store: one file in the user's data directory, nothing to run.
//
// # Durability and concurrency
//
// The database runs in WAL mode, so readers never block the writer, with
// a busy timeout so several processes can share one file. Writes from
// one process go through a single connection (SQLite has one writer at a
// time anyway, and queuing in Go is fairer than SQLite's busy sleeps);
// reads use a pool. Every session write is one transaction that also
// holds its trace records.
//
// By default synchronous=NORMAL: a committed write survives the process
// being killed at any moment (the crash test kills it with SIGKILL), and
// the file is never corrupted; after a power cut the last transactions
// may be lost. Set [Options.Synchronous] to "FULL" to survive power cuts
// at the cost of an fsync per write.
//
// # Schema
//
// A schema_version table records the migrations applied; [Open] applies
// the missing ones in one transaction and refuses a database newer than
// this code (store.ErrSchemaTooNew).
//
// Importing the package registers it with store.Open as "sqlite".
package sqlite
