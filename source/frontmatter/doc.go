// Package frontmatter reads the YAML block at the top of Markdown files the
// way Claude Code plugins and Agent Skills write them, including the many
// ways real files break YAML.
//
// # The format
//
// A file with frontmatter opens with a line "---", then YAML key: value
// lines, then a closing "---" (or "..."); the rest is the body:
//
//	---
//	name: code-reviewer
//	description: Reviews code. Use after every change.
//	tools: Read, Grep, Glob
//	---
//	You are a senior reviewer...
//
// A file without the opening line has no frontmatter: every byte is body.
//
// # Leniency
//
// [Parse] never fails on text. It first normalizes the bytes: a UTF-8 or
// UTF-16 byte order mark is dropped (UTF-16 is decoded), CRLF and lone CR
// become LF, and invalid UTF-8 is read as Latin-1 when the file holds no
// valid multi-byte sequence at all, else replaced with U+FFFD. Each of
// these is recorded in [Document.Notes].
//
// The block is then decoded with a YAML library. When that fails (the
// common case is an unquoted ": " inside a description, which strict YAML
// rejects with "mapping values are not allowed here"), a line reader takes
// over: a key at column 0 up to the first colon, the rest of the line as
// the value; block scalars (|, >, with chomping), indented "- item" lists,
// flow lists "[a, b]" on the same or the next line, and indented
// continuation lines are understood. [Document.Lenient] says which reader
// was used and [Document.YAMLError] why YAML failed.
//
// # Reading values
//
// Values keep their source text: "version: 1.0" reads as "1.0", not 1.
// [Document.String] returns a scalar as text (a list that YAML read from an
// unquoted "[a, b]" comes back as the text the author wrote);
// [Document.List] returns a list field given either as a YAML list or as
// a comma-separated string, which is how "tools" and "allowed-tools"
// appear in the wild.
package frontmatter
