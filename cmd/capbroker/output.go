package main

import (
	"encoding/json"
	"io"
	"log/slog"
	"strings"
	"text/tabwriter"
)

// writeJSON prints v as indented JSON without HTML escaping.
func writeJSON(w io.Writer, v any) error {
	enc := json.NewEncoder(w)
	enc.SetEscapeHTML(false)
	enc.SetIndent("", "  ")
	return enc.Encode(v)
}

// table returns a tabwriter for aligned text columns; call Flush.
func table(w io.Writer) *tabwriter.Writer {
	return tabwriter.NewWriter(w, 0, 4, 2, ' ', 0)
}

// quietLogger logs errors only, to stderr: commands print their own
// warnings in plain words.
func (m *Main) quietLogger() *slog.Logger {
	return slog.New(slog.NewTextHandler(m.Stderr, &slog.HandlerOptions{Level: slog.LevelError}))
}

// firstLine returns s up to its first newline, cut to n runes.
func firstLine(s string, n int) string {
	if i := strings.IndexByte(s, '\n'); i >= 0 {
		s = s[:i]
	}
	r := []rune(s)
	if len(r) > n {
		return string(r[:n-1]) + "…"
	}
	return s
}

// discardLogger drops every log line.
func discardLogger() *slog.Logger { return slog.New(slog.DiscardHandler) }
