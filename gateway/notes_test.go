package gateway

import (
	"context"
	"io"
	"log/slog"
	"net/http"
	"strings"
	"testing"

	"github.com/capbroker/capbroker/internal/testenv"
	"github.com/capbroker/capbroker/policy"
)

// TestHeldNoteLoggedOnce: the catalog is rebuilt whenever an upstream
// connects or changes; the note that a tool is held back is logged once,
// not at every rebuild (it was logged 3-4 times at start).
func TestHeldNoteLoggedOnce(t *testing.T) {
	var logs testenv.Buffer
	logger := slog.New(slog.NewTextHandler(&logs, &slog.HandlerOptions{Level: slog.LevelInfo}))
	g := startGateway(t, []ServerConfig{testServer("alpha")}, &Options{Family: policy.General, Logger: logger})
	for range 3 {
		if err := g.refresh(context.Background()); err != nil {
			t.Fatal(err)
		}
	}
	n := 0
	for _, line := range strings.Split(logs.String(), "\n") {
		if strings.Contains(line, "delete_all") && strings.Contains(line, "held back") {
			n++
		}
	}
	if n != 1 {
		t.Errorf("the held-back note for delete_all was logged %d times, want once:\n%s", n, logs.String())
	}
}

// TestStatusHeldEmpty: with nothing held back, /status says "held": [],
// not null.
func TestStatusHeldEmpty(t *testing.T) {
	g := startGateway(t, []ServerConfig{testServer("alpha")}, &Options{Family: policy.General, AllowIrreversible: true})
	url := serveHTTP(t, g, nil)
	resp, err := http.Get(strings.TrimSuffix(url, "/mcp") + "/status")
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	if !strings.Contains(string(b), `"held":[]`) {
		t.Errorf("/status = %s, want \"held\":[]", b)
	}
}
