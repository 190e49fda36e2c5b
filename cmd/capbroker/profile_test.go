package main

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestProfileCommands defines, lists, shows, replaces and removes named
// profiles: the profiles file stays 0600 in a 0700 folder, keeps its
// order and comments, and every bad input is refused saying what, with
// nothing written.
func TestProfileCommands(t *testing.T) {
	home := t.TempDir()
	env := map[string]string{"HOME": home}
	file := filepath.Join(home, ".config", "capbroker", "profiles.json")
	writeFile(t, filepath.Join(home, ".claude.json"), `{"mcpServers": {"github": {"command": "github-mcp-server"}}}`)
	run := func(wantCode int, args ...string) (string, string) {
		t.Helper()
		out, stderr, code := runEnv(t, env, append([]string{"profile"}, args...)...)
		if code != wantCode {
			t.Fatalf("profile %v: exit %d, want %d\n%s\n%s", args, code, wantCode, out, stderr)
		}
		return out, stderr
	}

	if _, stderr := run(0, "add", "review", "--server", "github", "--deny", "*delete*", "--always", "github__get_pull_request"); strings.Contains(stderr, "warning") {
		t.Errorf("add review (github is in ~/.claude.json) warns: %s", stderr)
	}
	// memory is defined nowhere: written, with a warning naming it.
	if _, stderr := run(0, "add", "notes", "--server", "memory", "--always", "memory__read_graph"); !strings.Contains(stderr, "warning: profile notes names servers defined in no place capbroker reads: memory") {
		t.Errorf("add notes (memory is defined nowhere): stderr %q, want a warning naming memory", stderr)
	}
	st, err := os.Stat(file)
	if err != nil || st.Mode().Perm() != 0o600 {
		t.Fatalf("profiles file: %v %v, want 0600", st, err)
	}
	if dst, _ := os.Stat(filepath.Dir(file)); dst.Mode().Perm() != 0o700 {
		t.Errorf("profiles folder: %v, want 0700", dst.Mode().Perm())
	}
	out, _ := run(0, "list")
	for _, want := range []string{
		"notes    memory   all    -         memory__read_graph",
		"review   github   all    *delete*  github__get_pull_request",
		"2 profiles in " + file,
	} {
		if !strings.Contains(out, want) {
			t.Errorf("list lacks %q:\n%s", want, out)
		}
	}
	var rows []profileRow
	out, _ = run(0, "list", "--json")
	if err := json.Unmarshal([]byte(out), &rows); err != nil || len(rows) != 2 || rows[1].Name != "review" || rows[1].Deny[0] != "*delete*" {
		t.Errorf("list --json: %v %s", err, out)
	}
	out, _ = run(0, "show", "notes")
	if !strings.Contains(out, "servers: memory") || !strings.Contains(out, "not defined in any place capbroker reads: memory") {
		t.Errorf("show notes (memory is defined nowhere):\n%s", out)
	}
	out, _ = run(0, "show", "review")
	if strings.Contains(out, "not defined") {
		t.Errorf("show review (github is in ~/.claude.json):\n%s", out)
	}

	// A comment the user wrote stays, and so does the order.
	data, _ := os.ReadFile(file)
	edited := strings.Replace(string(data), "{", "{\n  // my profiles", 1)
	os.WriteFile(file, []byte(edited), 0o600)
	run(0, "add", "review", "--server", "github", "--allow", "github__get_*", "--replace")
	data, _ = os.ReadFile(file)
	if !strings.Contains(string(data), "// my profiles") || strings.Index(string(data), `"review"`) > strings.Index(string(data), `"notes"`) {
		t.Errorf("replace lost the comment or the order:\n%s", data)
	}
	if strings.Contains(string(data), "*delete*") || !strings.Contains(string(data), "github__get_*") {
		t.Errorf("replace did not replace:\n%s", data)
	}

	before, _ := os.ReadFile(file)
	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"add", "review", "--server", "github"}, "already defines profile review; remove it first, or add --replace"},
		{[]string{"add", "bad name", "--server", "x"}, `profile "bad name": a profile name is 1-64 letters`},
		{[]string{"add", "x", "--allow", "["}, `profile add x: tool pattern "[": syntax error in pattern`},
		{[]string{"add", "x"}, "give --server, --allow, --deny or --always"},
		{[]string{"show", "nope"}, `profile "nope" is not defined in ` + file + " (profiles: [notes review])"},
		{[]string{"remove", "nope"}, file + " defines no profile nope"},
	} {
		_, stderr := run(map[bool]int{true: 2, false: 1}[strings.Contains(tc.want, "give --") || strings.Contains(tc.want, "1-64") || strings.Contains(tc.want, "syntax")], tc.args...)
		if !strings.Contains(stderr, tc.want) {
			t.Errorf("profile %v: stderr lacks %q:\n%s", tc.args, tc.want, stderr)
		}
	}
	if after, _ := os.ReadFile(file); string(after) != string(before) {
		t.Errorf("a refused command changed the file:\n%s", after)
	}

	run(0, "remove", "notes")
	out, _ = run(0, "list")
	if strings.Contains(out, "notes") || !strings.Contains(out, "1 profiles in") {
		t.Errorf("after remove:\n%s", out)
	}
	// A profiles file that does not parse is an error naming it.
	os.WriteFile(file, []byte(`{"profiles": {"x": {"servers": "github"}}}`), 0o600)
	if _, stderr := run(1, "list"); !strings.Contains(stderr, file+": profile x") {
		t.Errorf("a bad profiles file: %s", stderr)
	}
}

