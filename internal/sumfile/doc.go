// Package sumfile reads and writes the checksummed files capbroker keeps
// beside its databases to skip work the next process would repeat (the
// words of cards a ranker read, the vectors of a catalog): a magic line,
// the body's length (8 bytes, big-endian) and SHA-256 (32 bytes), then
// the body.
//
// A file is written whole or not at all ([Write] replaces it atomically,
// readable by its owner only), and read whole or not at all: [Decode]
// refuses a file of another kind, a truncated one and one whose body does
// not match its checksum, so a reader never acts on part of a file. What
// the body holds is the caller's; [AppendString] and [Reader] write and
// read its usual parts, uvarints and length-prefixed strings.
package sumfile
