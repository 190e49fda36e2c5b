// Package textdiff compares texts line by line: [Lines] for the short
// texts a card carries (the description and input schema a user approved
// or a plan pinned, against what the card says now), [Unified] for whole
// files as "diff -u" shows them (the client configs "capbroker client"
// rewrites). Both rest on [Edits], a longest-common-subsequence diff of
// the lines between the common head and tail.
package textdiff
