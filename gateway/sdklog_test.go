package gateway

import (
	"bytes"
	"log/slog"
	"strings"
	"testing"
)

// TestSDKLogger: the SDK's warning that a notification found no stream is
// logged at Debug; its other warnings stay warnings.
func TestSDKLogger(t *testing.T) {
	const unheardMsg = "calling notifications/tools/list_changed: rejected by transport: undelivered message: stream not connected or already closed"
	for _, tc := range []struct {
		name  string
		level slog.Level
		msg   string
		want  string // "" for nothing logged
	}{
		{"unheard at warn", slog.LevelWarn, unheardMsg, ""},
		{"unheard at debug", slog.LevelDebug, unheardMsg, "level=DEBUG"},
		{"other warning", slog.LevelWarn, "calling notifications/tools/list_changed: context deadline exceeded", "level=WARN"},
		{"other stream warning", slog.LevelWarn, "writing the response: stream not connected or already closed", "level=WARN"},
		{"resources/updated unheard", slog.LevelWarn, "calling notifications/resources/updated: rejected by transport: undelivered message: stream not connected or already closed", "level=WARN"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var buf bytes.Buffer
			l := sdkLogger(slog.New(slog.NewTextHandler(&buf, &slog.HandlerOptions{Level: tc.level}))).With("session", "s1")
			l.Warn(tc.msg, "client", "c1")
			got := buf.String()
			if tc.want == "" {
				if got != "" {
					t.Fatalf("logged %q, want nothing", got)
				}
				return
			}
			if !strings.Contains(got, tc.want) || !strings.Contains(got, "session=s1") || !strings.Contains(got, "client=c1") {
				t.Fatalf("logged %q, want %s with the session and client attributes", got, tc.want)
			}
		})
	}
}
