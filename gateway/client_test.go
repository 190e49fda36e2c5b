package gateway

import (
	"slices"
	"strings"
	"testing"

	"github.com/capbroker/capbroker/policy"
)

// fileServer is a test server with MCP file tools, one of them deprecated
// in favour of a sibling, and one tool that asks to be always loaded.
func fileServer(name string) ServerConfig {
	s := testServer(name)
	s.Env[testServerEnv+"_EXTRA"] = `[
		{"name":"read_file","description":"Read the complete contents of a file as text. DEPRECATED: Use read_text_file instead."},
		{"name":"read_text_file","description":"Read the complete contents of a file as text."},
		{"name":"write_file","description":"Create a new file or overwrite an existing file with new content."},
		{"name":"list_directory","description":"List the files and folders in a directory."},
		{"name":"project_status","description":"Say how the project stands.","meta":{"anthropic/alwaysLoad":true}}]`
	return s
}

// TestClientProfiles: a gateway serving a client that asks its user
// before each call (--client claude-code) passes irreversible tools
// through, without holding or asking; a client with file tools of its
// own gets no MCP coding floor unless pinned; elsewhere the gate holds
// and the floor prefers a deprecated tool's named successor.
func TestClientProfiles(t *testing.T) {
	t.Run("default", func(t *testing.T) {
		g := startGateway(t, []ServerConfig{fileServer("fs")}, &Options{Mode: ModeSearch, Family: policy.Coding})
		cs := connect(t, serveHTTP(t, g, nil), nil, nil)
		listed := listNames(t, cs)
		for _, want := range []string{"fs__read_text_file", "fs__write_file", "fs__project_status"} {
			if !slices.Contains(listed, want) {
				t.Errorf("first list %v lacks %s", listed, want)
			}
		}
		if slices.Contains(listed, "fs__read_file") {
			t.Errorf("first list %v has the deprecated fs__read_file", listed)
		}
		text, isErr := callText(t, cs, "fs__delete_all", nil)
		if !isErr || !strings.Contains(text, "--allow-irreversible") || !strings.Contains(text, "--client") {
			t.Errorf("irreversible call without a client that asks: isError=%v %q, want it held, naming the flags", isErr, text)
		}
	})
	t.Run("claude-code", func(t *testing.T) {
		g := startGateway(t, []ServerConfig{fileServer("fs")}, &Options{Mode: ModeSearch, Family: policy.Coding, Client: "claude-code"})
		cs := connect(t, serveHTTP(t, g, nil), nil, nil) // no elicitation: the gateway could not ask
		listed := listNames(t, cs)
		for _, n := range []string{"fs__read_text_file", "fs__write_file", "fs__list_directory"} {
			if slices.Contains(listed, n) {
				t.Errorf("first list %v has the MCP file tool %s, for a client with its own", listed, n)
			}
		}
		if !slices.Contains(listed, "fs__project_status") {
			t.Errorf("first list %v lacks fs__project_status (_meta anthropic/alwaysLoad)", listed)
		}
		text, isErr := callText(t, cs, "fs__delete_all", nil)
		if isErr {
			t.Errorf("irreversible call through claude-code: %q, want it run (claude-code asks its user)", text)
		}
	})
	t.Run("pins", func(t *testing.T) {
		other := testServer("other")
		other.AlwaysLoad = true
		g := startGateway(t, []ServerConfig{fileServer("fs"), other}, &Options{Mode: ModeSearch, Family: policy.Coding,
			Client: "claude-code", Always: []string{"fs__write_file", "read_text_file"}})
		listed := listNames(t, connect(t, serveHTTP(t, g, nil), nil, nil))
		for _, want := range []string{"fs__write_file", "fs__read_text_file", "other__echo", "other__pid"} {
			if !slices.Contains(listed, want) {
				t.Errorf("first list %v lacks pinned %s", listed, want)
			}
		}
	})
}
