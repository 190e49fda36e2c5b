package main

import (
	"encoding/json"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/capbroker/capbroker/internal/testenv"
	"github.com/capbroker/capbroker/trace"
)

type sessionJSON struct {
	ID            string   `json:"id"`
	Task          string   `json:"task"`
	ExposedTools  []string `json:"exposed_tools"`
	SelectedTools []string `json:"selected_tools"`
	Iterations    int      `json:"iterations"`
	FindCalls     int      `json:"find_capability_calls"`
	Missing       []string `json:"missing"`
	Find          *struct {
		Added   []string `json:"added"`
		Matches []struct {
			Name        string          `json:"name"`
			InputSchema json.RawMessage `json:"input_schema"`
		} `json:"matches"`
	} `json:"find"`
	Call *struct {
		Allowed     bool   `json:"allowed"`
		Error       string `json:"error"`
		Suggestions []struct {
			Name string `json:"name"`
		} `json:"suggestions"`
	} `json:"call"`
}

func decodeSession(t *testing.T, out string) sessionJSON {
	t.Helper()
	var s sessionJSON
	if err := json.Unmarshal([]byte(out), &s); err != nil {
		t.Fatalf("%v in %s", err, out)
	}
	return s
}

// testTools is a tool file of real-looking tools (the session tests' catalog).
func testTools(t *testing.T) string {
	return filepath.Join(testenv.Root(), "session", "testdata", "tools.json")
}

// TestSessionCommands runs a whole session through the CLI, each command a
// fresh Main (a fresh process as far as the store can tell), on SQLite and,
// when available, PostgreSQL.
func TestSessionCommands(t *testing.T) {
	dbs := []struct {
		name string
		db   func(t *testing.T) string
	}{
		{"sqlite", func(t *testing.T) string { return filepath.Join(t.TempDir(), "s.db") }},
		{"postgres", func(t *testing.T) string { return testenv.Postgres(t) }},
	}
	for _, tc := range dbs {
		t.Run(tc.name, func(t *testing.T) {
			db := tc.db(t)
			env := map[string]string{"CAPBROKER_DB": db}
			tools := testTools(t)
			run := func(args ...string) (string, string, int) {
				t.Helper()
				return runEnv(t, env, args...)
			}
			out, errOut, code := run("session", "start", "--json", "--tools", tools, "--max-iterations", "4", codingTaskCLI)
			if code != 0 {
				t.Fatalf("start: exit %d: %s", code, errOut)
			}
			s := decodeSession(t, out)
			if s.ID == "" || s.Task != codingTaskCLI || !slices.Contains(s.ExposedTools, "read_file") || slices.Contains(s.ExposedTools, "git_blame") {
				t.Fatalf("start: %+v", s)
			}

			out, errOut, code = run("session", "call", "--tools", tools, s.ID, "git_blame")
			if code != 1 || !strings.Contains(errOut, "find_capability") || !strings.Contains(errOut, `"git blame"`) {
				t.Errorf("call of an unexposed tool: exit %d, stderr %s", code, errOut)
			}

			out, errOut, code = run("session", "find", "--json", "--tools", tools, "-k", "2", s.ID, "who last changed a line of a file")
			if code != 0 {
				t.Fatalf("find: exit %d: %s", code, errOut)
			}
			f := decodeSession(t, out)
			if f.Find == nil || !slices.Contains(f.Find.Added, "git_blame") || len(f.Find.Matches[0].InputSchema) == 0 || f.Iterations != 2 {
				t.Fatalf("find: %s", out)
			}
			want := append(slices.Clone(s.ExposedTools), f.Find.Added...)
			if d := cmp.Diff(want, f.ExposedTools); d != "" {
				t.Errorf("exposed after find (-want +got):\n%s", d)
			}

			out, errOut, code = run("session", "call", "--json", "--tools", tools, s.ID, "git_blame")
			if code != 0 || !decodeSession(t, out).Call.Allowed {
				t.Errorf("call after the find: exit %d %s %s", code, out, errOut)
			}
			out, _, code = run("session", "call", "--json", "--tools", tools, s.ID, "reed_file")
			if c := decodeSession(t, out).Call; code != 1 || c.Allowed || len(c.Suggestions) == 0 || c.Suggestions[0].Name != "read_file" {
				t.Errorf("call of reed_file: exit %d %s", code, out)
			}
			// The budget (4) is spent: start is free, the rest used one each.
			_, errOut, code = run("session", "find", "--tools", tools, s.ID, "open a pull request")
			if code != 1 || !strings.Contains(errOut, "iteration budget exhausted") {
				t.Errorf("find past the budget: exit %d: %s", code, errOut)
			}

			out, _, code = run("session", "show", "--json", s.ID)
			if shown := decodeSession(t, out); code != 0 || !slices.Equal(shown.ExposedTools, f.ExposedTools) || shown.Iterations != 4 || shown.FindCalls != 1 {
				t.Errorf("show: exit %d %s", code, out)
			}
			out, _, code = run("session", "show", s.ID)
			if code != 0 || !strings.Contains(out, "git_blame") || !strings.Contains(out, "found") {
				t.Errorf("show text: exit %d\n%s", code, out)
			}

			// Resume against a catalog without git_blame: reported, kept.
			smaller := filepath.Join(t.TempDir(), "smaller.json")
			writeWithout(t, tools, smaller, "git_blame")
			out, errOut, code = run("session", "resume", "--json", "--tools", smaller, s.ID)
			r := decodeSession(t, out)
			if code != 0 || !slices.Equal(r.ExposedTools, f.ExposedTools) || !slices.Equal(r.Missing, []string{"git_blame"}) || !strings.Contains(errOut, "git_blame") {
				t.Errorf("resume with a smaller catalog: exit %d %s %s", code, out, errOut)
			}
			out, _, code = run("session", "resume", "--format", "anthropic", "--tools", tools, s.ID)
			if code != 0 || !strings.Contains(out, `"input_schema"`) || !strings.Contains(out, "git_blame") || !strings.Contains(out, "find_capability") {
				t.Errorf("resume --format anthropic: exit %d\n%s", code, out)
			}

			out, _, code = run("trace", "--json", "--session", s.ID)
			var recs []trace.Record
			if err := json.Unmarshal([]byte(out), &recs); err != nil || code != 0 {
				t.Fatalf("trace --json: exit %d, %v", code, err)
			}
			var got []trace.Kind
			for _, r := range recs {
				got = append(got, r.Kind)
			}
			wantKinds := []trace.Kind{"select", "call", "find", "call", "call", "find", "resume", "resume"}
			if d := cmp.Diff(wantKinds, got); d != "" {
				t.Errorf("trace kinds (-want +got):\n%s", d)
			}
			out, _, code = run("trace", "--session", s.ID, "--kind", "find")
			if code != 0 || !strings.Contains(out, "+git_blame") || !strings.Contains(out, "budget") {
				t.Errorf("trace text:\n%s", out)
			}
			path := filepath.Join(t.TempDir(), "out", "..", "t.jsonl")
			if _, errOut, code = run("trace", "--session", s.ID, "--export", path); code != 0 {
				t.Fatalf("export: %s", errOut)
			}
			fh, err := os.Open(path)
			if err != nil {
				t.Fatal(err)
			}
			defer fh.Close()
			back, err := trace.ReadJSONL(fh, path)
			if err != nil || len(back) != len(recs) {
				t.Errorf("export read back %d records (%v), want %d", len(back), err, len(recs))
			}

			out, _, code = run("session", "list", "--json")
			if code != 0 || !strings.Contains(out, s.ID) {
				t.Errorf("list: exit %d %s", code, out)
			}
		})
	}
}

