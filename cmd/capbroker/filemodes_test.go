package main

import (
	"context"
	"encoding/json"
	"io/fs"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"syscall"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// TestDataFilesPrivate: the session database (with its -wal and -shm
// files), the index and pins, and the route cache and gap log are
// readable by the user only (0600, their new folders 0700), even under a
// umask of 022, and a database left 0644 by an older version is made
// 0600 when opened. Before, the database was 0644 and other local users
// read every task and trace.
func TestDataFilesPrivate(t *testing.T) {
	old := syscall.Umask(0o022)
	defer syscall.Umask(old)
	srv := httptest.NewServer(mcp.NewStreamableHTTPHandler(func(*http.Request) *mcp.Server {
		s := mcp.NewServer(&mcp.Implementation{Name: "weather", Version: "1"}, nil)
		s.AddTool(&mcp.Tool{Name: "forecast", Description: "Look up the weather forecast for a city.",
			InputSchema: json.RawMessage(`{"type":"object","properties":{"city":{"type":"string"}}}`)},
			func(context.Context, *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
				return &mcp.CallToolResult{}, nil
			})
		return s
	}, nil))
	defer srv.Close()
	home := t.TempDir()
	cache, data := filepath.Join(home, "cache"), filepath.Join(home, "data")
	cfg := filepath.Join(home, "mcp.json")
	writeFile(t, cfg, `{"mcpServers":{"weather":{"type":"http","url":"`+srv.URL+`"}}}`)
	env := map[string]string{"HOME": home, "XDG_CACHE_HOME": cache, "XDG_DATA_HOME": data}
	proj := pythonProject(t)
	for _, args := range [][]string{
		{"select", "--mcp-config", cfg, "weather forecast for Paris"},
		{"route", "--root", routingRoot(t, "more"), "--project", proj, "--state", "none", "--phase", "DISCUSS", "gather the requirements"},
		{"session", "start", "--tools", testTools(t), "--id", "s1", "list the files of a folder"},
	} {
		if out, stderr, code := runEnv(t, env, args...); code != 0 {
			t.Fatalf("%v: exit %d\n%s%s", args, code, out, stderr)
		}
	}
	db := filepath.Join(data, "capbroker", "capbroker.db")
	want := []string{db, filepath.Join(cache, "capbroker", "index.bin"), filepath.Join(cache, "capbroker", "pins.json"), filepath.Join(cache, "capbroker", "route-gaps.json")}
	for _, p := range want {
		if _, err := os.Stat(p); err != nil {
			t.Errorf("expected file: %v", err)
		}
	}
	check := func() {
		t.Helper()
		for _, root := range []string{cache, data} {
			filepath.WalkDir(root, func(p string, d fs.DirEntry, err error) error {
				if err != nil {
					t.Error(err)
					return nil
				}
				fi, _ := d.Info()
				switch {
				case d.IsDir() && fi.Mode().Perm()&0o077 != 0:
					t.Errorf("folder %s is %v, want 0700", p, fi.Mode().Perm())
				case !d.IsDir() && fi.Mode().Perm()&0o077 != 0:
					t.Errorf("%s is %v, want 0600", p, fi.Mode().Perm())
				}
				return nil
			})
		}
	}
	check()
	// A database made 0644 before (an older capbroker) is made private.
	for _, p := range []string{db, db + "-wal", db + "-shm"} {
		os.Chmod(p, 0o644)
	}
	if out, stderr, code := runEnv(t, env, "session", "list"); code != 0 {
		t.Fatalf("session list: exit %d\n%s%s", code, out, stderr)
	}
	check()
}
