package gateway

import (
	"encoding/json"
	"net/http"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/capbroker/capbroker/policy"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// TestClientPerSession: one gateway over HTTP, started without --client,
// in front of the real npm filesystem server, serves sessions of two
// kinds at once: one opened as claude-code (?client=, or the header)
// gets no MCP coding floor, and write_file passes through (found as a
// match, called, the file written); one opened bare keeps the gateway's
// gate: the coding floor is listed, write_file is held, found under held
// and refused. An unknown kind is refused with 400 naming the known ones.
func TestClientPerSession(t *testing.T) {
	if testing.Short() {
		t.Skip("starts a Node.js server")
	}
	d := deps{t}
	dir := t.TempDir()
	g := startGateway(t, []ServerConfig{{Name: "filesystem", Command: d.npmBin("mcp-server-filesystem"), Args: []string{dir}}},
		&Options{Mode: ModeAuto, StartTimeout: time.Minute})
	url := serveHTTP(t, g, nil)
	bare := connect(t, url, nil, nil)
	kinds := map[string]*mcp.ClientSession{
		"?client=claude-code": connect(t, url+"?client=claude-code", nil, nil),
		ClientHeader:          connect(t, url, nil, map[string]string{ClientHeader: "claude-code"}),
	}

	floor := []string{"filesystem__list_directory", "filesystem__read_text_file"}
	if got := listNames(t, bare); !slices.Contains(got, floor[0]) || !slices.Contains(got, floor[1]) {
		t.Errorf("the bare session's first list %v lacks the coding floor %v", got, floor)
	}
	write := map[string]any{"path": filepath.Join(dir, "out.txt"), "content": "written"}
	for how, cs := range kinds {
		if got := listNames(t, cs); slices.Contains(got, floor[0]) || slices.Contains(got, floor[1]) {
			t.Errorf("%s: the first list %v has the MCP coding floor (Claude Code has file tools of its own)", how, got)
		}
		ans := findAnswerOf(t, cs, "write a file")
		if !slices.ContainsFunc(ans.Matches, func(f found) bool { return f.Name == "filesystem__write_file" }) || len(ans.Held) > 0 {
			t.Errorf("%s: find write a file: %+v, want write_file a match, nothing held", how, ans)
		}
		os.Remove(write["path"].(string))
		if text, isErr := callText(t, cs, "filesystem__write_file", write); isErr {
			t.Errorf("%s: write_file refused: %s", how, text)
		} else if b, err := os.ReadFile(write["path"].(string)); err != nil || string(b) != "written" {
			t.Errorf("%s: write_file ran, but the file holds %q (%v)", how, b, err)
		}
	}

	ans := findAnswerOf(t, bare, "write a file")
	if slices.ContainsFunc(ans.Matches, func(f found) bool { return f.Name == "filesystem__write_file" }) ||
		!slices.ContainsFunc(ans.Held, func(h heldFound) bool { return h.Name == "filesystem__write_file" && h.Held == HeldIrreversible }) {
		t.Errorf("the bare session's find: %+v, want write_file held as irreversible", ans)
	}
	os.Remove(write["path"].(string))
	if text, isErr := callText(t, bare, "filesystem__write_file", write); !isErr || !strings.Contains(text, "held back") {
		t.Errorf("the bare session called write_file: %v %q, want it held", isErr, text)
	}
	if _, err := os.Stat(write["path"].(string)); err == nil {
		t.Error("the bare session's held write_file wrote the file")
	}

	init := `{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"raw","version":"1"}}}`
	for _, c := range []struct {
		url     string
		headers map[string]string
	}{{url + "?client=nope", nil}, {url, map[string]string{ClientHeader: "nope"}}} {
		res, body := post(t, c.url, c.headers, init)
		if res.StatusCode != http.StatusBadRequest || !strings.Contains(body, `unknown client "nope" (want claude-code, claude-desktop, cursor, vscode)`) {
			t.Errorf("an unknown client kind (%s %v): %s %s", c.url, c.headers, res.Status, body)
		}
	}
}

// findAnswerOf calls find_capability and decodes its answer.
func findAnswerOf(t *testing.T, cs *mcp.ClientSession, query string) findAnswer {
	t.Helper()
	text, isErr := callText(t, cs, policy.HatchName, map[string]any{"query": query})
	var ans findAnswer
	if err := json.Unmarshal([]byte(text), &ans); isErr || err != nil {
		t.Fatalf("find_capability(%q): %v %s", query, err, text)
	}
	return ans
}

// TestFleetClientKind: a session opened as claude-code on one replica is
// served as claude-code by another, which rebuilds it from the database
// though its requests no longer name the kind: alpha's irreversible
// delete_all stays a match there, and runs; a bare session is held.
func TestFleetClientKind(t *testing.T) {
	for _, db := range persistentStores {
		t.Run(db.name, func(t *testing.T) {
			open := db.db(t)
			replica := func() string {
				st := open()
				t.Cleanup(func() { st.Close() })
				ss := NewStoreSessions(st, &StoreOptions{Task: "fleet test"})
				t.Cleanup(func() { ss.Close() })
				g := startGateway(t, []ServerConfig{testServer("alpha")}, &Options{Mode: ModeAuto, Family: policy.General, Store: ss, Trace: ss})
				return serveHTTP(t, g, nil)
			}
			urlA, urlB := replica(), replica()
			b := &balancer{headers: map[string]string{ClientHeader: "claude-code"}}
			b.to(urlA)
			cs := connectVia(t, b)
			b.mu.Lock()
			b.headers = nil
			b.mu.Unlock()
			matched := func(ans findAnswer) bool {
				return slices.ContainsFunc(ans.Matches, func(f found) bool { return f.Name == "alpha__delete_all" })
			}
			if ans := findAnswerOf(t, cs, "delete every record"); !matched(ans) {
				t.Fatalf("claude-code on the first replica: %+v", ans)
			}
			b.to(urlB)
			if ans := findAnswerOf(t, cs, "delete every record"); !matched(ans) || len(ans.Held) > 0 {
				t.Errorf("claude-code on the second replica: %+v", ans)
			}
			if text, isErr := callText(t, cs, "alpha__delete_all", nil); isErr || text != "deleted" {
				t.Errorf("delete_all on the second replica: %v %q", isErr, text)
			}
			bare := connectVia(t, &balancer{host: strings.TrimSuffix(strings.TrimPrefix(urlB, "http://"), "/mcp")})
			if ans := findAnswerOf(t, bare, "delete every record"); matched(ans) || len(ans.Held) == 0 {
				t.Errorf("a bare session: %+v, want delete_all held", ans)
			}
		})
	}
}