const codingTaskCLI = "fix the failing test in parser.go"

func writeWithout(t *testing.T, from, to, name string) {
	t.Helper()
	data, err := os.ReadFile(from)
	if err != nil {
		t.Fatal(err)
	}
	var tools []map[string]any
	if err := json.Unmarshal(data, &tools); err != nil {
		t.Fatal(err)
	}
	tools = slices.DeleteFunc(tools, func(m map[string]any) bool { return m["name"] == name })
	data, _ = json.Marshal(tools)
	if err := os.WriteFile(to, data, 0o644); err != nil {
		t.Fatal(err)
	}
}

func TestSessionDefaultDB(t *testing.T) {
	data := t.TempDir()
	for _, tc := range []struct {
		env  map[string]string
		want string
	}{
		{map[string]string{"XDG_DATA_HOME": data, "HOME": "/nonexistent"}, filepath.Join(data, "capbroker", "capbroker.db")},
		{map[string]string{"HOME": data}, filepath.Join(data, ".local", "share", "capbroker", "capbroker.db")},
	} {
		out, errOut, code := runEnv(t, tc.env, "session", "start", "--json", "search the web for news")
		if code != 0 {
			t.Fatalf("exit %d: %s", code, errOut)
		}
		if _, err := os.Stat(tc.want); err != nil {
			t.Errorf("env %v: no database at %s: %v", tc.env, tc.want, err)
		}
		id := decodeSession(t, out).ID
		if out, _, code := runEnv(t, tc.env, "session", "show", id); code != 0 || !strings.Contains(out, id) {
			t.Errorf("show from the default database: exit %d", code)
		}
	}
}

func TestSessionErrors(t *testing.T) {
	env := map[string]string{"CAPBROKER_DB": filepath.Join(t.TempDir(), "e.db")}
	for _, tc := range []struct {
		args []string
		code int
		want string
	}{
		{[]string{"session", "start"}, 2, "a task in quotes"},
		{[]string{"session", "find", "only-id"}, 2, "a session ID and a query"},
		{[]string{"session", "show", "nope"}, 1, "session not found"},
		{[]string{"session", "find", "nope", "anything"}, 1, "session not found"},
		{[]string{"session", "start", "--max-iterations", "-3", "x"}, 2, "--max-iterations"},
		{[]string{"session", "resume", "--format", "xml", "nope"}, 2, "--format"},
		{[]string{"trace", "--kind", "dance"}, 2, "unknown trace kind"},
		{[]string{"trace", "--limit", "-1"}, 2, "--limit"},
		{[]string{"session", "list", "--db", "postgres://u:topsecret@127.0.0.1:1/x?connect_timeout=3"}, 1, "u:xxxxx@"},
	} {
		_, errOut, code := runEnv(t, env, tc.args...)
		if code != tc.code || !strings.Contains(errOut, tc.want) || strings.Contains(errOut, "topsecret") {
			t.Errorf("%v: exit %d, stderr %q; want exit %d and %q", tc.args, code, errOut, tc.code, tc.want)
		}
	}
	if _, errOut, code := runEnv(t, map[string]string{"HOME": ""}, "session", "list"); code != 2 || !strings.Contains(errOut, "--db") {
		t.Errorf("no data directory: exit %d %s", code, errOut)
	}
}
