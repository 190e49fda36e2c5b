package trust

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/capbroker/capbroker/source/mcpconfig"
)

func server(t *testing.T, file, def string) mcpconfig.Server {
	t.Helper()
	s, _, err := mcpconfig.Parse(file, []byte(`{"mcpServers": {"x": `+def+`}}`), nil)
	if err != nil || len(s) != 1 {
		t.Fatalf("%v %v", s, err)
	}
	s[0].File = file
	return s[0]
}

func TestCheck(t *testing.T) {
	dir := t.TempDir()
	proj := filepath.Join(dir, "proj")
	mcpJSON := filepath.Join(proj, ".mcp.json")
	vscode := filepath.Join(proj, ".vscode", "mcp.json")
	st, err := OpenStore(filepath.Join(dir, "data"))
	if err != nil {
		t.Fatal(err)
	}
	a := server(t, mcpJSON, `{"command": "a"}`)
	a2 := server(t, mcpJSON, `{"command": "a", "args": ["--evil"]}`)
	reformatted := server(t, mcpJSON, "{ \"command\" :\n \"a\" // same\n}")
	v := server(t, vscode, `{"command": "a"}`)
	for _, tc := range []struct {
		name   string
		claude map[string]ClaudeProject
		store  bool
		srv    mcpconfig.Server
		ok     bool
		reason string
	}{
		{"nothing", nil, false, a, false, "not approved; review and approve it with capbroker approve --servers"},
		{"claude enabled", map[string]ClaudeProject{proj: {Enabled: []string{"x"}}}, false, a, true, ""},
		{"claude all", map[string]ClaudeProject{proj: {All: true}}, false, a, true, ""},
		{"claude other project", map[string]ClaudeProject{dir: {All: true}}, false, a, false, "not approved"},
		{"claude disabled wins", map[string]ClaudeProject{proj: {All: true, Disabled: []string{"x"}}}, true, a, false, "disabledMcpjsonServers"},
		{"claude approvals are for .mcp.json only", map[string]ClaudeProject{proj: {All: true}}, false, v, false, "not approved"},
		{"store", nil, true, a, true, ""},
		{"store, reformatted", nil, true, reformatted, true, ""},
		{"store, changed", nil, true, a2, false, "changed since it was approved"},
		{"store, another file", nil, true, v, false, "not approved"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			p := &Policy{Claude: tc.claude}
			if tc.store {
				p.Store = st
			}
			ok, reason := p.Check(tc.srv)
			if ok != tc.ok || !strings.Contains(reason, tc.reason) {
				t.Errorf("Check = %v %q, want %v %q", ok, reason, tc.ok, tc.reason)
			}
		})
		if tc.name == "claude approvals are for .mcp.json only" {
			if err := st.Approve([]mcpconfig.Server{a}, time.Now()); err != nil {
				t.Fatal(err)
			}
		}
	}
	// The store reads back, 0600, with no temporary file left.
	st2, err := OpenStore(filepath.Join(dir, "data"))
	if err != nil {
		t.Fatal(err)
	}
	if ok, _ := (&Policy{Store: st2}).Check(a); !ok {
		t.Error("the approval did not persist")
	}
	ents, _ := os.ReadDir(filepath.Join(dir, "data"))
	if len(ents) != 1 || ents[0].Name() != FileName {
		t.Errorf("data dir holds %v", ents)
	}
	if fi, _ := os.Stat(st2.Path()); fi.Mode().Perm() != 0o600 {
		t.Errorf("mode %v", fi.Mode())
	}
}

// TestCorruptStore: a store that cannot be parsed approves nothing and
// the error names the file and the fix.
func TestCorruptStore(t *testing.T) {
	dir := t.TempDir()
	os.WriteFile(filepath.Join(dir, FileName), []byte("{not json"), 0o600)
	st, err := OpenStore(dir)
	if err == nil || !strings.Contains(err.Error(), filepath.Join(dir, FileName)) || !strings.Contains(err.Error(), Fix) {
		t.Fatalf("err = %v", err)
	}
	if ok, _ := (&Policy{Store: st}).Check(server(t, "/p/.mcp.json", `{"command": "a"}`)); ok {
		t.Error("a corrupt store approved a server")
	}
}

func TestReadClaude(t *testing.T) {
	p := filepath.Join(t.TempDir(), ".claude.json")
	if m, err := ReadClaude(p); m != nil || err != nil {
		t.Fatalf("missing file: %v %v", m, err)
	}
	os.WriteFile(p, []byte(`{"numStartups": 1, "projects": {"/w": {"enabledMcpjsonServers": ["a"], "disabledMcpjsonServers": ["b"], "enableAllProjectMcpServers": false}}}`), 0o600)
	m, err := ReadClaude(p)
	if err != nil || len(m["/w"].Enabled) != 1 || m["/w"].Disabled[0] != "b" {
		t.Fatalf("%v %v", m, err)
	}
}
