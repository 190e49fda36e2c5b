package main

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/capbroker/capbroker/gateway"
	"github.com/capbroker/capbroker/internal/progress"
)

// runTerminal drives the CLI like runIO, with stderr taken for a terminal
// or not.
func runTerminal(t *testing.T, terminal bool, args ...string) (string, string, int) {
	t.Helper()
	home := t.TempDir()
	getenv := func(k string) string {
		switch k {
		case "HOME", "CAPBROKER_INDEX":
			return home
		case "CAPBROKER_RANKER":
			return "lexical"
		}
		return ""
	}
	var out, errb bytes.Buffer
	m := &Main{Stdin: strings.NewReader(""), Stdout: &out, Stderr: &errb, Getenv: getenv, StderrTerminal: terminal}
	code := m.ExitCode(m.Run(context.Background(), args))
	return out.String(), errb.String(), code
}

// TestProgress: embed and discovery show progress on stderr when it is a
// terminal, with counts and the current item, and nothing otherwise; the
// --json output on stdout is JSON either way.
func TestProgress(t *testing.T) {
	dir := t.TempDir()
	tools := filepath.Join(dir, "tools.json")
	var list []string
	for i := range 300 {
		list = append(list, fmt.Sprintf(`{"name":"tool_%d","description":"Tool number %d reads file %d.","inputSchema":{"type":"object"}}`, i, i, i))
	}
	os.WriteFile(tools, []byte("["+strings.Join(list, ",")+"]"), 0o644)
	for _, tt := range []struct {
		name string
		args []string
		want []string // on a terminal's stderr, in order
	}{
		{"embed", []string{"embed", "--json", "--tools", tools, "--db", filepath.Join(dir, "x.db")},
			[]string{"\r\033[Kembedding cards 0/300", "\r\033[Kembedding cards 300/300", "\r\033[K"}},
		{"discover", []string{"discover", "--json", "--no-index", "--tools", tools},
			[]string{"\r\033[Kdiscovering 1/1: ", "tools.json", "\r\033[K"}},
	} {
		t.Run(tt.name, func(t *testing.T) {
			for _, terminal := range []bool{true, false} {
				out, stderr, code := runTerminal(t, terminal, tt.args...)
				if code != 0 || !json.Valid([]byte(out)) {
					t.Fatalf("terminal %v: exit %d, stdout not JSON:\n%s\n%s", terminal, code, out, stderr)
				}
				if !terminal {
					if strings.ContainsAny(stderr, "\r\033") {
						t.Errorf("not a terminal, but stderr has progress: %q", stderr)
					}
					continue
				}
				rest := stderr
				for _, w := range tt.want {
					i := strings.Index(rest, w)
					if i < 0 {
						t.Fatalf("stderr lacks %q after the earlier parts: %q", w, stderr)
					}
					rest = rest[i+len(w):]
				}
			}
		})
	}
}

// TestShowStart: the gateway's start is shown with the upstreams done and
// one still starting, and the line is cleared once every one has started.
func TestShowStart(t *testing.T) {
	for _, tt := range []struct {
		sts     []gateway.Status
		done    int
		waiting string
	}{
		{nil, 0, ""},
		{[]gateway.Status{{Name: "a", Connected: true}, {Name: "b"}, {Name: "c", Error: "exit 1"}, {Name: "d"}}, 2, "b"},
		{[]gateway.Status{{Name: "a", Connected: true}, {Name: "c", Error: "exit 1"}}, 2, ""},
	} {
		if done, waiting := startCount(tt.sts); done != tt.done || waiting != tt.waiting {
			t.Errorf("startCount(%v) = %d, %q; want %d, %q", tt.sts, done, waiting, tt.done, tt.waiting)
		}
	}
	g, err := gateway.New(&gateway.Config{}, &gateway.Options{Logger: discardLogger()})
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	if err := g.Start(ctx); err != nil {
		t.Fatal(err)
	}
	defer g.Close()
	var b bytes.Buffer
	showStart(ctx, g, progress.New(&b, true), time.Millisecond)
	if !strings.HasPrefix(b.String(), "\r\033[Kconnecting MCP servers 0/0") || !strings.HasSuffix(b.String(), "\r\033[K") {
		t.Errorf("wrote %q", b.String())
	}
}
