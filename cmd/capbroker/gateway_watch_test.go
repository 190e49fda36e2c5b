package main

import (
	"context"
	"io"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/capbroker/capbroker/internal/testenv"
)

// TestGatewayWatchesServersFile edits the servers file under a running
// stdio gateway with a connected Go SDK client, from a file with no
// server yet or with every server disabled (the gateway serves and waits
// for one): a server added to the file starts and its tools join the
// list, a server removed from it stops and its tools leave, each time
// with list_changed, no restart.
func TestGatewayWatchesServersFile(t *testing.T) {
	memory := testenv.NodeBin(t, "mcp-server-memory")
	fsServer := testenv.NodeBin(t, "mcp-server-filesystem")
	for _, tc := range []struct {
		name  string
		start func(dir string) []string // the file's first entries
		log   string                    // what the gateway says of it
	}{
		// As client add leaves the file when it had none to move.
		{"no server yet", func(string) []string { return nil }, "no MCP server to front in"},
		// As "capbroker server disable" leaves the only server.
		{"every server disabled", func(dir string) []string {
			return []string{`"memory": {"command": "` + memory + `", "disabled": true}`}
		}, "is disabled (capbroker server enable NAME)"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			watchServersFile(t, memory, fsServer, tc.start, tc.log)
		})
	}
}

func watchServersFile(t *testing.T, memory, fsServer string, start func(string) []string, log string) {
	dir := t.TempDir()
	cfg := filepath.Join(dir, "servers.json")
	memEntry := `"memory": {"command": "` + memory + `", "env": {"MEMORY_FILE_PATH": "` + filepath.Join(dir, "m.jsonl") + `"}}`
	fsEntry := `"files": {"command": "` + fsServer + `", "args": ["` + dir + `"]}`
	write := func(entries ...string) {
		t.Helper()
		// Atomically, as an editor or "capbroker client add" writes.
		tmp := cfg + ".tmp"
		if err := os.WriteFile(tmp, []byte(`{"mcpServers": {`+strings.Join(entries, ", ")+`}}`), 0o600); err != nil {
			t.Fatal(err)
		}
		if err := os.Rename(tmp, cfg); err != nil {
			t.Fatal(err)
		}
	}
	// The gateway serves all the same, and starts what is added.
	write(start(dir)...)

	inR, inW := io.Pipe()
	outR, outW := io.Pipe()
	var stderr testenv.Buffer
	m := &Main{Stdin: inR, Stdout: outW, Stderr: &stderr, Getenv: func(string) string { return "" }}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() {
		done <- m.Run(ctx, []string{"gateway", "--mcp-config", cfg, "--mode", "all", "--watch", "100ms",
			"--index", filepath.Join(dir, "index"), "--db", filepath.Join(dir, "sessions.db"), "--start-wait", "1m"})
		outW.Close()
	}()
	defer func() {
		cancel()
		inW.Close()
		<-done
	}()
	var changes atomic.Int64
	cs, err := mcp.NewClient(&mcp.Implementation{Name: "t", Version: "1"}, &mcp.ClientOptions{
		ToolListChangedHandler: func(context.Context, *mcp.ToolListChangedRequest) { changes.Add(1) },
	}).Connect(ctx, &mcp.IOTransport{Reader: outR, Writer: inW}, nil)
	if err != nil {
		t.Fatalf("connecting: %v\n%s", err, stderr.String())
	}
	tools := func() []string {
		var names []string
		for tool, err := range cs.Tools(ctx, nil) {
			if err != nil {
				t.Fatal(err)
			}
			names = append(names, tool.Name)
		}
		return names
	}
	has := func(name string) bool { return slices.Contains(tools(), name) }
	waitFor := func(what string, ok func() bool) {
		t.Helper()
		deadline := time.Now().Add(90 * time.Second)
		for !ok() {
			if time.Now().After(deadline) {
				t.Fatalf("%s: tools %v\n%s", what, tools(), stderr.String())
			}
			time.Sleep(200 * time.Millisecond)
		}
	}
	if got := tools(); len(got) != 0 {
		t.Fatalf("at start, fronting no server: %v", got)
	}
	if !strings.Contains(stderr.String(), "fronting none until one is added or enabled (capbroker server add") || !strings.Contains(stderr.String(), log) {
		t.Errorf("the log does not say the gateway fronts no server yet, and why (%q):\n%s", log, stderr.String())
	}
	write(memEntry)
	waitFor("after adding memory to the empty file", func() bool { return has("memory__read_graph") && !has("files__read_text_file") })
	before := changes.Load()
	write(memEntry, fsEntry)
	waitFor("after adding files", func() bool { return has("files__read_text_file") && has("memory__read_graph") })
	waitFor("list_changed after adding files", func() bool { return changes.Load() > before })

	before = changes.Load()
	write(fsEntry)
	waitFor("after removing memory", func() bool { return !has("memory__read_graph") && has("files__read_text_file") })
	waitFor("list_changed after removing memory", func() bool { return changes.Load() > before })
	if !strings.Contains(stderr.String(), "servers file changed") {
		t.Errorf("the log does not say the servers file changed:\n%s", stderr.String())
	}
}
