package main

import (
	"bytes"
	"context"
	"io"
	"path/filepath"
	"slices"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/capbroker/capbroker/internal/testenv"
)

// profileGateway runs "capbroker gateway ARGS" over stdio with the
// environment env and connects a Go SDK client counting list_changed.
type profileGateway struct {
	t       *testing.T
	ctx     context.Context
	cs      *mcp.ClientSession
	changes atomic.Int64
	stderr  *testenv.Buffer
}

func startProfileGateway(t *testing.T, env map[string]string, args ...string) *profileGateway {
	t.Helper()
	inR, inW := io.Pipe()
	outR, outW := io.Pipe()
	pg := &profileGateway{t: t, stderr: &testenv.Buffer{}}
	m := &Main{Stdin: inR, Stdout: outW, Stderr: pg.stderr, Getenv: func(k string) string { return env[k] }}
	ctx, cancel := context.WithCancel(context.Background())
	pg.ctx = ctx
	done := make(chan error, 1)
	go func() {
		done <- m.Run(ctx, append([]string{"gateway"}, args...))
		outW.Close()
	}()
	t.Cleanup(func() {
		cancel()
		inW.Close()
		<-done
	})
	cs, err := mcp.NewClient(&mcp.Implementation{Name: "t", Version: "1"}, &mcp.ClientOptions{
		ToolListChangedHandler: func(context.Context, *mcp.ToolListChangedRequest) { pg.changes.Add(1) },
	}).Connect(ctx, &mcp.IOTransport{Reader: outR, Writer: inW}, nil)
	if err != nil {
		t.Fatalf("connecting: %v\n%s", err, pg.stderr.String())
	}
	pg.cs = cs
	return pg
}

func (pg *profileGateway) tools() []string {
	var names []string
	for tool, err := range pg.cs.Tools(pg.ctx, nil) {
		if err != nil {
			pg.t.Fatal(err)
		}
		names = append(names, tool.Name)
	}
	return names
}

func (pg *profileGateway) waitFor(what string, ok func() bool) {
	pg.t.Helper()
	deadline := time.Now().Add(90 * time.Second)
	for !ok() {
		if time.Now().After(deadline) {
			pg.t.Fatalf("%s: tools %v\n%s", what, pg.tools(), pg.stderr.String())
		}
		time.Sleep(200 * time.Millisecond)
	}
}

// TestGatewayWatchesProfile edits, by command, the profile a running
// stdio gateway serves (gateway --profile, as client add --profile writes
// it) with a connected Go SDK client: a server the profile adds starts
// and its pinned tool joins the list, a server it drops stops and its
// tools leave, each time with list_changed and no restart.
func TestGatewayWatchesProfile(t *testing.T) {
	memory := testenv.NodeBin(t, "mcp-server-memory")
	fsServer := testenv.NodeBin(t, "mcp-server-filesystem")
	dir := t.TempDir()
	env := map[string]string{"HOME": dir}
	cfg := filepath.Join(dir, "servers.json")
	writeFile(t, cfg, `{"mcpServers": {
  "memory": {"command": "`+memory+`", "env": {"MEMORY_FILE_PATH": "`+filepath.Join(dir, "m.jsonl")+`"}},
  "files": {"command": "`+fsServer+`", "args": ["`+dir+`"]}}}`)
	profile := func(args ...string) {
		t.Helper()
		var out bytes.Buffer
		m := &Main{Stdout: &out, Stderr: &out, Getenv: func(k string) string { return env[k] }}
		if err := m.Run(context.Background(), append([]string{"profile"}, args...)); err != nil {
			t.Fatalf("profile %v: %v\n%s", args, err, out.String())
		}
	}
	profile("add", "notes", "--server", "memory", "--always", "memory__read_graph")

	pg := startProfileGateway(t, env, "--mcp-config", cfg, "--profile", "notes", "--mode", "auto", "--watch", "100ms",
		"--index", filepath.Join(dir, "index"), "--db", filepath.Join(dir, "sessions.db"), "--start-wait", "1m")
	has := func(name string) bool { return slices.Contains(pg.tools(), name) }
	pg.waitFor("memory__read_graph pinned at start", func() bool { return has("memory__read_graph") })
	if slices.ContainsFunc(pg.tools(), func(n string) bool { return strings.HasPrefix(n, "files__") }) {
		t.Fatalf("files is outside profile notes, but listed: %v", pg.tools())
	}
	if !strings.Contains(pg.stderr.String(), "serving profiles") {
		t.Errorf("the log does not say which profile it serves:\n%s", pg.stderr.String())
	}

	before := pg.changes.Load()
	profile("add", "notes", "--server", "memory", "--server", "files", "--always", "memory__read_graph", "--always", "files__list_allowed_directories", "--replace")
	pg.waitFor("files__list_allowed_directories pinned once the profile adds files", func() bool { return has("files__list_allowed_directories") })
	pg.waitFor("list_changed after adding files", func() bool { return pg.changes.Load() > before })

	before = pg.changes.Load()
	profile("add", "notes", "--server", "files", "--always", "files__list_allowed_directories", "--replace")
	pg.waitFor("memory's tools leave once the profile drops it", func() bool { return !has("memory__read_graph") && has("files__list_allowed_directories") })
	pg.waitFor("list_changed after dropping memory", func() bool { return pg.changes.Load() > before })

	// A profile removed under the gateway: it keeps serving the last one, and says so.
	profile("remove", "notes")
	pg.waitFor("a warning that the profile is gone", func() bool {
		return strings.Contains(pg.stderr.String(), `gateway --profile: profile \"notes\" is not defined`)
	})
	if !has("files__list_allowed_directories") {
		t.Errorf("the gateway dropped its tools when its profile was removed: %v", pg.tools())
	}
}

