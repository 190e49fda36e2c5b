package gateway

import (
	"context"
	"log/slog"
	"strings"
)

// sdkLogger is the logger the gateway gives the MCP SDK's servers: l, but
// a list_changed notification that found no stream to go on is logged at
// Debug, not Warn. A client that opens no standalone stream (many do not: it is
// optional) cannot hear a tools/list_changed the gateway sends when a find
// adds tools to its session; that is the client's choice, and the SDK's
// warning, once per session and change, drowned the gateway's own.
func sdkLogger(l *slog.Logger) *slog.Logger {
	return slog.New(unheard{l.Handler()})
}

type unheard struct{ slog.Handler }

func (h unheard) Handle(ctx context.Context, r slog.Record) error {
	if r.Level == slog.LevelWarn && strings.HasPrefix(r.Message, "calling notifications/") &&
		strings.Contains(r.Message, "/list_changed: ") && strings.HasSuffix(r.Message, "stream not connected or already closed") {
		if !h.Enabled(ctx, slog.LevelDebug) {
			return nil
		}
		d := slog.NewRecord(r.Time, slog.LevelDebug, r.Message, r.PC)
		r.Attrs(func(a slog.Attr) bool {
			d.AddAttrs(a)
			return true
		})
		r = d
	}
	return h.Handler.Handle(ctx, r)
}

func (h unheard) WithAttrs(as []slog.Attr) slog.Handler { return unheard{h.Handler.WithAttrs(as)} }
func (h unheard) WithGroup(name string) slog.Handler    { return unheard{h.Handler.WithGroup(name)} }
