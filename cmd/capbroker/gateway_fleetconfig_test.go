package main

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"io"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/capbroker/capbroker/internal/testenv"
	"github.com/capbroker/capbroker/store/postgres"
)

// stdioGateway runs "capbroker gateway" over stdio with args and returns
// a connected client, the gateway's log and a function that stops it.
func stdioGateway(t *testing.T, args ...string) (*mcp.ClientSession, *testenv.Buffer, func()) {
	t.Helper()
	inR, inW := io.Pipe()
	outR, outW := io.Pipe()
	stderr := &testenv.Buffer{}
	m := &Main{Stdin: inR, Stdout: outW, Stderr: stderr, Getenv: func(string) string { return "" }}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() {
		done <- m.Run(ctx, append([]string{"gateway"}, args...))
		outW.Close()
	}()
	stopped := false
	stop := func() {
		if stopped {
			return
		}
		stopped = true
		cancel()
		inW.Close()
		<-done
	}
	t.Cleanup(stop)
	cs, err := mcp.NewClient(&mcp.Implementation{Name: "t", Version: "1"}, nil).Connect(ctx, &mcp.IOTransport{Reader: outR, Writer: inW}, nil)
	if err != nil {
		t.Fatalf("connecting: %v\n%s", err, stderr.String())
	}
	return cs, stderr, stop
}

// TestGatewayFleetSharesServersFile runs two gateway replicas on one
// PostgreSQL database, each with its own servers file and index folder:
// a server added to the first's file starts on the second too, without a
// restart or an edit there; and a replica that was down while the file
// changed, restarted with the file it ran with, takes the fleet's
// version at start. Before served files were shared, each replica served
// its own file only.
func TestGatewayFleetSharesServersFile(t *testing.T) {
	memory := testenv.NodeBin(t, "mcp-server-memory")
	fsServer := testenv.NodeBin(t, "mcp-server-filesystem")
	dsn := testenv.Postgres(t)
	var rb [6]byte
	rand.Read(rb[:])
	schema := "capbroker_cmd_" + hex.EncodeToString(rb[:])
	st, err := postgres.Open(context.Background(), dsn, &postgres.Options{Schema: schema})
	if err != nil {
		t.Fatal(err)
	}
	st.Close()
	sep := "?"
	if strings.Contains(dsn, "?") {
		sep = "&"
	}
	db := dsn + sep + "search_path=" + schema

	root := t.TempDir()
	data := filepath.Join(root, "data")
	if err := os.MkdirAll(data, 0o700); err != nil {
		t.Fatal(err)
	}
	memEntry := `"memory": {"command": "` + memory + `", "env": {"MEMORY_FILE_PATH": "` + filepath.Join(data, "m.jsonl") + `"}}`
	fsEntry := `"files": {"command": "` + fsServer + `", "args": ["` + data + `"]}`
	// Each replica's folder holds its servers.json: one name for the
	// fleet, as the same path on every machine would be.
	old := fleetConfigKey
	fleetConfigKey = filepath.Base
	defer func() { fleetConfigKey = old }()
	cfg := func(replica string) string { return filepath.Join(root, replica, "servers.json") }
	write := func(path string, entries ...string) {
		t.Helper()
		if err := os.MkdirAll(filepath.Dir(path), 0o700); err != nil {
			t.Fatal(err)
		}
		tmp := path + ".tmp"
		if err := os.WriteFile(tmp, []byte(`{"mcpServers": {`+strings.Join(entries, ", ")+`}}`), 0o600); err != nil {
			t.Fatal(err)
		}
		if err := os.Rename(tmp, path); err != nil {
			t.Fatal(err)
		}
	}
	write(cfg("a"), memEntry)
	write(cfg("b"), memEntry)
	start := func(replica string) (*mcp.ClientSession, *testenv.Buffer, func()) {
		return stdioGateway(t, "--mcp-config", cfg(replica), "--mode", "all", "--watch", "100ms",
			"--index", filepath.Join(root, replica, "index"), "--db", db, "--start-wait", "1m")
	}
	tools := func(cs *mcp.ClientSession) []string {
		var names []string
		for tool, err := range cs.Tools(context.Background(), nil) {
			if err != nil {
				t.Fatal(err)
			}
			names = append(names, tool.Name)
		}
		return names
	}
	waitFor := func(what string, cs *mcp.ClientSession, log *testenv.Buffer, ok func([]string) bool) {
		t.Helper()
		deadline := time.Now().Add(90 * time.Second)
		for !ok(tools(cs)) {
			if time.Now().After(deadline) {
				t.Fatalf("%s: tools %v\n%s", what, tools(cs), log.String())
			}
			time.Sleep(50 * time.Millisecond)
		}
	}
	csA, logA, _ := start("a")
	csB, logB, stopB := start("b")
	waitFor("memory on A", csA, logA, func(n []string) bool { return slices.Contains(n, "memory__read_graph") })
	waitFor("memory on B", csB, logB, func(n []string) bool { return slices.Contains(n, "memory__read_graph") })

	// A server added on A starts on B.
	began := time.Now()
	write(cfg("a"), memEntry, fsEntry)
	waitFor("files on B, added on A", csB, logB, func(n []string) bool { return slices.Contains(n, "files__read_text_file") })
	t.Logf("a server added to A's file was listed on B %v later (watchers poll every 100 ms; the server starts in that time)", time.Since(began))
	if b, _ := os.ReadFile(cfg("b")); !strings.Contains(string(b), `"files"`) {
		t.Errorf("B's file was not written with the fleet's version:\n%s", b)
	}

	// B goes down; A's file changes; B restarts with the file it ran
	// with, and takes the fleet's version at start.
	stopB()
	write(cfg("a"), fsEntry)
	waitFor("memory gone from A", csA, logA, func(n []string) bool { return !slices.Contains(n, "memory__read_graph") })
	time.Sleep(300 * time.Millisecond) // A shares it
	csB2, logB2, _ := start("b")
	waitFor("memory gone from B after its restart", csB2, logB2, func(n []string) bool {
		return !slices.Contains(n, "memory__read_graph") && slices.Contains(n, "files__read_text_file")
	})
	if !strings.Contains(logB2.String(), "changed by another replica") {
		t.Errorf("B's log does not say it applied the fleet's version:\n%s", logB2.String())
	}
}
