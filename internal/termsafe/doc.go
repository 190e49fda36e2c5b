// Package termsafe makes untrusted text safe to print to a terminal.
//
// A repository's MCP config, a tool's description or a plugin's name can
// carry terminal escape sequences (ESC [ ... which move the cursor, erase a
// line or retitle the window), carriage returns that overwrite a line, and
// Unicode bidirectional controls that reorder what is shown: a prompt can
// then show a harmless command while another runs. Every such character is
// shown escaped instead: C0 controls and invalid UTF-8 bytes as \xNN, DEL,
// C1 controls, format characters (bidi controls, zero-width characters, tag
// characters) and line or paragraph separators as \uXXXX.
//
// [String] escapes a one-line field (newlines and tabs too); [Text] keeps
// newlines and tabs; [NewWriter] applies Text to everything written through
// it. The escapes of Text keep JSON valid: Go's encoder already escapes the
// C0 controls, and \uXXXX is a JSON escape.
package termsafe