// TestGatewayProjectProfile: a project's capbroker.yaml chooses one of
// the user's profiles, which narrows what the client's profile allows
// and never widens it; a name not defined stops the gateway with an
// error naming the file; an identity naming an undefined profile is
// refused at start.
func TestGatewayProjectProfile(t *testing.T) {
	memory := testenv.NodeBin(t, "mcp-server-memory")
	fsServer := testenv.NodeBin(t, "mcp-server-filesystem")
	dir := t.TempDir()
	env := map[string]string{"HOME": dir}
	cfg := filepath.Join(dir, "servers.json")
	writeFile(t, cfg, `{"mcpServers": {
  "memory": {"command": "`+memory+`", "env": {"MEMORY_FILE_PATH": "`+filepath.Join(dir, "m.jsonl")+`"}},
  "files": {"command": "`+fsServer+`", "args": ["`+dir+`"]}}}`)
	writeFile(t, filepath.Join(dir, ".config", "capbroker", "profiles.json"), `{"profiles": {
  "both": {"servers": ["memory", "files"]},
  "notes": {"servers": ["memory"]},
  "reading": {"tools": ["files__read_*", "files__list_*", "memory__*"]}}}`)
	project := t.TempDir()
	t.Chdir(project)
	gw := func(args ...string) []string {
		return append([]string{"--mcp-config", cfg, "--mode", "all", "--index", filepath.Join(dir, "index"),
			"--db", filepath.Join(dir, "sessions.db"), "--start-wait", "1m", "--watch", "0"}, args...)
	}
	writeFile(t, filepath.Join(project, "capbroker.yaml"), "profile: reading\n")

	// The client's profile both, narrowed by the project's reading.
	pg := startProfileGateway(t, env, gw("--profile", "both")...)
	pg.waitFor("both servers' tools", func() bool {
		return slices.Contains(pg.tools(), "memory__read_graph") && slices.Contains(pg.tools(), "files__read_text_file")
	})
	for _, n := range pg.tools() {
		if strings.HasPrefix(n, "files__") && !strings.HasPrefix(n, "files__read_") && !strings.HasPrefix(n, "files__list_") {
			t.Errorf("%s is outside the project's profile reading, but listed", n)
		}
	}

	// The client's profile notes: the project's reading cannot add files.
	pg = startProfileGateway(t, env, gw("--profile", "notes")...)
	pg.waitFor("memory's tools", func() bool { return slices.Contains(pg.tools(), "memory__read_graph") })
	if slices.ContainsFunc(pg.tools(), func(n string) bool { return strings.HasPrefix(n, "files__") }) {
		t.Errorf("the project's profile widened the client's notes: %v", pg.tools())
	}

	writeFile(t, filepath.Join(project, "capbroker.yaml"), "profile: nope\n")
	_, stderr, code := runEnv(t, env, append([]string{"gateway"}, gw()...)...)
	if code == 0 || !strings.Contains(stderr, filepath.Join(project, "capbroker.yaml")+`: profile: profile "nope" is not defined in `) {
		t.Errorf("an undefined profile in the project's capbroker.yaml: exit %d\n%s", code, stderr)
	}
	_, stderr, code = runEnv(t, env, append([]string{"gateway"}, gw("--profile", "nope")...)...)
	if code != 2 || !strings.Contains(stderr, `gateway --profile: profile "nope" is not defined in `+filepath.Join(dir, ".config", "capbroker", "profiles.json")+" (profiles: [both notes reading])") {
		t.Errorf("gateway --profile nope: exit %d\n%s", code, stderr)
	}
	writeFile(t, filepath.Join(project, "capbroker.yaml"), "")
	ids := filepath.Join(dir, "ids.yaml")
	writeFile(t, ids, "identities:\n  - name: ci\n    token_sha256: "+strings.Repeat("ab", 32)+"\n    profile: nope\n")
	_, stderr, code = runEnv(t, env, append([]string{"gateway"}, gw("--addr", "127.0.0.1:0", "--identities", ids)...)...)
	if code == 0 || !strings.Contains(stderr, "gateway --identities "+ids+`: identity ci: profile "nope" is not defined`) {
		t.Errorf("an identity naming an undefined profile: exit %d\n%s", code, stderr)
	}
}
