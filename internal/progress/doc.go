// Package progress shows how far a long step has got on one line of a
// terminal, rewritten in place ("embedding cards 340/1000", "connecting
// MCP servers 3/7: github"). A [Reporter] writes only when told its
// writer is a terminal ([IsTerminal] decides for a real stream); on a
// pipe or a file it writes nothing, so --json output and logs stay clean.
package progress