// TestClientAddProfile: client add --profile writes an entry whose
// gateway serves only that profile (gateway --profile NAME; ?profile=NAME
// on the shared gateway's URL); a profile not defined is refused with
// nothing written.
func TestClientAddProfile(t *testing.T) {
	bin := fakeCapbroker(t)
	home := t.TempDir()
	claudeJSON := filepath.Join(home, ".claude.json")
	orig := `{"mcpServers": {"web": {"type": "http", "url": "https://example.com/mcp"}}}`
	writeFile(t, claudeJSON, orig)
	env := map[string]string{"HOME": home, "PATH": filepath.Dir(bin)}
	_, stderr, code := runEnv(t, env, "client", "add", "claude-code", "--command", bin, "--profile", "review")
	if code == 0 || !strings.Contains(stderr, `client add --profile: profile "review" is not defined`) || !strings.Contains(stderr, "nothing written") {
		t.Fatalf("an undefined profile: exit %d\n%s", code, stderr)
	}
	if now, _ := os.ReadFile(claudeJSON); string(now) != orig {
		t.Fatalf("refused, but ~/.claude.json changed:\n%s", now)
	}
	if _, stderr, code := runEnv(t, env, "profile", "add", "review", "--server", "web"); code != 0 {
		t.Fatal(stderr)
	}
	entry := func() map[string]any {
		t.Helper()
		var doc struct {
			MCPServers map[string]map[string]any `json:"mcpServers"`
		}
		data, _ := os.ReadFile(claudeJSON)
		if err := json.Unmarshal(data, &doc); err != nil {
			t.Fatal(err)
		}
		return doc.MCPServers["capbroker"]
	}
	if out, stderr, code := runEnv(t, env, "client", "add", "claude-code", "--command", bin, "--profile", "review"); code != 0 {
		t.Fatalf("exit %d\n%s\n%s", code, out, stderr)
	}
	args, _ := json.Marshal(entry()["args"])
	if !strings.Contains(string(args), `"gateway","--client","claude-code","--profile","review","--mcp-config"`) {
		t.Errorf("the gateway entry's args: %s", args)
	}
	// Again without --profile: the entry serves everything again.
	runEnv(t, env, "client", "add", "claude-code", "--command", bin)
	if args, _ := json.Marshal(entry()["args"]); strings.Contains(string(args), "--profile") {
		t.Errorf("add without --profile kept it: %s", args)
	}
	if out, stderr, code := runEnv(t, env, "client", "add", "claude-code", "--shared", "--profile", "review"); code != 0 {
		t.Fatalf("--shared: exit %d\n%s\n%s", code, out, stderr)
	}
	if u := entry()["url"]; u != "http://127.0.0.1:8931/mcp?client=claude-code&profile=review" {
		t.Errorf("--shared --profile: url %v", u)
	}
}
