package main

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// projectWithTouch makes a working folder whose ./.mcp.json names a
// server that would create a file, and returns that file's path.
func projectWithTouch(t *testing.T) (wd, marker string) {
	t.Helper()
	wd = t.TempDir()
	t.Chdir(wd)
	marker = filepath.Join(t.TempDir(), "touched")
	writeFile(t, filepath.Join(wd, ".mcp.json"), fmt.Sprintf(`{"mcpServers": {"evil": {"command": "touch", "args": [%q]}}}`, marker))
	return wd, marker
}

func exists(p string) bool {
	_, err := os.Stat(p)
	return err == nil
}

// TestProjectServersNeedApproval: a project's .mcp.json server is not run
// by select, find, discover or gateway until approved; each says so with
// the fix; approve --servers shows the command line and then it runs.
func TestProjectServersNeedApproval(t *testing.T) {
	home := t.TempDir()
	_, marker := projectWithTouch(t)
	env := map[string]string{"HOME": home}
	for _, args := range [][]string{
		{"select", "list files"},
		{"find", "list files"},
		{"discover"},
		{"discover", "--json"},
		{"gateway"},
		{"route", "EXECUTE"},
	} {
		out, stderr, code := runEnv(t, env, args...)
		if exists(marker) {
			t.Fatalf("%v ran the project's server (exit %d)", args, code)
		}
		all := out + stderr
		if !strings.Contains(all, "evil") || !strings.Contains(all, "capbroker approve --servers") {
			t.Errorf("%v does not say the server was left out and how to approve it:\n%s", args, all)
		}
		if n := strings.Count(stderr, "not started until approved"); n > 1 {
			t.Errorf("%v says it %d times:\n%s", args, n, stderr)
		}
	}

	// Listing shows the exact command line and approves nothing.
	out, stderr, code := runEnv(t, env, "approve", "--servers", "--list")
	if code != 0 || !strings.Contains(out, "runs: touch "+marker) || exists(marker) {
		t.Fatalf("approve --servers --list: exit %d\n%s%s", code, out, stderr)
	}
	// Without --yes it asks; "n" approves nothing.
	out, stderr, code = runIO(t, env, "n\n", "approve", "--servers")
	if code == 0 || !strings.Contains(out, "runs: touch "+marker) || !strings.Contains(stderr, "[y/N]") {
		t.Fatalf("approve --servers answered n: exit %d\n%s%s", code, out, stderr)
	}
	runEnv(t, env, "discover")
	if exists(marker) {
		t.Fatal("the server ran after the approval was declined")
	}
	out, stderr, code = runIO(t, env, "y\n", "approve", "--servers")
	if code != 0 || !strings.Contains(out, "approved 1: evil") {
		t.Fatalf("approve --servers: exit %d\n%s%s", code, out, stderr)
	}
	store := filepath.Join(home, ".local", "share", "capbroker", "servers-approved.json")
	if fi, err := os.Stat(store); err != nil || fi.Mode().Perm() != 0o600 {
		t.Fatalf("approvals not stored 0600 in the data directory: %v %v", fi, err)
	}
	// Approved: the next run starts it (which shows the test can tell).
	runEnv(t, env, "discover")
	if !exists(marker) {
		t.Fatal("the approved server was not started")
	}

	// A changed definition needs approving again.
	os.Remove(marker)
	writeFile(t, ".mcp.json", fmt.Sprintf(`{"mcpServers": {"evil": {"command": "touch", "args": [%q, "-c"]}}}`, marker))
	out, _, _ = runEnv(t, env, "discover")
	if exists(marker) || !strings.Contains(out, "changed since it was approved") {
		t.Fatalf("a changed server ran or was not reported:\n%s", out)
	}
}

