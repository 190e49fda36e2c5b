// Package recent keeps the entries of a memo file (token counts, the
// words of cards: what one process remembers for the next) with the
// order of their last use, so the file that replaces it keeps the ones
// used most recently.
//
// Entries read from the file are loaded oldest first ([Table.Load]); the
// first use of one in this process ([Table.Get]), or a new one
// ([Table.Put]), makes it the newest. [Table.Newest] gives the bounded
// set to write back, oldest first, so the next process reads them in
// the same order. A Table is not safe for concurrent use; a memo guards
// it with its own lock.
package recent
