package main

import (
	"encoding/json"
	"fmt"
	"io"
	"log/slog"
	"strconv"
	"strings"
	"text/tabwriter"

	"github.com/capbroker/capbroker/policy"
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

// count is n with the noun, plural unless n is 1: "1 problem", "3 problems".
func count(n int, noun string) string {
	if n == 1 {
		return "1 " + noun
	}
	return strconv.Itoa(n) + " " + noun + "s"
}

// tokensLine says what the exposed tools cost against the whole catalog,
// honestly when a small catalog costs less than the floor and the hatch.
func tokensLine(t policy.Tokens, tools int) string {
	if t.Exposed >= t.Full {
		return fmt.Sprintf("tokens:  %d exposed: more than the whole catalog's %d (%s and the hatch; nothing saved on a catalog this small; %s, %s)",
			t.Exposed, t.Full, count(tools, "tool"), t.Format, t.Encoding)
	}
	return fmt.Sprintf("tokens:  %d exposed of %d for the full catalog (%.0f%% saved; %s, %s)", t.Exposed, t.Full, 100*t.Saved, t.Format, t.Encoding)
}