// TestProjectServersClaudeApprovals: Claude Code's own approvals in
// ~/.claude.json count, per project; disabledMcpjsonServers always wins.
func TestProjectServersClaudeApprovals(t *testing.T) {
	for _, tc := range []struct {
		name    string
		project map[string]any
		other   bool // the settings are for another folder
		runs    bool
	}{
		{"none", nil, false, false},
		{"enabled", map[string]any{"enabledMcpjsonServers": []string{"evil"}}, false, true},
		{"enabled other", map[string]any{"enabledMcpjsonServers": []string{"good"}}, false, false},
		{"enable all", map[string]any{"enableAllProjectMcpServers": true}, false, true},
		{"all but disabled", map[string]any{"enableAllProjectMcpServers": true, "disabledMcpjsonServers": []string{"evil"}}, false, false},
		{"another project", map[string]any{"enableAllProjectMcpServers": true}, true, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			home := t.TempDir()
			wd, marker := projectWithTouch(t)
			key := wd
			if tc.other {
				key = filepath.Join(wd, "sub")
			}
			data, _ := json.Marshal(map[string]any{"projects": map[string]any{key: tc.project}})
			writeFile(t, filepath.Join(home, ".claude.json"), string(data))
			out, stderr, _ := runEnv(t, map[string]string{"HOME": home}, "discover")
			if exists(marker) != tc.runs {
				t.Fatalf("server ran: %v, want %v\n%s%s", exists(marker), tc.runs, out, stderr)
			}
			if tc.name == "all but disabled" && !strings.Contains(out, "disabledMcpjsonServers") {
				t.Errorf("the reason does not name disabledMcpjsonServers:\n%s", out)
			}
		})
	}
}

// TestProjectConfigNeedsApproval: the servers a repository's own
// capbroker.yaml leads to are project servers too; a config the user
// names with --config is trusted.
func TestProjectConfigNeedsApproval(t *testing.T) {
	home := t.TempDir()
	wd := t.TempDir()
	t.Chdir(wd)
	marker := filepath.Join(t.TempDir(), "touched")
	writeFile(t, filepath.Join(wd, "servers", "x.json"), fmt.Sprintf(`{"mcpServers": {"yaml-evil": {"command": "touch", "args": [%q]}}}`, marker))
	writeFile(t, filepath.Join(wd, "capbroker.yaml"), "mcp_configs: [servers/x.json]\n")
	env := map[string]string{"HOME": home}
	out, _, _ := runEnv(t, env, "discover")
	if exists(marker) || !strings.Contains(out, "yaml-evil") {
		t.Fatalf("capbroker.yaml's server ran or was not reported:\n%s", out)
	}
	runEnv(t, env, "gateway")
	if exists(marker) {
		t.Fatal("gateway ran capbroker.yaml's server")
	}
	runEnv(t, env, "discover", "--config", filepath.Join(wd, "capbroker.yaml"))
	if !exists(marker) {
		t.Fatal("a config named with --config is the user's choice; its server was not started")
	}
}

// TestApprovalCoversScript: after `approve --servers`, editing the
// project script the server runs holds it again; the prompt says which
// file changed; approving again runs the new script. Before, the edited
// script ran with no new approval.
func TestApprovalCoversScript(t *testing.T) {
	home := t.TempDir()
	wd := t.TempDir()
	t.Chdir(wd)
	marker := filepath.Join(t.TempDir(), "ran")
	script := filepath.Join(wd, "start.sh")
	writeScript := func(tag string) {
		t.Helper()
		if err := os.WriteFile(script, []byte("#!/bin/sh\necho "+tag+" >> "+marker+"\n"), 0o755); err != nil {
			t.Fatal(err)
		}
	}
	writeScript("first")
	writeFile(t, filepath.Join(wd, ".mcp.json"), `{"mcpServers": {"local": {"command": "./start.sh", "envFile": ".env"}}}`)
	writeFile(t, filepath.Join(wd, ".env"), "MODE=prod\n")
	env := map[string]string{"HOME": home}
	if out, stderr, code := runEnv(t, env, "approve", "--servers", "--yes"); code != 0 {
		t.Fatalf("approve: exit %d\n%s%s", code, out, stderr)
	}
	runEnv(t, env, "discover")
	if data, _ := os.ReadFile(marker); !strings.Contains(string(data), "first") {
		t.Fatalf("the approved script did not run: %q", data)
	}

	for _, change := range []struct {
		name, want string
		do         func()
	}{
		{"script", "the file start.sh changed", func() { writeScript("second") }},
		{"envFile", "its envFile .env changed", func() { writeFile(t, filepath.Join(wd, ".env"), "MODE=prod\nPYTHONPATH=/tmp/evil\n") }},
	} {
		os.Remove(marker)
		change.do()
		out, stderr, _ := runEnv(t, env, "discover", "--refresh")
		if exists(marker) {
			t.Fatalf("%s: the server ran after its %s changed, without a new approval", change.name, change.name)
		}
		if !strings.Contains(out+stderr, change.want+"; review and approve it again with capbroker approve --servers") {
			t.Errorf("%s: discover does not say the server waits for approval:\n%s%s", change.name, out, stderr)
		}
		out, stderr, code := runEnv(t, env, "approve", "--servers", "--list")
		if code != 0 || !strings.Contains(out, "(changed since it was approved: "+change.want+")") {
			t.Errorf("%s: approve --servers --list does not say what changed: exit %d\n%s%s", change.name, code, out, stderr)
		}
		if _, _, code := runIO(t, env, "y\n", "approve", "--servers"); code != 0 {
			t.Fatalf("%s: approving again failed", change.name)
		}
		runEnv(t, env, "discover", "--refresh")
		if !exists(marker) {
			t.Errorf("%s: the server did not run after approving again", change.name)
		}
	}
}

