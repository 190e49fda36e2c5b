package main

import (
	"encoding/json"
	"fmt"
	"path/filepath"
	"strings"
	"testing"

	"github.com/capbroker/capbroker/httpapi"
	"github.com/capbroker/capbroker/internal/apischema"
)

// nulls returns the JSON paths in v that hold null.
func nulls(v any, at string) []string {
	switch v := v.(type) {
	case nil:
		return []string{at}
	case map[string]any:
		var out []string
		for k, e := range v {
			out = append(out, nulls(e, at+"."+k)...)
		}
		return out
	case []any:
		var out []string
		for i, e := range v {
			out = append(out, nulls(e, fmt.Sprintf("%s[%d]", at, i))...)
		}
		return out
	}
	return nil
}

// TestJSONEmptyIsArray: what --json prints for empty results has [] for
// every empty list, never null, and is what /openapi.json says (the HTTP
// API's schemas, which the CLI's JSON shares).
func TestJSONEmptyIsArray(t *testing.T) {
	c, err := apischema.New(httpapi.OpenAPI())
	if err != nil {
		t.Fatal(err)
	}
	env := map[string]string{"CAPBROKER_DB": filepath.Join(t.TempDir(), "sessions.db")}
	emptyRoot := t.TempDir()
	const nonsense = "blorp the zingle"
	for _, tt := range []struct {
		name   string
		args   []string
		schema string // a component of /openapi.json; "[X]" a list of X; "" only no null
		empty  string // the path of the list that must be []
	}{
		{"select", []string{"select", "--json", nonsense}, "Selection", "$.tools"},
		{"find", []string{"find", "--json", nonsense}, "FindResult", "$.matches"},
		{"cards", []string{"cards", "--json", "--source", "nothing"}, "[Card]", "$"},
		{"trace", []string{"trace", "--json"}, "[TraceRecord]", "$"},
		{"session list", []string{"session", "list", "--json"}, "[Session]", "$"},
		{"session start", []string{"session", "start", "--json", "--id", "e1", nonsense}, "Session", "$.selected_tools"},
		{"session find", []string{"session", "find", "--json", "e1", nonsense}, "Session", "$.find.added"},
		{"session show", []string{"session", "show", "--json", "e1"}, "Session", "$.exposed_tools"},
		{"route", []string{"route", "--root", emptyRoot, "--no-flow", "--json", nonsense}, "", "$.matched"},
		{"capabilities", []string{"capabilities", "--root", emptyRoot, "--json"}, "CapabilityMap", "$.unassigned"},
		{"approve --list", []string{"approve", "--list", "--json", "--index", t.TempDir()}, "", "$"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			out, errOut, code := runEnv(t, env, tt.args...)
			if code != 0 {
				t.Fatalf("exit %d: %s", code, errOut)
			}
			var v any
			if err := json.Unmarshal([]byte(out), &v); err != nil {
				t.Fatalf("%v in %s", err, out)
			}
			if n := nulls(v, "$"); len(n) > 0 {
				t.Errorf("null at %s:\n%s", strings.Join(n, ", "), out)
			}
			if got := at(v, tt.empty); fmt.Sprint(got) != "[]" || got == nil {
				t.Errorf("%s = %v, want []", tt.empty, got)
			}
			if tt.schema == "" {
				return
			}
			name, list := strings.CutPrefix(strings.TrimSuffix(tt.schema, "]"), "[")
			s, err := c.Component(name)
			if err != nil {
				t.Fatal(err)
			}
			if list {
				s = apischema.ArrayOf(s)
			}
			for _, p := range c.Check(s, []byte(out)) {
				t.Error(p)
			}
		})
	}
}

// at returns the value at a path of object keys ($.a.b).
func at(v any, path string) any {
	for _, k := range strings.Split(strings.TrimPrefix(strings.TrimPrefix(path, "$"), "."), ".") {
		if k == "" {
			continue
		}
		m, _ := v.(map[string]any)
		v = m[k]
	}
	return v
}