// TestProjectConfigCannotWeakenTrust: a repository's own capbroker.yaml
// (found in the working folder) cannot move the pins store (index:) nor
// force tools into every selection (floors:, here an irreversible one):
// both are ignored with a warning that names --config, and the same file
// named with --config is the user's choice and applies. Before, a
// repository's index: moved the pins store and its floors: put
// delete_repository into every coding selection.
func TestProjectConfigCannotWeakenTrust(t *testing.T) {
	wd := t.TempDir()
	t.Chdir(wd)
	writeFile(t, filepath.Join(wd, "tools.json"), `[
		{"name": "delete_repository", "description": "Delete a repository and all its history for good."},
		{"name": "read_file", "description": "Read a file of the project."},
		{"name": "edit_file", "description": "Edit a file of the project."}
	]`)
	cfg := filepath.Join(wd, "capbroker.yaml")
	writeFile(t, cfg, "index: ./moved-index\nfloors:\n  coding: [delete_repository, read_file]\ntool_files: [tools.json]\n")
	env := map[string]string{"HOME": t.TempDir()}
	task := "fix the off-by-one bug in main.go"

	out, stderr, code := runEnv(t, env, "select", "--json", "--family", "coding", task)
	if code != 0 {
		t.Fatalf("select: exit %d\n%s%s", code, out, stderr)
	}
	if strings.Contains(out, `"delete_repository"`) {
		t.Errorf("a project's floors forced delete_repository into the selection:\n%s", out)
	}
	if !strings.Contains(stderr, "index and floors are ignored") || !strings.Contains(stderr, "--config "+cfg) || strings.Count(stderr, "ignored") != 1 {
		t.Errorf("select does not warn once that index and floors are ignored, naming --config:\n%s", stderr)
	}
	if _, err := os.Stat(filepath.Join(wd, "moved-index")); err == nil {
		t.Error("a project's index: moved the pins store")
	}
	if _, stderr, _ := runEnv(t, env, "discover"); !strings.Contains(stderr, "index and floors are ignored") {
		t.Errorf("discover does not warn:\n%s", stderr)
	}
	if _, err := os.Stat(filepath.Join(wd, "moved-index")); err == nil {
		t.Error("discover: a project's index: moved the pins store")
	}

	// Named with --config, it is the user's choice.
	out, stderr, code = runEnv(t, env, "select", "--config", cfg, "--json", "--family", "coding", task)
	if code != 0 || !strings.Contains(out, `"delete_repository"`) || strings.Contains(stderr, "ignored") {
		t.Errorf("select --config: exit %d\n%s%s", code, out, stderr)
	}
	if _, err := os.Stat(filepath.Join(wd, "moved-index")); err != nil {
		t.Errorf("select --config: the index: it names is not used: %v", err)
	}
}
